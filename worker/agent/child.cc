#include "worker/agent/child.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
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
  int started_w = -1;  // close-on-exec, kept open until exec: the parent waits for its end
};

[[noreturn, gnu::no_sanitize_address]] void ChildFails(int fd, const char* msg, int code) {
  (void)!write(fd, msg, std::strlen(msg));
  _exit(code);
}

// The child, between clone and exec. It shares the agent's memory while the calling thread
// waits for `started_w` to close: no allocation, no locks, nothing written but its own stack,
// the plan's script_argv and errno (the calling thread's, which reads none while it waits).
// Credentials change by raw system calls: glibc's setgroups, setgid and
// setuid would ask every thread of the agent to change too (POSIX credentials are per process)
// and this child is not a process glibc knows of. All signals are blocked on entry (the parent
// blocked them), so no handler of the agent's runs here.
// Not instrumented by AddressSanitizer: its frames would be the calling thread's, on another stack.
[[gnu::no_sanitize_address]] int ChildMain(void* arg) {
  const ChildPlan& p = *static_cast<const ChildPlan*>(arg);
  // First, every inherited fd above 2 but the plan's own: among them are other threads' pipes
  // of this kind, whose parents wait for the last copy to close (this child may hang in chdir).
  int keep[3] = {p.stdout_w, p.stderr_w, p.started_w};
  for (int i = 0; i < 2; ++i) {  // sorted by hand: no library code on this stack
    for (int j = 0; j < 2 - i; ++j) {
      if (keep[j] > keep[j + 1]) std::swap(keep[j], keep[j + 1]);
    }
  }
  unsigned next = 3;
  for (int fd : keep) {
    if (fd < static_cast<int>(next)) continue;
    if (static_cast<unsigned>(fd) > next) close_range(next, static_cast<unsigned>(fd) - 1, 0);
    next = static_cast<unsigned>(fd) + 1;
  }
  close_range(next, ~0U, 0);
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
  const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);  // dup2 clears it on 0-2
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
  // What is left above 2 (the pipes' write ends, /dev/null) is close-on-exec: `started_w`
  // closes at exec (or exit), which ends the parent's wait.
  errno = ENOENT;  // no candidate at all
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
  // As execvp's caller would say it (strerrordesc_np: no locale, no lock, no allocation).
  const char* why = strerrordesc_np(errno);
  const char* program = p.argv[0];
  for (const char* part : {"podworker: cannot run '", program, "': ", why ? why : "error"}) {
    (void)!write(2, part, std::strlen(part));
  }
  ChildFails(2, "\n", 127);
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

// What a child borrows from the agent until it execs: its stack, its plan and every byte the
// plan points to (copies: the caller's may be gone before a child that missed its deadline
// ends).
struct ChildStart {
  static constexpr size_t kStackSize = 64 << 10;  // only system calls through libc: a few KiB
  std::unique_ptr<char[]> stack{new char[kStackSize]};
  std::vector<std::string> argv, env, programs;
  std::string cwd;
  std::vector<gid_t> groups;
  std::vector<char*> argv_ptrs, env_ptrs;
  std::vector<const char*> program_ptrs, script_argv;
  ChildPlan plan;
  int started_r = -1;  // read end of the plan's started_w
  ~ChildStart() {
    if (started_r >= 0) close(started_r);
  }
  char* StackTop() const {
    const auto top = reinterpret_cast<uintptr_t>(stack.get() + kStackSize);
    return reinterpret_cast<char*>(top & ~uintptr_t{15});
  }
};

// Children that missed their deadline (killed, but maybe still in a system call that does not
// answer): their ChildStart is kept until each has exec'd or ended, which closes started_w.
class AbandonedStarts {
 public:
  void Keep(std::unique_ptr<ChildStart> start) {
    std::lock_guard lock(mu_);
    starts_.push_back(std::move(start));
  }
  void ReleaseEnded() {
    std::lock_guard lock(mu_);
    std::erase_if(starts_, [](const std::unique_ptr<ChildStart>& s) {
      pollfd pfd{s->started_r, POLLIN, 0};
      return poll(&pfd, 1, 0) == 1;  // POLLHUP: its end of the pipe is closed
    });
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<ChildStart>> starts_;
};

AbandonedStarts& Abandoned() {
  static auto* abandoned = new AbandonedStarts;  // never destroyed: a child may outlive exit
  return *abandoned;
}

// Waits until `fd`'s write end is closed everywhere; false at the deadline. errno is not read:
// the child writes the calling thread's errno until it execs.
bool WaitForHangUp(int fd, std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (true) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd pfd{fd, POLLIN, 0};
    const int n = poll(&pfd, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (n == 1) return true;
    if (n == 0 && left.count() <= 0) return false;
    if (n == 0) continue;                                         // woken early
    if (std::chrono::steady_clock::now() >= until) return false;  // an interrupted poll
  }
}

}  // namespace

