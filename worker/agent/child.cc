#include "worker/agent/child.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>

#include "worker/agent/proc_text.h"

extern char** environ;

namespace podsched::agent {

std::vector<std::string> EnvironmentWith(const std::vector<std::string>& overrides) {
  std::map<std::string, std::string> vars;
  auto add = [&](const std::string& kv) {
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv;
  };
  for (char** e = environ; *e != nullptr; ++e) add(*e);
  for (const auto& kv : overrides) add(kv);
  std::vector<std::string> out;
  for (auto& [name, kv] : vars) out.push_back(std::move(kv));
  return out;
}

Result<ChildProcess> SpawnChild(const std::vector<std::string>& argv,
                                const std::vector<std::string>& env, const JobAccount* as,
                                const std::string& cwd) {
  if (argv.empty()) return InvalidArgument("empty argv");
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return Internal(std::string("pipe: ") + std::strerror(errno));
  }
  // Everything the child needs is prepared before fork: only async-signal-safe calls after.
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  // The job's tag first: the process table reads only the head of a process's environment
  // (kMaxEnvironRead), and a job's own variables may be large.
  std::stable_partition(cenv.begin(), cenv.end(), [](const char* e) {
    return std::string_view(e).starts_with(std::string(kTagVariable) + "=");
  });
  cenv.push_back(nullptr);
  // What a job may lock in memory: lowered to kChildMemlockBytes, never raised (the agent's
  // unit once gave LimitMEMLOCK=infinity to every job, which let one job pin the machine's RAM
  // and take the agent down with it; audit M12).
  rlimit memlock{};
  const bool lower_memlock = getrlimit(RLIMIT_MEMLOCK, &memlock) == 0 &&
                             (memlock.rlim_cur > kChildMemlockBytes ||
                              memlock.rlim_max > kChildMemlockBytes);
  memlock.rlim_cur = std::min<rlim_t>(memlock.rlim_cur, kChildMemlockBytes);
  memlock.rlim_max = std::min<rlim_t>(memlock.rlim_max, kChildMemlockBytes);
  const pid_t parent = getpid();
  const bool switch_user = as != nullptr && geteuid() == 0;
  const std::vector<gid_t> groups = switch_user ? as->groups : std::vector<gid_t>{};

  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    return Internal(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    // The agent protects itself from the OOM killer (podworker_main.cc); its children go back
    // to the default, before the switch of account while we may still write it.
    if (const int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC); oom >= 0) {
      (void)!write(oom, "0", 1);
      close(oom);
    }
    if (lower_memlock) setrlimit(RLIMIT_MEMLOCK, &memlock);
    if (switch_user) {
      if (setgroups(groups.size(), groups.data()) != 0 || setgid(as->gid) != 0 ||
          setuid(as->uid) != 0) {
        const char* msg = "podworker: cannot switch to the job's Unix account\n";
        (void)!write(err[1], msg, std::strlen(msg));
        _exit(126);
      }
    }
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) (void)!chdir("/");
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the agent died before prctl took effect
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGCHLD, SIGHUP}) signal(sig, SIG_DFL);
    const int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    close_range(3, ~0U, 0);
    // execvpe searches PATH of the *current* environment; set it to the child's first.
    environ = cenv.data();
    execvp(cargv[0], cargv.data());
    const char* msg = "podworker: cannot exec the command\n";
    (void)!write(2, msg, std::strlen(msg));
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent: no window where a kill(-pid) misses the child
  close(out[1]);
  close(err[1]);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  return ChildProcess{pid, out[0], err[0]};
}

std::string SelfPath(const char* argv0) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return p.string();
  return std::filesystem::absolute(argv0, ec).string();
}

namespace {

// `name` beside `agent_path` when it is an executable regular file there.
std::optional<std::string> ExecutableBeside(const std::string& agent_path, const char* name) {
  const std::filesystem::path path = std::filesystem::path(agent_path).parent_path() / name;
  std::error_code ec;
  const bool found =
      std::filesystem::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
  return found ? std::optional(path.string()) : std::nullopt;
}

}  // namespace

std::string HelperPath(const std::string& agent_path) {
  return ExecutableBeside(agent_path, "podworker-helper").value_or(agent_path);
}

std::string RankBinaryPath(const std::string& agent_path) {
  if (auto rank = ExecutableBeside(agent_path, "podworker-rank")) return *rank;
  return HelperPath(agent_path);
}
}  // namespace podsched::agent
