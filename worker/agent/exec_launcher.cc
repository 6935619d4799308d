// `podworker launch` and `podworker rank` (exec_launch.h, rank_env.h): the processes side.
#include "worker/agent/exec_launcher.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "common/host_list.h"
#include "common/rank_tag.h"
#include "worker/agent/child.h"
#include "worker/agent/exec_launch.h"
#include "worker/agent/exit_verdict.h"
#include "worker/agent/mpirun_argv.h"
#include "worker/agent/rank_env.h"

namespace podsched::agent {
namespace {

std::optional<std::string> GetEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v == nullptr ? std::nullopt : std::optional<std::string>(v);
}

int Fail(const char* who, const std::string& message) {
  std::fprintf(stderr, "podworker %s: %s\n", who, message.c_str());
  return 127;
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// One rank's process (its rsh client, or the rank itself on the launcher's own host): its
// pipes, what is unfinished on each, its status once reaped.
struct RankProcess {
  RankStart start;
  bool local = false;  // started here, without rsh (LocalRankEnvironment)
  pid_t pid = -1;
  int fd[2] = {-1, -1};       // stdout, stderr
  int pidfd = -1;             // readable once the process has exited (pidfd_open)
  std::string partial[2];
  bool reaped = false;
};

// One checkpoint directory per job, kept over its epochs; made by the launcher for its own
// host's ranks and by `podworker rank` for the others', with the job's own rights (the agent,
// maybe root, never walks paths below the user's storage prefix).
void CreateCheckpointDir(const char* who) {
  const char* dir = std::getenv("POD_CHECKPOINT_DIR");
  if (dir == nullptr || *dir == '\0') return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "podworker %s: cannot create POD_CHECKPOINT_DIR %s: %s\n", who, dir,
                 ec.message().c_str());
  }
}

// Whole lines of a rank's stream, tagged, each with one write (so lines never tear).
void Relay(RankProcess& r, int stream, std::string_view bytes, bool end) {
  std::string& partial = r.partial[stream];
  partial.append(bytes);
  std::string out;
  size_t pos = 0, nl;
  while ((nl = partial.find('\n', pos)) != std::string::npos) {
    out += FormatRankTag(r.start.rank, stream == 1);
    out.append(partial, pos, nl + 1 - pos);
    pos = nl + 1;
  }
  partial.erase(0, pos);
  if ((end || partial.size() >= RankLineJoiner::kMaxPartial) && !partial.empty()) {
    out += FormatRankTag(r.start.rank, stream == 1) + partial + "\n";
    partial.clear();
  }
  if (!out.empty()) WriteAll(stream == 0 ? 1 : 2, out);
}

}  // namespace

