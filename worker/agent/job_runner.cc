#include "worker/agent/job_runner.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "common/hash.h"
#include "common/host_list.h"
#include "worker/agent/child.h"
#include "worker/agent/launcher_plan.h"
#include "worker/agent/progress_relay.h"

namespace podsched::agent {
namespace {

constexpr Duration kScanInterval = std::chrono::milliseconds(200);
constexpr Duration kScratchSweepInterval = std::chrono::minutes(1);

}  // namespace

JobRunner::JobRunner(const AgentOptions& options, const MonotonicClock& clock, StateDir& state,
                     OutputSpool& spool, Send send)
    : o_(options),
      clock_(clock),
      state_(state),
      spool_(spool),
      send_(std::move(send)),
      dirs_(state, options.scratch_dir, options.keep_failed_scratch_seconds),
      processes_(state),
      agent_env_(AgentEnvironment()) {}

RunningJob* JobRunner::Find(const JobEpoch& je) {
  auto it = jobs_.find(je.job);
  return it != jobs_.end() && it->second.je == je ? &it->second : nullptr;
}

const RunningJob* JobRunner::Find(const JobEpoch& je) const {
  return const_cast<JobRunner*>(this)->Find(je);
}

// ---- bus messages ----

std::optional<Rejection> JobRunner::OnLaunch(const bus::Launch& l) {
  if (auto r = ValidateLaunch(l, o_.hosts, LaunchPolicy{o_.checkpoint_roots, o_.log_root})) {
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
      RunningJob& old = jobs_.at(je.job);
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
  RunningJob* job = Find({JobId(p.job().job_id()), p.job().epoch()});
  if (job != nullptr) PreemptJob(*job, p.grace_seconds(), p.reason());
  return std::nullopt;
}

void JobRunner::PreemptJob(RunningJob& job, int32_t grace_seconds, std::string_view reason) {
  if (!job.life.Preempt(clock_.Now(), grace_seconds)) return;
  spdlog::info("job {} epoch {}: preempt ({}), grace {} s", job.je.job.value(), job.je.epoch,
               reason, grace_seconds);
  const auto deadline = std::chrono::duration_cast<std::chrono::seconds>(
      (RealClock().Now() + std::chrono::seconds(grace_seconds)).time_since_epoch());
  dirs_.WritePreemptNotices(job.je, job.my_hosts, deadline.count());
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
  RunningJob* job = Find({JobId(k.job().job_id()), k.job().epoch()});
  if (job == nullptr) return std::nullopt;
  spdlog::info("job {} epoch {}: kill ({})", job->je.job.value(), job->je.epoch, k.reason());
  job->life.Kill();
  Scan();
  KillJob(*job);
  return std::nullopt;
}

std::optional<Rejection> JobRunner::OnProgress(const progress::Progress& p) {
  RunningJob* job = nullptr;
  for (auto& [id, j] : jobs_) {
    if (j.launcher && std::to_string(id.value()) == p.job && j.je.epoch == p.epoch) job = &j;
  }
  if (auto r = CheckProgressDatagram(p, job != nullptr ? &job->progress_key : nullptr)) return r;
  Forward(*job, p);
  return std::nullopt;
}

// A report of the launcher's job, by datagram or POD_PROGRESS line (progress_relay.h).
void JobRunner::Forward(RunningJob& job, const progress::Progress& p) {
  send_(ProgressEnvelope(job.je, p, &job.last_checkpoint_step));
}

// A whole line of the launcher's output: rank 0's POD_PROGRESS lines are progress reports too,
// and a rank's kRankPreemptedLine counts in the verdict (exit_verdict.h).
bool JobRunner::FilterLine(const JobEpoch& je, std::string_view line) {
  OutputLine judged = JudgeOutputLine(line);
  if (!judged.keep) spdlog::debug("job {}: {}", je.job.value(), line);
  if (!judged.progress && !judged.rank_preempted) return judged.keep;
  RunningJob* job = Find(je);
  if (job == nullptr) return judged.keep;
  if (judged.rank_preempted) job->rank_reported_preempted = true;
  if (!judged.progress) return judged.keep;
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
  RunningJob& job = jobs_.insert_or_assign(je.job, RunningJob(l, o_.hosts, clock_.Now(),
                                                 o_.live_log_bytes_per_second))
                 .first->second;
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

// A rank that left its process group and dropped its tag (setsid, a changed environment) is
// not found by the scan. When the agent runs jobs as their users' accounts, the last job of an
// account ending here means no process of that account has any business on this machine: all
// are killed, so none outlives its job onto hosts later given to someone else (what Slurm's
// cgroups do). Never with --jobs-as-agent-user, for root or system accounts.
void JobRunner::KillStrays(const RunningJob& job) {
  if (!o_.kill_account_leftovers || !job.account || geteuid() != 0 ||
      o_.accounts.jobs_as_agent_user) {
    return;
  }
  const uid_t uid = job.account->uid;
  if (uid == 0 || uid < o_.accounts.min_uid) return;
  for (const auto& [id, other] : jobs_) {
    if (&other != &job && other.account && other.account->uid == uid) return;
  }
  if (const int killed = JobProcesses::KillProcessesOfUid(uid); killed > 0) {
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
void JobRunner::StartLauncher(RunningJob& job) {
  const bus::Launch& l = job.launch;
  job.progress_key = HexEncode(RandomBytes(16));
  LauncherInputs inputs;
  inputs.env = WithFreeRendezvousPorts(job);
  inputs.progress_endpoint = progress_endpoint_;
  inputs.progress_key = job.progress_key;
  inputs.scratch = ScratchOf(job.je, l.hosts(0));
  inputs.run_as_root = job.account && job.account->uid == 0;
  inputs.preempt_file = state_.PreemptFile(job.je, l.hosts(0));
  inputs.host_dir = state_.HostDir(job.je, l.hosts(0));
  LauncherPlan plan = PlanLauncher(o_, l, inputs);
  for (const std::string& name : plan.ignored) {
    spdlog::warn("job {}: env {} is set by podworker; the Launch's value is ignored",
                 job.je.job.value(), name);
  }
  spool_.Open(job.je);
  const Status refused = !job.account ? job.account.error()
                         : !plan.argv ? plan.argv.error()
                                      : Status::Ok();
  Result<ChildProcess> child =
      refused.ok() ? SpawnChild(*plan.argv, EnvironmentFor(*job.account, plan.overrides),
                                &*job.account, job.account->home)
                   : std::unexpected(refused);
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
EnvMap JobRunner::WithFreeRendezvousPorts(RunningJob& job) {
  FreedRendezvous freed =
      FreeRendezvousPorts(EnvMap(job.launch.env().begin(), job.launch.env().end()));
  if (!freed.error.empty()) spdlog::warn("job {}: {}", job.je.job.value(), freed.error);
  for (const std::string& note : freed.notes) {
    spdlog::warn("job {} epoch {}: {}", job.je.job.value(), job.je.epoch, note);
    job.output.AddLine(note);
  }
  return std::move(freed.env);
}

// ---- signals and scans ----

// SIGKILL to everything of the job known now; Scan() repeats it for processes found later.
void JobRunner::KillJob(RunningJob& job) {
  job.life.Abort();
  KillLauncherAndSessions(job);
  for (pid_t p : job.pids) kill(p, SIGKILL);
}

// SIGKILL to the launcher's process group and to every rsh session's command of the job.
void JobRunner::KillLauncherAndSessions(RunningJob& job) {
  if (job.mpirun > 0 && !job.mpirun_reaped) kill(-job.mpirun, SIGKILL);
  if (sessions_ != nullptr) sessions_->KillAll(job.je);
}

// SIGTERM to the job's ranks (not orted, not mpirun: a SIGTERM to those kills the ranks before
// their handler can checkpoint).
void JobRunner::SignalRanks(RunningJob& job) {
  for (pid_t p : job.life.RanksToTerminate(clock_.Now(), processes_.RanksAmong(job.pids),
                                           [](pid_t p) { return HandlesSignal(p, SIGTERM); })) {
    kill(p, SIGTERM);
  }
}

void JobRunner::Scan() {
  next_scan_ = clock_.Now() + kScanInterval;
  std::map<JobId, JobProcesses::Running> running;
  for (const auto& [id, job] : jobs_) {
    running[id] = {job.je.epoch,
                   job.account ? std::optional<uint32_t>(job.account->uid) : std::nullopt};
  }
  JobProcesses::Found found = processes_.Scan(std::move(running));
  for (auto& [id, job] : jobs_) job.pids = std::move(found.pids[id]);
  NoteRanksUp(found.ranks_up);

  const MonotonicTime now = clock_.Now();
  for (auto& [id, job] : jobs_) {
    if (job.OverProcessLimit(o_.max_job_processes)) {
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
    const bool ranks_alive = !processes_.RanksAmong(job.pids).empty();
    if (!job.life.GraceOver(now, ranks_alive)) continue;
    spdlog::warn("job {} epoch {}: grace of {} s over, SIGKILL", job.je.job.value(), job.je.epoch,
                 job.life.grace_seconds());
    KillJob(job);
  }
}

// A host whose ranks_per_host ranks are all alive (seen once) is up; the job is RUNNING once
// every host of the slice is (the scheduler joins the agents' reports).
void JobRunner::NoteRanksUp(const std::map<std::pair<JobId, int32_t>, int>& ranks) {
  for (auto& [id, job] : jobs_) {
    for (int32_t h : job.my_hosts) {
      auto it = ranks.find({id, h});
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
  processes_.KillTagged(je, host);
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
                   DescribeWaitStatus(status));
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
    if (!job.Quiet(sessions_open, now, std::chrono::milliseconds(o_.start_timeout_ms))) continue;
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
    RunningJob& job = it->second;
    spdlog::warn("job {} epoch {}: its log is not stored after {} s; reporting the exit now, the "
                 "upload goes on", id.value(), job.je.epoch, o_.exit_log_deadline_seconds);
    job.ended->message += "; the log was still being stored";
    Report(job);
  }
}

void JobRunner::EndJob(RunningJob& job) {
  if (!job.launcher) {
    job.ended = job.Exit();
    return Report(job);
  }
  job.output.EndStreams();  // its unfinished last lines count in the verdict (a rank's 75)
  job.ended = job.Exit();
  FlushOutput(job);
  if (job.ended->reason == ExitReason::kFailed) {
    const std::string& tail = job.output.tail();
    const size_t keep = std::min<size_t>(tail.size(), 4096);
    spdlog::warn("job {} epoch {} failed; last output:\n{}", job.je.job.value(), job.je.epoch,
                 tail.substr(tail.size() - keep));
  }
  job.storing_since = clock_.Now();
  spool_.Finish(job.je, job.launch.log_url());  // Report() follows in OnOutputStored
}

void JobRunner::OnOutputStored(const JobEpoch& je) {
  RunningJob* job = Find(je);
  if (job != nullptr && job->ended) Report(*job);
}

void JobRunner::Report(RunningJob& job) {
  const ExitReport& report = *job.ended;
  spdlog::info("job {} epoch {}: exited {} ({})", job.je.job.value(), job.je.epoch,
               ExitReasonName(report.reason), report.message);
  book_.AddExit(report);
  book_.MarkEnded(job.je);
  KillStrays(job);
  // A failed epoch keeps its scratch for a while (JobDirectories); a stopped one did not fail.
  dirs_.Remove(job.je, job.account ? &*job.account : nullptr, job.scratch, job.FailedHere());
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
        RunningJob* j = Find(je);
        if (j == nullptr) return;
        if (!j->output.Read(stream)) ScanSoon();  // a pipe ended: the job may be over
        FlushOutput(*j);
      });
    }
  }
}

void JobRunner::FlushOutput(RunningJob& job) {
  job.output.Flush(
      clock_.Now(),
      [&](int64_t offset, const std::string& data) { spool_.Append(job.je, offset, data); },
      send_);
}

// ---- state for others ----

void JobRunner::FillRunning(google::protobuf::RepeatedPtrField<bus::RunningJob>* running) const {
  for (const auto& [id, job] : jobs_) job.FillRunning(*running->Add());
}

std::optional<RshJob> JobRunner::RshJobOf(const JobEpoch& je) const {
  const RunningJob* job = Find(je);
  return job == nullptr ? std::nullopt : std::optional<RshJob>(job->Rsh());
}

void JobRunner::SessionStarted(const JobEpoch& je, int32_t host) {
  if (RunningJob* job = Find(je)) ++job->sessions_started[host];
  ScanSoon();
}

void JobRunner::SessionEnded(const JobEpoch& je, int32_t host, int status) {
  RunningJob* job = Find(je);
  if (job == nullptr || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) return;
  if (job->life.preempted() || job->life.killing()) return;  // its end, not its failure
  spdlog::info("job {} epoch {}: a command on host {} failed (status {:#x})", je.job.value(),
               je.epoch, host, status);
  job->failed_here = true;
}

Result<JobAccount> JobRunner::AccountOf(const JobEpoch& je) const {
  const RunningJob* job = Find(je);
  if (job == nullptr) return NotFound("job " + std::to_string(je.job.value()) + " epoch " +
                                      std::to_string(je.epoch) + " does not run here");
  return job->account;
}

std::string JobRunner::ScratchOf(const JobEpoch& je, int32_t host) const {
  const RunningJob* job = Find(je);
  return job == nullptr ? "" : job->ScratchOf(host);
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
  processes_.ClearRecord();
}

}  // namespace podsched::agent
