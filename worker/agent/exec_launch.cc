#include "worker/agent/exec_launch.h"

#include <map>
#include <optional>

#include "worker/agent/exit_verdict.h"
#include "worker/agent/mpirun_argv.h"
#include "worker/agent/rank_env.h"

namespace podsched::agent {

std::vector<RankStart> PlanRanks(const std::vector<int32_t>& hosts, int ranks_per_host) {
  std::vector<RankStart> out;
  for (size_t i = 0; i < hosts.size(); ++i) {
    for (int local = 0; local < ranks_per_host; ++local) {
      out.push_back({hosts[i], static_cast<int>(i) * ranks_per_host + local});
    }
  }
  return out;
}

std::string ShellQuote(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

Result<LaunchArgs> ParseLaunchArgs(const std::vector<std::string>& args,
                                   const std::string& self) {
  LaunchArgs out{self, {}};
  size_t i = 0;
  if (i < args.size() && args[i] == "--rsh") {
    if (i + 1 >= args.size() || args[i + 1].empty() || args[i + 1].front() != '/') {
      return InvalidArgument("--rsh needs the absolute path of the rsh client");
    }
    out.rsh_binary = args[i + 1];
    i += 2;
  }
  if (i < args.size() && args[i] == "--") ++i;
  out.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (out.command.empty() || out.command.front().empty()) {
    return InvalidArgument("usage: podworker launch [--rsh PATH] -- COMMAND [ARGS...]");
  }
  return out;
}

std::vector<std::string> RankArgv(const std::string& rank_binary, const RankStart& start,
                                  const std::vector<std::string>& command) {
  std::vector<std::string> argv{rank_binary, "rank", "--rank", std::to_string(start.rank), "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::vector<std::string> LocalRankEnvironment(const std::vector<std::string>& launcher_env) {
  std::vector<std::string> env;
  for (const std::string& entry : launcher_env) {
    if (!entry.starts_with("POD_RSH_")) env.push_back(entry);
  }
  return env;
}

Result<std::vector<std::string>> LocalRankProgramEnvironment(
    int rank, const std::vector<std::string>& local_env) {
  std::map<std::string, size_t> at;  // name -> its entry in `env`
  std::vector<std::string> env = local_env;
  for (size_t i = 0; i < env.size(); ++i) {
    const size_t eq = env[i].find('=');
    if (eq != std::string::npos) at[env[i].substr(0, eq)] = i;
  }
  const EnvLookup lookup = [&](const std::string& name) -> std::optional<std::string> {
    const auto it = at.find(name);
    if (it == at.end()) return std::nullopt;
    return env[it->second].substr(name.size() + 1);
  };
  auto id = RankFromIndex(rank, lookup);
  if (!id) return std::unexpected(id.error());
  for (auto& [name, value] : RankEnv(*id, lookup)) {
    std::string entry = name + "=" + value;
    if (const auto it = at.find(name); it != at.end()) {
      env[it->second] = std::move(entry);
    } else {
      env.push_back(std::move(entry));
    }
  }
  return env;
}

std::vector<std::string> RankRshArgv(const std::string& rsh_binary,
                                     const std::string& rank_binary, const RankStart& start,
                                     const std::vector<std::string>& command) {
  std::vector<std::string> argv{rsh_binary, "rsh", MpiHostName(start.host)};
  for (const std::string& w : RankArgv(rank_binary, start, command)) {
    argv.push_back(ShellQuote(w));
  }
  return argv;
}

bool RankExits::Exited(int rank, int status) {
  if (rank < 0 || static_cast<size_t>(rank) >= status_.size() || status_[rank]) return false;
  status_[rank] = status;
  ++exited_;
  if (status == kPreemptedExitCode) preempted_ = true;
  if (status == 0 || status == kPreemptedExitCode || first_failure_) return false;
  first_failure_ = {rank, status};
  return true;
}

int RankExits::ExitCode() const {
  if (first_failure_) return first_failure_->second;
  return preempted_ ? kPreemptedExitCode : 0;
}

std::string RankExits::FailureMessage() const {
  if (!first_failure_) return "";
  const auto [rank, status] = *first_failure_;
  return "rank " + std::to_string(rank) +
         (status > 128 && status < 160 ? " was killed by signal " + std::to_string(status - 128)
                                       : " exited " + std::to_string(status));
}

}  // namespace podsched::agent