Result<ChildProcess> SpawnChild(const std::vector<std::string>& argv,
                                const std::vector<std::string>& env, const JobAccount* as,
                                const std::string& cwd, ChildOutput output,
                                std::chrono::milliseconds start_deadline) {
  if (argv.empty()) return InvalidArgument("empty argv");
  Abandoned().ReleaseEnded();
  int out[2] = {-1, -1}, err[2] = {-1, -1}, started[2] = {-1, -1};
  const auto close_valid = [](std::initializer_list<int> fds) {
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
  };
  const auto pipe_error = [&] {
    const int e = errno;
    close_valid({out[0], out[1], err[0], err[1], started[0], started[1]});
    return Internal(std::string("pipe: ") + std::strerror(e));
  };
  if (output == ChildOutput::kPipes && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)) {
    return pipe_error();
  }
  if (pipe2(started, O_CLOEXEC) != 0) return pipe_error();
  if (started[1] < 3) {  // the child's fds 0-2 are replaced before exec: this one must outlive them
    const int moved = fcntl(started[1], F_DUPFD_CLOEXEC, 3);
    if (moved < 0) return pipe_error();
    close(started[1]);
    started[1] = moved;
  }
  // Everything the child needs is prepared here, in memory that outlives this call if the
  // child misses its deadline: it may only make system calls.
  auto start = std::make_unique<ChildStart>();
  start->started_r = started[0];
  start->argv = argv;
  start->env = env;
  for (auto& a : start->argv) start->argv_ptrs.push_back(a.data());
  start->argv_ptrs.push_back(nullptr);
  for (auto& e : start->env) start->env_ptrs.push_back(e.data());
  // The job's tag first: the process table reads only the head of a process's environment
  // (kMaxEnvironRead), and a job's own variables may be large.
  std::stable_partition(start->env_ptrs.begin(), start->env_ptrs.end(), [](const char* e) {
    return std::string_view(e).starts_with(std::string(kTagVariable) + "=");
  });
  start->env_ptrs.push_back(nullptr);
  start->programs = ProgramCandidates(argv[0], env);
  for (const std::string& program : start->programs) {
    start->program_ptrs.push_back(program.c_str());
  }
  start->script_argv = {"/bin/sh", nullptr};
  for (size_t i = 1; i < start->argv.size(); ++i) {
    start->script_argv.push_back(start->argv[i].c_str());
  }
  start->script_argv.push_back(nullptr);
  start->cwd = cwd;

  ChildPlan& plan = start->plan;
  plan.argv = start->argv_ptrs.data();
  plan.envp = start->env_ptrs.data();
  plan.programs = start->program_ptrs.data();
  plan.num_programs = start->program_ptrs.size();
  plan.script_argv = start->script_argv.data();
  plan.cwd = start->cwd.empty() ? nullptr : start->cwd.c_str();
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
    start->groups = as->groups;
    plan.groups = start->groups.data();
    plan.num_groups = start->groups.size();
    plan.gid = as->gid;
    plan.uid = as->uid;
  }
  plan.parent = getpid();
  plan.stdout_w = out[1];
  plan.stderr_w = err[1];
  plan.started_w = started[1];

  // Not fork: copying the agent's page tables, and the copy-on-write faults and cross-CPU TLB
  // flushes that follow in its threads, cost 10-11 ms of CPU per child against 2.3-2.6 ms this
  // way (bench_spawn, docs/benchmarks.md). The child borrows the memory until it execs, as
  // posix_spawn's does; posix_spawn itself cannot switch the account, set parent-death or the
  // OOM score. Not CLONE_VFORK, which would hold this thread until the exec however long the
  // child's chdir or exec takes: a home directory on a file server that stopped answering
  // would stop the agent's poll thread, and with it its heartbeats. This thread waits for the
  // exec with a deadline instead.
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t pid = clone(ChildMain, start->StackTop(), CLONE_VM | SIGCHLD, &plan);
  const int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  close_valid({out[1], err[1], started[1]});
  if (pid < 0) {
    close_valid({out[0], err[0]});
    return Internal(std::string("clone: ") + std::strerror(clone_errno));
  }
  if (!WaitForHangUp(start->started_r, start_deadline)) {
    // Killed now, or as soon as the call it is stuck in returns: the pending SIGKILL is taken
    // on the way back to user space, so it runs none of its code again (nor writes this
    // thread's errno). Its memory is kept until it has gone.
    kill(pid, SIGKILL);
    Abandoned().Keep(std::move(start));
    close_valid({out[0], err[0]});
    return Unavailable("the child (" + argv[0] + ") did not reach exec within " +
                       std::to_string(start_deadline.count()) + " ms: killed (is its working " +
                       "directory " +
                       (cwd.empty() ? std::string("(the agent's)") : "'" + cwd + "'") +
                       " or its program on a file system that does not answer?)");
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