int ExecLauncherMain(const std::string& self, const std::vector<std::string>& args) {
  signal(SIGPIPE, SIG_IGN);
  auto launch = ParseLaunchArgs(args, self);
  if (!launch) return Fail("launch", launch.error().message());
  const std::vector<std::string>& command = launch->command;
  const auto hosts_env = GetEnv(kLaunchHostsVariable);
  const auto per_host_env = GetEnv("LOCAL_WORLD_SIZE");
  if (!hosts_env || !per_host_env) {
    return Fail("launch", std::string(kLaunchHostsVariable) +
                              " and LOCAL_WORLD_SIZE must be set (podworker sets them)");
  }
  auto hosts = ParseHostSequence(*hosts_env);
  int per_host = 0;
  auto [p, ec] = std::from_chars(per_host_env->data(), per_host_env->data() + per_host_env->size(),
                                 per_host);
  if (!hosts || hosts->empty() || ec != std::errc() || per_host < 1) {
    return Fail("launch", std::string(kLaunchHostsVariable) + "='" + hosts_env->substr(0, 64) +
                              "' and LOCAL_WORLD_SIZE='" +
                              per_host_env->substr(0, 16) + "' do not describe a slice");
  }

  // The launcher's own host: its ranks start here (LocalRankEnvironment). Without it, every
  // rank goes through rsh.
  std::optional<int32_t> own_host;
  if (const auto host_env = GetEnv(kLaunchHostVariable)) {
    if (auto host = ParseMpiHostName(*host_env)) own_host = *host;
  }

  const std::vector<RankStart> plan = PlanRanks(*hosts, per_host);
  std::vector<RankProcess> ranks(plan.size());
  RankExits exits(static_cast<int>(plan.size()));
  const std::vector<std::string> env = EnvironmentWith({});
  const std::vector<std::string> local_env = LocalRankEnvironment(env);
  if (own_host) CreateCheckpointDir("launch");  // for this host's ranks, as `rank` would
  // A rank of this host is its program itself, with the rank's variables (what `podworker rank
  // --rank R` would set before its exec); one of another host goes through rsh to that host's
  // agent, and `podworker rank` there.
  const auto start_rank = [&](const RankStart& start, bool local) -> Result<ChildProcess> {
    if (!local) return SpawnChild(RankRshArgv(launch->rsh_binary, self, start, command), env);
    auto rank_env = LocalRankProgramEnvironment(start.rank, local_env);
    if (!rank_env) return std::unexpected(rank_env.error());
    return SpawnChild(command, *rank_env);
  };
  for (size_t i = 0; i < plan.size(); ++i) {
    ranks[i].start = plan[i];
    ranks[i].local = own_host == plan[i].host;
    Result<ChildProcess> child = start_rank(plan[i], ranks[i].local);
    if (!child) {
      std::fprintf(stderr, "podworker launch: cannot start rank %d: %s\n", plan[i].rank,
                   child.error().message().c_str());
      ranks[i].reaped = true;
      if (exits.Exited(plan[i].rank, 127)) break;
      continue;
    }
    ranks[i].pid = child->pid;
    ranks[i].fd[0] = child->stdout_fd;
    ranks[i].fd[1] = child->stderr_fd;
    ranks[i].pidfd = static_cast<int>(syscall(SYS_pidfd_open, child->pid, 0));
  }

  bool stopping = false;
  auto stop_all = [&] {
    if (stopping) return;
    stopping = true;
    std::fprintf(stderr, "podworker launch: %s: stopping the other ranks\n",
                 exits.FailureMessage().c_str());
    for (RankProcess& r : ranks) {
      if (r.pid <= 0 || r.reaped) continue;
      // An rsh client closes its session on SIGTERM, and the host's agent kills the rank with
      // SIGKILL; a rank of this host gets the same.
      kill(-r.pid, r.local ? SIGKILL : SIGTERM);
    }
  };
  if (exits.ExitCode() != 0 && exits.ExitCode() != kPreemptedExitCode) stop_all();

  char buf[65536];
  while (true) {
    // Each rank's pipes and its pidfd: the loop wakes when output arrives or a rank exits,
    // never on a timer (a fallback timeout only where pidfd_open failed).
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, int>> owner;  // (rank, 0/1 pipe or 2 pidfd)
    bool pidfds = true;
    for (size_t i = 0; i < ranks.size(); ++i) {
      for (int s = 0; s < 2; ++s) {
        if (ranks[i].fd[s] < 0) continue;
        fds.push_back({ranks[i].fd[s], POLLIN, 0});
        owner.emplace_back(i, s);
      }
      if (ranks[i].pid > 0 && !ranks[i].reaped) {
        if (ranks[i].pidfd >= 0) {
          fds.push_back({ranks[i].pidfd, POLLIN, 0});
          owner.emplace_back(i, 2);
        } else {
          pidfds = false;
        }
      }
    }
    bool all_reaped = true;
    for (const RankProcess& r : ranks) all_reaped = all_reaped && (r.reaped || r.pid < 0);
    if (fds.empty() && all_reaped) break;
    poll(fds.data(), fds.size(), pidfds ? 1000 : 100);
    for (size_t k = 0; k < fds.size(); ++k) {
      if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      auto [i, s] = owner[k];
      if (s == 2) continue;  // reaped below
      const ssize_t n = read(ranks[i].fd[s], buf, sizeof buf);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) {
        Relay(ranks[i], s, {}, /*end=*/true);
        close(ranks[i].fd[s]);
        ranks[i].fd[s] = -1;
      } else {
        Relay(ranks[i], s, std::string_view(buf, static_cast<size_t>(n)), false);
      }
    }
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      for (RankProcess& r : ranks) {
        if (r.pid != pid) continue;
        r.reaped = true;
        if (r.pidfd >= 0) close(r.pidfd);
        r.pidfd = -1;
        if (exits.Exited(r.start.rank, SshExitStatus(status))) stop_all();
      }
    }
  }
  return exits.ExitCode();
}

