#include "worker/agent/job_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>


#include "worker/agent/child.h"
#include "common/hash.h"
#include "common/host_list.h"
#include "worker/agent/launcher_plan.h"
#include "worker/agent/progress_relay.h"
#include "worker/agent/rsh_wire.h"

namespace podsched::agent {
namespace {

constexpr Duration kScanInterval = std::chrono::milliseconds(200);
constexpr Duration kScratchSweepInterval = std::chrono::minutes(1);

int SessionsPerHost(const bus::Launch& l) {
  return RshSessionsPerHost(l.launcher() == bus::Launch::EXEC, l.ranks_per_host());
}

}  // namespace

JobRunner::JobRunner(const AgentOptions& options, const MonotonicClock& clock, StateDir& state,
                     OutputSpool& spool, Send send)
    : o_(options),
      clock_(clock),
      state_(state),
      spool_(spool),
      send_(std::move(send)),
      dirs_(state, options.scratch_dir, options.keep_failed_scratch_seconds),
      agent_env_(AgentEnvironment()) {
  procs_.set_tag_trust([this](pid_t pid, std::string_view tag, uint32_t uid) {
    JobEpoch je;
    int32_t host = 0;
    if (!ParseTag(tag, je, host)) return true;
    const Job* job = Find(je);
    // A job not running here: its processes are killed as such. Otherwise the tag holds only
    // for the account the job runs as.
    if (job == nullptr || !job->account || job->account->uid == uid) return true;
    if (untrusted_warned_.size() >= 4096) untrusted_warned_.clear();  // a log line now and then
    if (untrusted_warned_.insert(pid).second) {
      spdlog::warn("pid {} (uid {}) carries the tag of job {} epoch {}, which runs as uid {}: "
                   "not taken as that job's process", pid, uid, je.job.value(), je.epoch,
                   job->account->uid);
    }
    return false;
  });
}

JobRunner::Job* JobRunner::Find(const JobEpoch& je) {
  auto it = jobs_.find(je.job);
  return it != jobs_.end() && it->second.je == je ? &it->second : nullptr;
}

const JobRunner::Job* JobRunner::Find(const JobEpoch& je) const {
  return const_cast<JobRunner*>(this)->Find(je);
}

// ---- bus messages ----

std::optional<Rejection> JobRunner::OnLaunch(const bus::Launch& l) {
  if (auto r = ValidateLaunch(l, o_.hosts, LaunchPolicy{o_.checkpoint_root, o_.log_root})) {
    return r;
  }
  if (stopping_) {
    return Rejection{"stopping", "Launch of job " + std::to_string(l.job().job_id()) +
                                     " while this agent stops"};
  }
  const JobEpoch je{JobId(l.job().job_id()), l.job().epoch()};
  switch (book_.OnLaunch(je).decision) {
    case LaunchBook::Decision::kStale:
      return Rejection{"stale_epoch", "Launch of job " + std::to_string(je.job.value()) +
                                          " epoch " + std::to_string(je.epoch) +
                                          " (highest seen: " +
                                          std::to_string(book_.HighestEpoch(je.job)) + ")"};
    case LaunchBook::Decision::kReplaceOlder: {
      Job& old = jobs_.at(je.job);
      spdlog::warn("job {} epoch {} replaces running epoch {}: killing it first", je.job.value(),
                   je.epoch, old.je.epoch);
      old.next = l;
      Scan();
      KillJob(old);
      return std::nullopt;
    }
    case LaunchBook::Decision::kStart:
      Start(l);
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Rejection> JobRunner::OnPreempt(const bus::Preempt& p) {
  if (auto r = ValidateJobControl(p.job(), book_.RunningEpoch(JobId(p.job().job_id())))) return r;
  if (p.grace_seconds() < 0 || p.grace_seconds() > 24 * 3600) {
    return Rejection{"invalid", "Preempt grace_seconds out of range"};
  }
  Job* job = Find({JobId(p.job().job_id()), p.job().epoch()});
  if (job != nullptr) PreemptJob(*job, p.grace_seconds(), p.reason());
  return std::nullopt;
}

void JobRunner::PreemptJob(Job& job, int32_t grace_seconds, std::string_view reason) {
  if (!job.life.Preempt(clock_.Now(), grace_seconds)) return;
  spdlog::info("job {} epoch {}: preempt ({}), grace {} s", job.je.job.value(), job.je.epoch,
               reason, grace_seconds);
  // POD_PREEMPT_FILE appears before the SIGTERM, holding the deadline (Unix seconds), for
  // programs that poll it instead of handling the signal.
  const auto deadline = std::chrono::duration_cast<std::chrono::seconds>(
      (RealClock().Now() + std::chrono::seconds(grace_seconds)).time_since_epoch());
  for (int32_t h : job.my_hosts) {
    Status s = state_.WriteAtomically(state_.PreemptFile(job.je, h),
                                      std::to_string(deadline.count()) + "\n");
    if (!s.ok()) spdlog::warn("job {}: {}", job.je.job.value(), s.ToString());
  }
  Scan();
  SignalRanks(job);
}

void JobRunner::PreemptAll(int32_t grace_cap_seconds, std::string_view reason) {
  stopping_ = true;
  for (auto& [id, job] : jobs_) {
    PreemptJob(job, std::min(job.life.grace_seconds(), grace_cap_seconds), reason);
  }
}

std::optional<Rejection> JobRunner::OnKill(const bus::Kill& k) {
  if (auto r = ValidateJobControl(k.job(), book_.RunningEpoch(JobId(k.job().job_id())))) return r;
  Job* job = Find({JobId(k.job().job_id()), k.job().epoch()});
  if (job == nullptr) return std::nullopt;
  spdlog::info("job {} epoch {}: kill ({})", job->je.job.value(), job->je.epoch, k.reason());
  job->life.Kill();
  Scan();
  KillJob(*job);
  return std::nullopt;
}

std::optional<Rejection> JobRunner::OnProgress(const progress::Progress& p) {
  Job* job = nullptr;
  for (auto& [id, j] : jobs_) {
    if (j.launcher && std::to_string(id.value()) == p.job && j.je.epoch == p.epoch) job = &j;
  }
  if (job == nullptr) {
    return Rejection{"progress_other_job", "progress of job '" + p.job.substr(0, 32) +
                                               "' epoch " + std::to_string(p.epoch) +
                                               " does not run here"};
  }
  // The port is reachable from the network: only the job's own processes have its key.
  if (!ConstantTimeEqual(p.key, job->progress_key)) {
    return Rejection{"progress_bad_key", "progress of job " + p.job.substr(0, 32) + " epoch " +
                                             std::to_string(p.epoch) + " without its " +
                                             std::string(progress::kProgressKeyVariable)};
  }
  Forward(*job, p);
  return std::nullopt;
}

// A report of the launcher's job, by datagram or POD_PROGRESS line (progress_relay.h).
void JobRunner::Forward(Job& job, const progress::Progress& p) {
  send_(ProgressEnvelope(job.je, p, &job.last_checkpoint_step));
}

// A whole line of the launcher's output: rank 0's POD_PROGRESS lines are progress reports too.
bool JobRunner::FilterLine(const JobEpoch& je, std::string_view line) {
  OutputLine judged = JudgeOutputLine(line);
  if (!judged.keep) spdlog::debug("job {}: {}", je.job.value(), line);
  if (!judged.progress) return judged.keep;
  Job* job = Find(je);
  if (job == nullptr) return judged.keep;
  if (*judged.progress) {
    Forward(*job, **judged.progress);
  } else {
    spdlog::warn("job {}: {}", je.job.value(), judged.progress->error().message());
  }
  return judged.keep;
}

// ---- starting ----

void JobRunner::Start(const bus::Launch& l) {
  const JobEpoch je{JobId(l.job().job_id()), l.job().epoch()};
  Job& job = jobs_[je.job];
  job = Job{};
  job.launch = l;
  job.je = je;
  job.life = JobLifecycle(clock_.Now(), l.grace_seconds());
  job.output = LauncherOutput(je, o_.live_log_bytes_per_second);
  for (int32_t h : l.hosts()) {
    if (std::binary_search(o_.hosts.begin(), o_.hosts.end(), h)) job.my_hosts.push_back(h);
  }
  std::sort(job.my_hosts.begin(), job.my_hosts.end());
  job.launcher = std::binary_search(o_.hosts.begin(), o_.hosts.end(), l.hosts(0));
  book_.MarkRunning(je);
  spdlog::info("job {} epoch {}: launch on {} hosts, here {} ({})", je.job.value(), je.epoch,
               l.hosts_size(), FormatHostRanges(job.my_hosts),
               job.launcher ? "launcher" : "remote hosts only");
  job.account = ResolveJobAccount(l.unix_user(), o_.accounts);
  if (job.account) {
    spdlog::info("job {} epoch {}: runs as {} (uid {})", je.job.value(), je.epoch,
                 job.account->name, job.account->uid);
    job.scratch = dirs_.Prepare(je, job.my_hosts, *job.account, l.checkpoint_root());
  } else {
    spdlog::error("job {} epoch {}: {}", je.job.value(), je.epoch, job.account.error().message());
  }
  job.output.set_filter([this, je](std::string_view line) { return FilterLine(je, line); });
  if (job.launcher) StartLauncher(job);
}

// At the end of the epoch here: preempted, cancelled or killed by the scheduler is not the job's
// failure; a failed epoch keeps its scratch for a while (JobDirectories).
void JobRunner::RemoveDirectories(Job& job) {
  const bool stopped = job.life.preempted() || job.life.killing();
  const bool failed =
      !stopped && (job.failed_here || (job.ended && job.ended->reason == ExitReason::kFailed));
  dirs_.Remove(job.je, job.account ? &*job.account : nullptr, job.scratch, failed);
}

// A rank that left its process group and dropped its tag (setsid, a changed environment) is
// not found by the scan. When the agent runs jobs as their users' accounts, the last job of an
// account ending here means no process of that account has any business on this machine: all
// are killed, so none outlives its job onto hosts later given to someone else (what Slurm's
// cgroups do). Never with --jobs-as-agent-user, for root or system accounts.
void JobRunner::KillStrays(const Job& job) {
  if (!o_.kill_account_leftovers || !job.account || geteuid() != 0 ||
      o_.accounts.jobs_as_agent_user) {
    return;
  }
  const uid_t uid = job.account->uid;
  if (uid == 0 || uid < o_.accounts.min_uid) return;
  for (const auto& [id, other] : jobs_) {
    if (&other != &job && other.account && other.account->uid == uid) return;
  }
  int killed = 0;
  for (pid_t p : ProcessesOfUid(uid)) {
    if (kill(p, SIGKILL) == 0) ++killed;
  }
  if (killed > 0) {
    spdlog::warn("job {} epoch {}: killed {} leftover processes of {} (uid {}), its last job here",
                 job.je.job.value(), job.je.epoch, killed, job.account->name, uid);
  }
}

void JobRunner::SweepScratch() {
  next_sweep_ = clock_.Now() + kScratchSweepInterval;
  std::set<std::string> live;
  for (const auto& [id, job] : jobs_) {
    for (const auto& [host, dir] : job.scratch) live.insert(dir);
  }
  dirs_.Sweep(live, std::chrono::duration_cast<std::chrono::seconds>(
                        RealClock().Now().time_since_epoch())
                        .count());
}

// The launcher (launcher_plan.h) in its own process group, output to pipes and the spool.
void JobRunner::StartLauncher(Job& job) {
  const bus::Launch& l = job.launch;
  job.progress_key = HexEncode(RandomBytes(16));
  LauncherPlan plan = PlanLauncher(
      o_, l,
      LauncherInputs{WithFreeRendezvousPorts(job), progress_endpoint_, job.progress_key,
                     ScratchOf(job.je, l.hosts(0)), job.account && job.account->uid == 0});
  for (const std::string& name : plan.ignored) {
    spdlog::warn("job {}: env {} is set by podworker; the Launch's value is ignored",
                 job.je.job.value(), name);
  }
  Result<std::vector<std::string>> argv = std::move(plan.argv);
  const std::vector<std::string>& overrides = plan.overrides;

  spool_.Open(job.je);
  if (!job.account) argv = std::unexpected(job.account.error());
  Result<ChildProcess> child =
      argv ? SpawnChild(*argv, EnvironmentFor(*job.account, overrides), &*job.account,
                        job.account->home)
           : std::unexpected(argv.error());
  if (!child) {
    spdlog::error("job {} epoch {}: cannot start its launcher: {}", job.je.job.value(),
                  job.je.epoch, child.error().ToString());
    job.mpirun_reaped = true;
    job.mpirun_status = 127 << 8;
    job.output.AddLine("podworker: cannot start the launcher: " + child.error().message());
    return;
  }
  job.mpirun = child->pid;
  job.output.Attach(child->stdout_fd, child->stderr_fd);
  ScanSoon();
}

// Audit M10: the rendezvous ports podsched names are predictable, and this machine's other jobs
// share its network: one another user's job already listens on is moved to a free port (which
// every rank gets: the env reaches them from here), and the job's log says so.
EnvMap JobRunner::WithFreeRendezvousPorts(Job& job) {
  EnvMap env(job.launch.env().begin(), job.launch.env().end());
  std::vector<int> taken;
  for (int port : RendezvousPortsOf(env)) {
    if (TcpPortInUse(port)) taken.push_back(port);
  }
  if (taken.empty()) return env;
  auto free = PickFreeTcpPorts(static_cast<int>(taken.size()));
  if (!free) {
    spdlog::warn("job {}: {}", job.je.job.value(), free.error().message());
    return env;
  }
  std::map<int, int> moved;
  for (size_t i = 0; i < taken.size(); ++i) {
    moved[taken[i]] = (*free)[i];
    const std::string note = "podworker: rendezvous port " + std::to_string(taken[i]) +
                             " is already in use on this machine (another process holds "
                             "it); this job uses port " + std::to_string((*free)[i]) +
                             " instead";
    spdlog::warn("job {} epoch {}: {}", job.je.job.value(), job.je.epoch, note);
    job.output.AddLine(note);
  }
  return MoveRendezvousPorts(std::move(env), moved);
}

// ---- signals and scans ----

// SIGKILL to everything of the job known now; Scan() repeats it for processes found later.
void JobRunner::KillJob(Job& job) {
  job.life.Abort();
  KillLauncherAndSessions(job);
  for (pid_t p : job.pids) kill(p, SIGKILL);
}

// SIGKILL to the launcher's process group and to every rsh session's command of the job.
void JobRunner::KillLauncherAndSessions(Job& job) {
  if (job.mpirun > 0 && !job.mpirun_reaped) kill(-job.mpirun, SIGKILL);
  if (sessions_ != nullptr) sessions_->KillAll(job.je);
}

// SIGTERM to the job's ranks (not orted, not mpirun: a SIGTERM to those kills the ranks before
// their handler can checkpoint).
void JobRunner::SignalRanks(Job& job) {
  std::vector<pid_t> ranks;
  for (pid_t p : job.pids) {
    if (procs_.IsRank(p)) ranks.push_back(p);
  }
  for (pid_t p : job.life.RanksToTerminate(clock_.Now(), ranks,
                                           [](pid_t p) { return HandlesSignal(p, SIGTERM); })) {
    kill(p, SIGTERM);
  }
}

void JobRunner::Scan() {
  next_scan_ = clock_.Now() + kScanInterval;
  procs_.Scan();
  for (auto& [id, job] : jobs_) job.pids.clear();
  for (const auto& [pid, p] : procs_.processes()) {
    JobEpoch je;
    int32_t host = 0;
    if (p.info.zombie || !ParseTag(p.tag, je, host)) continue;
    Job* job = Find(je);
    if (job == nullptr) {
      // A process of an epoch this agent no longer runs: never two epochs of one job.
      spdlog::warn("killing pid {} ({}) of job {} epoch {}, which does not run here", pid,
                   p.info.comm, je.job.value(), je.epoch);
      kill(pid, SIGKILL);
      continue;
    }
    job->pids.push_back(pid);
  }
  if (auto s = state_.Record(procs_.Live()); !s.ok()) spdlog::warn("{}", s.ToString());
  NoteRanksUp();

  const MonotonicTime now = clock_.Now();
  for (auto& [id, job] : jobs_) {
    if (job.killed_for.empty() &&
        job.pids.size() > static_cast<size_t>(o_.max_job_processes)) {
      job.killed_for = "podworker: the job had " + std::to_string(job.pids.size()) +
                       " processes on this machine, more than --max-job-processes " +
                       std::to_string(o_.max_job_processes) + "; killed";
      spdlog::warn("job {} epoch {}: {}", job.je.job.value(), job.je.epoch, job.killed_for);
      job.output.AddLine(job.killed_for);
      KillLauncherAndSessions(job);
    }
    if (job.life.killing() || !job.killed_for.empty()) {
      for (pid_t p : job.pids) kill(p, SIGKILL);
      continue;
    }
    if (!job.life.preempted()) continue;
    SignalRanks(job);  // ranks that started after the Preempt
    const bool ranks_alive = std::any_of(job.pids.begin(), job.pids.end(),
                                         [&](pid_t p) { return procs_.IsRank(p); });
    if (!job.life.GraceOver(now, ranks_alive)) continue;
    spdlog::warn("job {} epoch {}: grace of {} s over, SIGKILL", job.je.job.value(), job.je.epoch,
                 job.life.grace_seconds());
    KillJob(job);
  }
}

// A host whose ranks_per_host ranks are all alive (seen once) is up; the job is RUNNING once
// every host of the slice is (the scheduler joins the agents' reports).
void JobRunner::NoteRanksUp() {
  std::map<std::pair<int64_t, int32_t>, int> ranks;  // (job, host) -> live ranks
  for (const auto& [pid, p] : procs_.processes()) {
    JobEpoch je;
    int32_t host = 0;
    if (!procs_.IsRank(pid) || !ParseTag(p.tag, je, host)) continue;
    const Job* job = Find(je);
    if (job != nullptr) ++ranks[{je.job.value(), host}];
  }
  for (auto& [id, job] : jobs_) {
    for (int32_t h : job.my_hosts) {
      auto it = ranks.find({id.value(), h});
      if (it == ranks.end() || it->second < job.launch.ranks_per_host() ||
          !job.ranks_up_hosts.insert(h).second) {
        continue;
      }
      spdlog::info("job {} epoch {}: all {} ranks of host {} are up", id.value(), job.je.epoch,
                   job.launch.ranks_per_host(), h);
      ranks_up_news_ = true;
    }
  }
}

void JobRunner::KillHostProcesses(const JobEpoch& je, int32_t host) {
  Scan();
  const std::string tag = TagValue(je, host);
  for (const auto& [pid, p] : procs_.processes()) {
    if (p.tag == tag) kill(pid, SIGKILL);
  }
}

void JobRunner::Tick() {
  if (clock_.Now() >= next_scan_ && !jobs_.empty()) Scan();
  if (clock_.Now() >= next_sweep_) SweepScratch();
  CheckJobs();
}

void JobRunner::OnReaped(pid_t pid, int status) {
  for (auto& [id, job] : jobs_) {
    if (job.mpirun == pid) {
      job.mpirun_reaped = true;
      job.mpirun_status = status;
      ScanSoon();  // the job may be over: find out now, not at the next periodic scan
      // Name what ran: mpirun, or `podworker launch` (launcher: exec).
      const bool exec = job.launch.launcher() == bus::Launch::EXEC;
      spdlog::info("job {} epoch {}: {} exited ({})", id.value(), job.je.epoch,
                   exec ? "the launcher (podworker launch)" : "mpirun",
                   WIFEXITED(status)     ? "exit code " + std::to_string(WEXITSTATUS(status))
                   : WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                         : "status " + std::to_string(status));
    }
  }
}

// ---- the end of a job ----

void JobRunner::CheckJobs() {
  const MonotonicTime now = clock_.Now();
  std::vector<JobId> gone, overdue;
  for (auto& [id, job] : jobs_) {
    if (job.ended) {
      if (now - job.storing_since >= std::chrono::seconds(o_.exit_log_deadline_seconds)) {
        overdue.push_back(id);
      }
      continue;
    }
    const bool sessions_open = sessions_ != nullptr && sessions_->AnyOpen(job.je);
    if (sessions_open || !job.pids.empty() || job.output.open()) continue;
    if (job.launcher) {
      if (!job.mpirun_reaped) continue;
    } else if (!job.life.MayRelease(now,
                                    EverySessionStarted(job.sessions_started, job.my_hosts,
                                                        SessionsPerHost(job.launch)),
                                    std::chrono::milliseconds(o_.start_timeout_ms))) {
      continue;
    }
    // The last scan may predate the newest processes: look once more before declaring it gone.
    if (now - (next_scan_ - kScanInterval) > std::chrono::milliseconds(20)) {
      Scan();
      if (!job.pids.empty()) continue;
    }
    gone.push_back(id);
  }
  for (JobId id : gone) {
    auto it = jobs_.find(id);
    if (it != jobs_.end()) EndJob(it->second);
  }
  // The log is still on its way to the object store: the exit goes now (OnOutputStored then
  // finds no job), so a slow store never holds the hosts.
  for (JobId id : overdue) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || !it->second.ended) continue;
    Job& job = it->second;
    spdlog::warn("job {} epoch {}: its log is not stored after {} s; reporting the exit now, the "
                 "upload goes on", id.value(), job.je.epoch, o_.exit_log_deadline_seconds);
    job.ended->message += "; the log was still being stored";
    Report(job);
  }
}

void JobRunner::EndJob(Job& job) {
  ExitReport report;
  report.job = job.je;
  report.hosts = job.my_hosts;
  report.last_checkpoint_step = job.last_checkpoint_step;
  if (!job.launcher) {
    report.reason = ExitReason::kReleased;
    report.message =
        job.sessions_started.empty() ? "no process was started here" : "processes gone";
    if (!job.killed_for.empty()) report.message += " (" + job.killed_for + ")";
    job.ended = std::move(report);
    return Report(job);
  }
  const Verdict v = ClassifyExit(job.life.Facts(job.mpirun_status));
  report.reason = v.reason;
  report.exit_code = v.exit_code;
  report.message = v.message;
  if (!job.killed_for.empty()) report.message += " (" + job.killed_for + ")";
  job.output.EndStreams();
  FlushOutput(job);
  if (v.reason == ExitReason::kFailed) {
    const std::string& tail = job.output.tail();
    const size_t keep = std::min<size_t>(tail.size(), 4096);
    spdlog::warn("job {} epoch {} failed; last output:\n{}", job.je.job.value(), job.je.epoch,
                 tail.substr(tail.size() - keep));
  }
  job.ended = std::move(report);
  job.storing_since = clock_.Now();
  spool_.Finish(job.je, job.launch.log_url());  // Report() follows in OnOutputStored
}

void JobRunner::OnOutputStored(const JobEpoch& je) {
  Job* job = Find(je);
  if (job != nullptr && job->ended) Report(*job);
}

void JobRunner::Report(Job& job) {
  const ExitReport& report = *job.ended;
  spdlog::info("job {} epoch {}: exited {} ({})", job.je.job.value(), job.je.epoch,
               ExitReasonName(report.reason), report.message);
  book_.AddExit(report);
  book_.MarkEnded(job.je);
  KillStrays(job);
  RemoveDirectories(job);
  bus::Envelope env;
  ToProto(report, *env.mutable_exited());
  send_(env);
  std::optional<bus::Launch> next = std::move(job.next);
  jobs_.erase(job.je.job);
  if (next) Start(*next);
}

// ---- output ----

void JobRunner::AddPollItems(PollSet& poll) {
  for (auto& [id, job] : jobs_) {
    for (LogCutter::Stream stream : {LogCutter::kStdout, LogCutter::kStderr}) {
      const int fd = job.output.fd(stream);
      if (fd < 0) continue;
      poll.AddFd(fd, ZMQ_POLLIN, [this, je = job.je, stream](short) {
        Job* j = Find(je);
        if (j == nullptr) return;
        if (!j->output.Read(stream)) ScanSoon();  // a pipe ended: the job may be over
        FlushOutput(*j);
      });
    }
  }
}

void JobRunner::FlushOutput(Job& job) {
  job.output.Flush(
      clock_.Now(),
      [&](int64_t offset, const std::string& data) { spool_.Append(job.je, offset, data); },
      send_);
}

// ---- state for others ----

void JobRunner::FillRunning(google::protobuf::RepeatedPtrField<bus::RunningJob>* running) const {
  for (const auto& [id, job] : jobs_) {
    auto* r = running->Add();
    r->mutable_job()->set_job_id(job.je.job.value());
    r->mutable_job()->set_epoch(job.je.epoch);
    for (int32_t h : job.my_hosts) r->add_hosts(h);
    for (pid_t p : job.pids) r->add_pids(p);
    for (int32_t h : job.ranks_up_hosts) r->add_ranks_up_hosts(h);
  }
}

std::optional<RshJob> JobRunner::RshJobOf(const JobEpoch& je) const {
  const Job* job = Find(je);
  if (job == nullptr) return std::nullopt;
  // A job whose processes are gone (its log being stored) takes no new session.
  return RshJob{job->launch.rsh_token(), job->my_hosts,
                job->life.killing() || job->ended.has_value(),
                SessionsPerHost(job->launch),
                job->sessions_started};
}

void JobRunner::SessionStarted(const JobEpoch& je, int32_t host) {
  if (Job* job = Find(je)) {
    ++job->sessions_started[host];
  }
  ScanSoon();
}

void JobRunner::SessionEnded(const JobEpoch& je, int32_t host, int status) {
  Job* job = Find(je);
  if (job == nullptr || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) return;
  if (job->life.preempted() || job->life.killing()) return;  // its end, not its failure
  spdlog::info("job {} epoch {}: a command on host {} failed (status {:#x})", je.job.value(),
               je.epoch, host, status);
  job->failed_here = true;
}

Result<JobAccount> JobRunner::AccountOf(const JobEpoch& je) const {
  const Job* job = Find(je);
  if (job == nullptr) return NotFound("job " + std::to_string(je.job.value()) + " epoch " +
                                      std::to_string(je.epoch) + " does not run here");
  return job->account;
}

std::string JobRunner::ScratchOf(const JobEpoch& je, int32_t host) const {
  const Job* job = Find(je);
  if (job == nullptr) return "";
  auto it = job->scratch.find(host);
  return it == job->scratch.end() ? "" : it->second;
}

std::vector<std::string> JobRunner::EnvironmentFor(
    const JobAccount& account, const std::vector<std::string>& overrides) const {
  return JobEnvironment(account, agent_env_, o_.pass_env, overrides);
}

void JobRunner::KillAll() {
  Scan();
  for (auto& [id, job] : jobs_) KillJob(job);
}

void JobRunner::FinalScan() {
  Scan();  // SIGKILLs what appeared meanwhile
  (void)state_.Record({});
}

}  // namespace podsched::agent
