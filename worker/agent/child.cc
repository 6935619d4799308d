#include "worker/agent/child.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

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

namespace {

// Everything the child of SpawnChild reads between clone and exec, prepared by the parent: the
// child runs in the agent's memory (CLONE_VM) and may only make system calls there.
struct ChildPlan {
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  // execvp's candidates for argv[0], in PATH order, resolved at exec time (after the chdir).
  const char* const* programs = nullptr;
  size_t num_programs = 0;
  // {"/bin/sh", <program>, argv[1..], nullptr}: a program the kernel cannot run (ENOEXEC) is
  // handed to the shell, as execvp does. The child writes slot 1.
  const char** script_argv = nullptr;
  const char* cwd = nullptr;  // none: the agent's
  bool lower_memlock = false;
  rlimit memlock{};
  bool switch_user = false;
  const gid_t* groups = nullptr;
  size_t num_groups = 0;
  gid_t gid = 0;
  uid_t uid = 0;
  pid_t parent = 0;
  int stdout_w = -1;  // -1: /dev/null
  int stderr_w = -1;
};

[[noreturn, gnu::no_sanitize_address]] void ChildFails(int fd, const char* msg, int code) {
  (void)!write(fd, msg, std::strlen(msg));
  _exit(code);
}

// The child, between clone and exec. It shares the agent's memory while the calling thread
// waits (CLONE_VFORK): no allocation, no locks, nothing written but its own stack and the
// plan's script_argv. Credentials change by raw system calls: glibc's setgroups, setgid and
// setuid would ask every thread of the agent to change too (POSIX credentials are per process)
// and this child is not a process glibc knows of. All signals are blocked on entry (the parent
// blocked them), so no handler of the agent's runs here.
// Not instrumented by AddressSanitizer: its frames would be the calling thread's, on another stack.
[[gnu::no_sanitize_address]] int ChildMain(void* arg) {
  const ChildPlan& p = *static_cast<const ChildPlan*>(arg);
  setpgid(0, 0);
  // The agent protects itself from the OOM killer (podworker_main.cc); its children go back
  // to the default, before the switch of account while we may still write it.
  if (const int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC); oom >= 0) {
    (void)!write(oom, "0", 1);
    close(oom);
  }
  if (p.lower_memlock) setrlimit(RLIMIT_MEMLOCK, &p.memlock);
  if (p.switch_user) {
    if (syscall(SYS_setgroups, p.num_groups, p.groups) != 0 || syscall(SYS_setgid, p.gid) != 0 ||
        syscall(SYS_setuid, p.uid) != 0) {
      ChildFails(p.stderr_w, "podworker: cannot switch to the job's Unix account\n", 126);
    }
  }
  if (p.cwd != nullptr && chdir(p.cwd) != 0) (void)!chdir("/");
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != p.parent) _exit(127);  // the agent died before prctl took effect
  // Every disposition back to the default: exec resets the agent's handlers, not what it (or
  // whoever started it: nohup, a shell's background job) ignores.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  const int devnull = open("/dev/null", O_RDWR);
  dup2(devnull, 0);
  // dup2 onto itself keeps close-on-exec; an agent started with fd 1 or 2 closed gets a pipe there.
  for (auto [from, to] : {std::pair{p.stdout_w, 1}, std::pair{p.stderr_w, 2}}) {
    if (from < 0) {
      dup2(devnull, to);
    } else if (from == to) {
      fcntl(to, F_SETFD, 0);
    } else {
      dup2(from, to);
    }
  }
  close_range(3, ~0U, 0);
  // execvp's search, over the candidates the parent listed: a candidate that is missing or not
  // executable by this account is passed over; one the kernel cannot run goes to the shell.
  for (size_t i = 0; i < p.num_programs; ++i) {
    execve(p.programs[i], p.argv, p.envp);
    if (errno == ENOEXEC) {
      p.script_argv[1] = p.programs[i];
      execve(p.script_argv[0], const_cast<char* const*>(p.script_argv), p.envp);
      break;
    }
    if (errno != EACCES && errno != ENOENT && errno != ENOTDIR && errno != ESTALE &&
        errno != ENODEV && errno != ETIMEDOUT) {
      break;
    }
  }
  ChildFails(2, "podworker: cannot exec the command\n", 127);
}