namespace {

// The signals a rank of mpirun may get. They reach the program itself: ORTE signals each rank's
// process group, which the program shares, and the agent signals the tagged rank, the program.
// `podworker rank` only has to outlive them, to report how the program ended.
constexpr int kRankSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE};

void IgnoreSignal(int) {}

// Runs the program of an mpirun rank as a child, and ends as it did but for a 75 under a
// Preempt, which becomes kRankPreemptedLine and 0 (JudgeRankEnd).
int SuperviseMpiRank(std::vector<char*>& argv) {
  struct sigaction survive {};
  survive.sa_handler = IgnoreSignal;  // a handler, not SIG_IGN: exec resets it for the program
  sigemptyset(&survive.sa_mask);
  sigset_t blocked, before;
  sigemptyset(&blocked);
  for (int sig : kRankSignals) {
    sigaction(sig, &survive, nullptr);
    sigaddset(&blocked, sig);
  }
  // Blocked across fork: a signal for the program that arrives before its exec waits for it.
  sigprocmask(SIG_BLOCK, &blocked, &before);
  const pid_t self = getpid();
  const pid_t child = fork();
  if (child < 0) return Fail("rank", std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : kRankSignals) sigaction(sig, &dfl, nullptr);
    // Never outlive this process (a SIGKILL of the rank alone would leave the program running).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != self) _exit(127);
    sigprocmask(SIG_SETMASK, &before, nullptr);
    execvp(argv[0], argv.data());
    const int err = errno;
    std::fprintf(stderr, "podworker rank: cannot run '%s': %s\n", argv[0], std::strerror(err));
    _exit(127);
  }
  sigprocmask(SIG_SETMASK, &before, nullptr);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return Fail("rank", std::string("waitpid: ") + std::strerror(errno));
  }
  const char* notice = std::getenv("POD_PREEMPT_FILE");
  const bool preempted = notice != nullptr && *notice != '\0' && access(notice, F_OK) == 0;
  const RankEnd end = JudgeRankEnd(status, preempted);
  if (end.report_preempted) std::fprintf(stderr, "%s\n", kRankPreemptedLine);
  if (end.signal != 0) {
    // End by the program's signal, as mpirun would have seen it, without a core of this process.
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(end.signal, SIG_DFL);
    sigset_t just;
    sigemptyset(&just);
    sigaddset(&just, end.signal);
    sigprocmask(SIG_UNBLOCK, &just, nullptr);
    raise(end.signal);
  }
  return end.exit_code;
}

}  // namespace

int RankMain(const std::vector<std::string>& args) {
  std::optional<int> index;
  size_t i = 0;
  if (i + 1 < args.size() && args[i] == "--rank") {
    int r = -1;
    auto [p, ec] = std::from_chars(args[i + 1].data(), args[i + 1].data() + args[i + 1].size(), r);
    if (ec != std::errc() || p != args[i + 1].data() + args[i + 1].size() || r < 0) {
      return Fail("rank", "--rank '" + args[i + 1] + "' is not a rank");
    }
    index = r;
    i += 2;
  }
  if (i < args.size() && args[i] == "--") ++i;
  if (i >= args.size()) return Fail("rank", "usage: podworker rank [--rank R] -- COMMAND [ARGS...]");
  auto id = index ? RankFromIndex(*index, GetEnv) : RankFromMpi(GetEnv);
  if (!id) return Fail("rank", id.error().message());
  for (const auto& [name, value] : RankEnv(*id, GetEnv)) setenv(name.c_str(), value.c_str(), 1);
  CreateCheckpointDir("rank");
  std::vector<char*> argv;
  for (size_t k = i; k < args.size(); ++k) argv.push_back(const_cast<char*>(args[k].c_str()));
  argv.push_back(nullptr);
  if (!index) return SuperviseMpiRank(argv);
  execvp(argv[0], argv.data());
  return Fail("rank", "cannot run '" + args[i] + "': " + std::strerror(errno));
}

}  // namespace podsched::agent
