#include "worker/agent/bus_validate.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/host_list.h"
#include "worker/agent/rsh_wire.h"
#include "worker/progress/progress_wire.h"

namespace podsched::agent {
namespace {

constexpr size_t kMaxHosts = 4096;
constexpr int32_t kMaxRanksPerHost = 1024;
constexpr size_t kMaxStrings = 4096;
constexpr int32_t kMaxGraceSeconds = 24 * 3600;

Rejection Invalid(std::string message) { return {"invalid", std::move(message)}; }

bool ValidEnvName(const std::string& name) {
  if (name.empty() || name.size() > 256) return false;
  if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

std::optional<Rejection> ParseEnvelope(std::string_view bytes, bus::Envelope& out) {
  if (bytes.size() > kMaxBusMessage) {
    return Rejection{"oversized", "message of " + std::to_string(bytes.size()) + " bytes"};
  }
  if (!out.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Rejection{"malformed", "not a bus Envelope"};
  }
  if (out.body_case() == bus::Envelope::BODY_NOT_SET) {
    return Rejection{"malformed", "Envelope without a body"};
  }
  return std::nullopt;
}

namespace {

// Absolute, no empty, `.` or `..` component, no trailing '/' (except "/" itself).
bool NormalAbsolute(std::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  if (path == "/") return true;
  if (path.back() == '/') return false;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

bool PathIsWithin(std::string_view path, std::string_view root) {
  if (!NormalAbsolute(path) || !NormalAbsolute(root)) return false;
  if (root == "/") return true;
  return path == root || (path.starts_with(root) && path[root.size()] == '/');
}

std::optional<Rejection> ValidateLaunch(const bus::Launch& l, const std::vector<int32_t>& my_hosts,
                                        const LaunchPolicy& policy) {
  if (l.job().job_id() <= 0 || l.job().epoch() <= 0) return Invalid("job id and epoch must be > 0");
  if (l.first_host() < 0 || l.first_host() > kMaxFleetHostId) {
    return Invalid("first_host " + std::to_string(l.first_host()) + " out of range");
  }
  if (l.hosts().empty() || static_cast<size_t>(l.hosts_size()) > kMaxHosts) {
    return Invalid("Launch needs 1.." + std::to_string(kMaxHosts) + " hosts");
  }
  std::set<int32_t> seen;
  bool mine = false;
  for (int32_t h : l.hosts()) {
    if (h < 0 || h > kMaxFleetHostId || !seen.insert(h).second) {
      return Invalid("Launch host " + std::to_string(h) + " out of range or repeated");
    }
    // The agent's hosts are its pod's ids; the Launch's are fleet ids (bus.proto).
    mine = mine || std::binary_search(my_hosts.begin(), my_hosts.end(), h - l.first_host());
  }
  if (!mine) return Rejection{"unknown_host", "Launch names none of this agent's hosts"};
  if (l.ranks_per_host() < 1 || l.ranks_per_host() > kMaxRanksPerHost) {
    return Invalid("ranks_per_host must be 1.." + std::to_string(kMaxRanksPerHost));
  }
  if (l.command().empty() || l.command(0).empty() ||
      static_cast<size_t>(l.command_size()) > kMaxStrings) {
    return Invalid("Launch without a command");
  }
  for (const auto& arg : l.command()) {
    if (arg.find('\0') != std::string::npos) return Invalid("NUL byte in the command");
  }
  if (static_cast<size_t>(l.env_size()) > kMaxStrings) return Invalid("too many env variables");
  for (const auto& [name, value] : l.env()) {
    if (!ValidEnvName(name)) return Invalid("env name '" + name.substr(0, 64) + "' is not valid");
    if (value.find('\0') != std::string::npos) return Invalid("NUL byte in env " + name);
  }
  // podsched's Launch env carries the job contract; `podworker rsh` reads these two from
  // mpirun's environment to name its request.
  for (const auto& [name, want] : {std::pair<const char*, int64_t>{"POD_JOB_ID", l.job().job_id()},
                                   {"POD_EPOCH", l.job().epoch()}}) {
    auto it = l.env().find(name);
    if (it == l.env().end() || it->second != std::to_string(want)) {
      return Invalid(std::string("Launch env ") + name + " must be " + std::to_string(want) +
                     " (the Launch's job and epoch)");
    }
  }
  for (int32_t h : l.hosts()) {
    auto it = l.rsh_endpoints().find(h);
    if (it == l.rsh_endpoints().end()) {
      return Invalid("no rsh endpoint for host " + std::to_string(h));
    }
    if (auto ep = ParseTcpEndpoint(it->second); !ep) return Invalid(ep.error().message());
  }
  const std::string& token = l.rsh_token();
  if (token.size() < 16 || token.size() > 128 ||
      !std::all_of(token.begin(), token.end(), [](char c) { return std::isxdigit(c); })) {
    return Invalid("rsh_token must be 16..128 hex digits");
  }
  if (l.grace_seconds() < 0 || l.grace_seconds() > kMaxGraceSeconds) {
    return Invalid("grace_seconds out of range");
  }
  if (l.log_url().size() > 4096) return Invalid("log_url too long");
  if (const std::string& ckpt = l.checkpoint_root(); !ckpt.empty()) {
    if (!NormalAbsolute(ckpt) || ckpt.size() > 4096) {
      return Invalid("checkpoint_root must be an absolute path in normal form");
    }
    auto directly_below = [&](const std::string& root) {
      return PathIsWithin(ckpt, root) && ckpt.size() > root.size() &&
             ckpt.find('/', root.size() + 1) == std::string::npos;
    };
    if (!policy.checkpoint_roots.empty() &&
        std::none_of(policy.checkpoint_roots.begin(), policy.checkpoint_roots.end(),
                     directly_below)) {
      std::string roots;
      for (const std::string& r : policy.checkpoint_roots) roots += (roots.empty() ? "" : ", ") + r;
      return Invalid("checkpoint_root " + ckpt + " is not a directory directly below this "
                     "agent's --checkpoint-root " + roots);
    }
  }
  if (const std::string& url = l.log_url(); !url.empty()) {
    // A file:// path without `..` (trailing or doubled slashes from a hand-written config
    // are harmless; climbing out is not).
    constexpr std::string_view kFile = "file://";
    if (url.starts_with(kFile)) {
      const std::string_view path = std::string_view(url).substr(kFile.size());
      if (!path.starts_with("/") || path == ".." || path.ends_with("/..") ||
          path.find("/../") != std::string_view::npos) {
        return Invalid("log_url must be an absolute file:// path without ..");
      }
    }
    const std::string& root = policy.log_root;
    if (!root.empty() && !(url == root || (url.starts_with(root) &&
                                           (root.back() == '/' || url[root.size()] == '/')))) {
      return Invalid("log_url " + url + " is outside this agent's --log-root " + root);
    }
  }
  return std::nullopt;
}

bool IsReservedEnvName(std::string_view name) {
  return name.starts_with("PODWORKER_") || name.starts_with("POD_RSH_") || name == "POD_HOST" ||
         name == "POD_PROGRESS_ENDPOINT" || name == progress::kProgressKeyVariable ||
         name == "POD_PREEMPT_FILE";
}

std::optional<Rejection> ValidateJobControl(const bus::JobEpoch& job,
                                            std::optional<int64_t> running_epoch) {
  if (!running_epoch) {
    return Rejection{"unknown_job", "job " + std::to_string(job.job_id()) + " does not run here"};
  }
  if (job.epoch() != *running_epoch) {
    return Rejection{"stale_epoch", "job " + std::to_string(job.job_id()) + " epoch " +
                                        std::to_string(job.epoch()) + " (running: " +
                                        std::to_string(*running_epoch) + ")"};
  }
  return std::nullopt;
}

}  // namespace podsched::agent