// Where execvp would look for `file` given the child's environment `env`: `file` itself when it
// names a path, else each directory of the child's PATH (glibc's default without one; an empty
// entry is the working directory).
std::vector<std::string> ProgramCandidates(const std::string& file,
                                           const std::vector<std::string>& env) {
  if (file.empty()) return {};
  if (file.find('/') != std::string::npos) return {file};
  std::string path = "/bin:/usr/bin";
  for (const std::string& e : env) {
    if (e.starts_with("PATH=")) {
      path = e.substr(5);
      break;
    }
  }
  std::vector<std::string> out;
  size_t from = 0;
  while (true) {
    const size_t colon = path.find(':', from);
    const std::string dir = path.substr(from, colon == std::string::npos ? colon : colon - from);
    out.push_back(dir.empty() ? file : dir + "/" + file);
    if (colon == std::string::npos) break;
    from = colon + 1;
  }
  return out;
}

// The stack the child of SpawnChild runs on, one per calling thread (the thread waits while
// its child runs on it). The child makes only system calls through libc: a few KiB at most.
char* ChildStackTop() {
  constexpr size_t kSize = 64 << 10;
  thread_local std::unique_ptr<char[]> stack(new char[kSize]);
  const auto top = reinterpret_cast<uintptr_t>(stack.get() + kSize);
  return reinterpret_cast<char*>(top & ~uintptr_t{15});
}

}  // namespace

Result<ChildProcess> SpawnChild(const std::vector<std::string>& argv,
                                const std::vector<std::string>& env, const JobAccount* as,
                                const std::string& cwd, ChildOutput output) {
  if (argv.empty()) return InvalidArgument("empty argv");
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (output == ChildOutput::kPipes) {
    if (pipe2(out, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
    if (pipe2(err, O_CLOEXEC) != 0) {
      close(out[0]);
      close(out[1]);
      return Internal(std::string("pipe: ") + std::strerror(errno));
    }
  }
  const auto close_valid = [](std::initializer_list<int> fds) {
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
  };
  // Everything the child needs is prepared here: it may only make system calls.
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
  const std::vector<std::string> programs = ProgramCandidates(argv[0], env);
  std::vector<const char*> program_ptrs;
  for (const std::string& program : programs) program_ptrs.push_back(program.c_str());
  std::vector<const char*> script_argv = {"/bin/sh", nullptr};
  for (size_t i = 1; i < argv.size(); ++i) script_argv.push_back(argv[i].c_str());
  script_argv.push_back(nullptr);

  ChildPlan plan;
  plan.argv = cargv.data();
  plan.envp = cenv.data();
  plan.programs = program_ptrs.data();
  plan.num_programs = program_ptrs.size();
  plan.script_argv = script_argv.data();
  plan.cwd = cwd.empty() ? nullptr : cwd.c_str();
  // What a job may lock in memory: lowered to kChildMemlockBytes, never raised (the agent's
  // unit once gave LimitMEMLOCK=infinity to every job, which let one job pin the machine's RAM
  // and take the agent down with it; audit M12).
  plan.lower_memlock =
      getrlimit(RLIMIT_MEMLOCK, &plan.memlock) == 0 &&
      (plan.memlock.rlim_cur > kChildMemlockBytes || plan.memlock.rlim_max > kChildMemlockBytes);
  plan.memlock.rlim_cur = std::min<rlim_t>(plan.memlock.rlim_cur, kChildMemlockBytes);
  plan.memlock.rlim_max = std::min<rlim_t>(plan.memlock.rlim_max, kChildMemlockBytes);
  plan.switch_user = as != nullptr && geteuid() == 0;
  if (plan.switch_user) {
    plan.groups = as->groups.data();
    plan.num_groups = as->groups.size();
    plan.gid = as->gid;
    plan.uid = as->uid;
  }
  plan.parent = getpid();
  plan.stdout_w = out[1];
  plan.stderr_w = err[1];

  // Not fork: copying the agent's page tables, and the copy-on-write faults and cross-CPU TLB
  // flushes that follow in its threads, cost 10-11 ms of CPU per child against 2.3-2.6 ms this
  // way (bench_spawn, docs/benchmarks.md). The child borrows the memory until it execs, as
  // posix_spawn's does; posix_spawn itself cannot switch the account, set parent-death or the
  // OOM score.
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t pid = clone(ChildMain, ChildStackTop(), CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  const int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  close_valid({out[1], err[1]});
  if (pid < 0) {
    close_valid({out[0], err[0]});
    return Internal(std::string("clone: ") + std::strerror(clone_errno));
  }
  // The child made its own process group before it exec'd, and this thread waited for that: no
  // window where a kill(-pid) misses it.
  if (output == ChildOutput::kPipes) {
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
  }
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
