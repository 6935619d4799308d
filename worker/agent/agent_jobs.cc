#include "worker/agent/agent_internal.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "store/objects/object_store.h"
#include "worker/agent/child.h"
#include "worker/agent/mpirun_argv.h"
#include "worker/progress/progress_wire.h"

namespace podsched::agent::internal {

// ---- jobs ----

void Agent::OnLaunch(const bus::Launch& l) {
  if (auto r = ValidateLaunch(l, o_.hosts)) return Drop(*r);
  const JobEpoch je{JobId(l.job().job_id()), l.job().epoch()};
  const auto outcome = book_.OnLaunch(je);
  switch (outcome.decision) {
    case LaunchBook::Decision::kStale:
      return Drop({"stale_epoch", "Launch of job " + std::to_string(je.job.value()) + " epoch " +
                                      std::to_string(je.epoch) + " (highest seen: " +
                                      std::to_string(book_.HighestEpoch(je.job)) + ")"});
    case LaunchBook::Decision::kReplaceOlder: {
      Job& old = jobs_.at(je.job);
      spdlog::warn("job {} epoch {} replaces running epoch {}: killing it first", je.job.value(),
                   je.epoch, old.je.epoch);
      old.next = l;
      Scan();
      KillJob(old);
      return;
    }
    case LaunchBook::Decision::kStart:
      return StartJob(l);
  }
}

void Agent::StartJob(const bus::Launch& l) {
  const JobEpoch je{JobId(l.job().job_id()), l.job().epoch()};
  Job& job = jobs_[je.job];
  job = Job{};
  job.launch = l;
  job.je = je;
  job.launched_at = Steady::now();
  job.grace_seconds = l.grace_seconds();
  for (int32_t h : l.hosts()) {
    if (std::binary_search(o_.hosts.begin(), o_.hosts.end(), h)) job.my_hosts.push_back(h);
  }
  std::sort(job.my_hosts.begin(), job.my_hosts.end());
  job.launcher = std::binary_search(o_.hosts.begin(), o_.hosts.end(), l.hosts(0));
  book_.MarkRunning(je);
  spdlog::info("job {} epoch {}: launch on hosts {} ({})", je.job.value(), je.epoch,
               l.hosts_size(), job.launcher ? "launcher" : "remote hosts only");
  if (!job.launcher) return;

  // The launcher: mpirun in its own process group, output to pipes and a spool file.
  std::vector<std::string> overrides, names;
  for (const auto& [name, value] : l.env()) {
    if (IsReservedEnvName(name)) {
      spdlog::warn("job {}: env {} is set by podworker; the Launch's value is ignored",
                   je.job.value(), name);
      continue;
    }
    overrides.push_back(name + "=" + value);
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  overrides.push_back("POD_PROGRESS_ENDPOINT=" + progress_endpoint_);
  names.push_back("POD_PROGRESS_ENDPOINT");
  std::map<int32_t, std::string> eps(l.rsh_endpoints().begin(), l.rsh_endpoints().end());
  overrides.push_back("POD_RSH_ENDPOINTS=" + FormatRshEndpoints(eps));
  overrides.push_back("POD_RSH_TOKEN=" + l.rsh_token());
  overrides.push_back("POD_JOB_ID=" + std::to_string(je.job.value()));
  overrides.push_back("POD_EPOCH=" + std::to_string(je.epoch));
  overrides.push_back(std::string(kTagVariable) + "=" + TagValue(je, l.hosts(0)));

  MpirunPlan plan;
  plan.mpirun = o_.mpirun;
  plan.podworker = o_.podworker_path;
  plan.hosts.assign(l.hosts().begin(), l.hosts().end());
  plan.ranks_per_host = l.ranks_per_host();
  plan.command.assign(l.command().begin(), l.command().end());
  plan.env_names = names;
  plan.subnet = o_.mpi_subnet;
  plan.run_as_root = geteuid() == 0;
  plan.extra_args = o_.mpirun_args;
  auto argv = BuildMpirunArgv(plan);

  job.spool_path = state_.path() + "/job-" + std::to_string(je.job.value()) + "-epoch-" +
                   std::to_string(je.epoch) + ".log";
  job.spool_fd = open(job.spool_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

  Result<ChildProcess> child =
      argv ? SpawnChild(*argv, EnvironmentWith(overrides)) : std::unexpected(argv.error());
  if (!child) {
    spdlog::error("job {} epoch {}: cannot start mpirun: {}", je.job.value(), je.epoch,
                  child.error().ToString());
    job.mpirun_reaped = true;
    job.mpirun_status = 127 << 8;
    job.pending_log = "podworker: cannot start mpirun: " + child.error().message() + "\n";
    return;
  }
  job.mpirun = child->pid;
  job.out.fd = child->stdout_fd;
  job.err.fd = child->stderr_fd;
  next_scan_ = Steady::now();
}

void Agent::OnPreempt(const bus::Preempt& p) {
  if (auto r = ValidateJobControl(p.job(), book_.RunningEpoch(JobId(p.job().job_id())))) {
    return Drop(*r);
  }
  if (p.grace_seconds() < 0 || p.grace_seconds() > 24 * 3600) {
    return Drop({"invalid", "Preempt grace_seconds out of range"});
  }
  Job* job = FindJob({JobId(p.job().job_id()), p.job().epoch()});
  if (job == nullptr || job->preempt || job->kill) return;
  spdlog::info("job {} epoch {}: preempt ({}), grace {} s", job->je.job.value(), job->je.epoch,
               p.reason(), p.grace_seconds());
  job->preempt = true;
  job->grace_seconds = p.grace_seconds();
  job->grace_deadline = Steady::now() + std::chrono::seconds(p.grace_seconds());
  Scan();
  SignalRanks(*job);
}

void Agent::OnKill(const bus::Kill& k) {
  if (auto r = ValidateJobControl(k.job(), book_.RunningEpoch(JobId(k.job().job_id())))) {
    return Drop(*r);
  }
  Job* job = FindJob({JobId(k.job().job_id()), k.job().epoch()});
  if (job == nullptr) return;
  spdlog::info("job {} epoch {}: kill ({})", job->je.job.value(), job->je.epoch, k.reason());
  job->kill = true;
  Scan();
  KillJob(*job);
}

// SIGKILL to everything of the job known now; Scan() repeats it for processes found later.
void Agent::KillJob(Job& job) {
  if (!job.grace_expired) job.kill = true;
  if (job.mpirun > 0 && !job.mpirun_reaped) kill(-job.mpirun, SIGKILL);
  for (auto& [fd, s] : sessions_) {
    if (s->je == job.je && s->pid > 0 && !s->reaped) kill(-s->pid, SIGKILL);
  }
  for (pid_t p : job.pids) kill(p, SIGKILL);
}

// A rank: a child of an orted that has exec'd its program (a child still named orted is
// between fork and exec, where a SIGTERM would kill it before it has a handler).
bool Agent::IsRank(pid_t pid) const {
  auto self = procs_.find(pid);
  if (self == procs_.end() || self->second.comm == "orted") return false;
  auto parent = procs_.find(self->second.ppid);
  return parent != procs_.end() && parent->second.comm == "orted";
}

// SIGTERM to the job's ranks (not orted, not mpirun: a SIGTERM to those kills the ranks before
// their handler can checkpoint). Ranks seen later are signalled by later scans; a rank that has
// just started gets it once it has a SIGTERM handler, or after 1 s without one (a program that
// never installs one is not waited for).
void Agent::SignalRanks(Job& job) {
  const auto now = Steady::now();
  for (pid_t p : job.pids) {
    if (!IsRank(p) || job.termed.count(p)) continue;
    const auto seen = job.rank_seen.try_emplace(p, now).first->second;
    if (!HandlesSignal(p, SIGTERM) && now - seen < std::chrono::seconds(1)) continue;
    job.termed.insert(p);
    kill(p, SIGTERM);
  }
}

void Agent::Scan() {
  next_scan_ = Steady::now() + kScanInterval;
  procs_.clear();
  for (auto& [id, job] : jobs_) job.pids.clear();
  std::vector<std::pair<pid_t, uint64_t>> record;
  std::map<pid_t, std::pair<uint64_t, std::string>> cache;
  for (pid_t pid : Descendants(getpid())) {
    auto info = ReadProc(pid);
    if (!info) continue;
    procs_[pid] = *info;
    if (info->zombie) continue;
    record.emplace_back(pid, info->start_time);
    auto cached = tag_cache_.find(pid);
    std::string tag;
    if (cached != tag_cache_.end() && cached->second.first == info->start_time) {
      tag = cached->second.second;
    } else {
      tag = ReadEnvVar(pid, kTagVariable).value_or("");
    }
    cache[pid] = {info->start_time, tag};
    int64_t job_id = 0, epoch = 0;
    int32_t host = 0;
    if (!ParseTag(tag, job_id, epoch, host)) continue;
    Job* job = FindJob({JobId(job_id), epoch});
    if (job == nullptr) {
      // A process of an epoch this agent no longer runs: never two epochs of one job.
      spdlog::warn("killing pid {} ({}) of job {} epoch {}, which does not run here", pid,
                   info->comm, job_id, epoch);
      kill(pid, SIGKILL);
      continue;
    }
    job->pids.push_back(pid);
  }
  tag_cache_ = std::move(cache);
  if (auto s = state_.Record(std::move(record)); !s.ok()) spdlog::warn("{}", s.ToString());

  const auto now = Steady::now();
  for (auto& [id, job] : jobs_) {
    if (job.kill || job.grace_expired) {
      for (pid_t p : job.pids) kill(p, SIGKILL);
      continue;
    }
    if (!job.preempt) continue;
    SignalRanks(job);  // ranks that started after the Preempt
    if (now < job.grace_deadline) continue;
    const bool ranks_alive =
        std::any_of(job.pids.begin(), job.pids.end(), [&](pid_t p) { return IsRank(p); });
    if (!ranks_alive && job.grace_extensions < 5) {
      // The ranks exited in time; mpirun and orted are still winding down.
      ++job.grace_extensions;
      job.grace_deadline = now + std::chrono::seconds(1);
      continue;
    }
    spdlog::warn("job {} epoch {}: grace of {} s over, SIGKILL", job.je.job.value(), job.je.epoch,
                 job.grace_seconds);
    job.grace_expired = true;
    KillJob(job);
  }
}

void Agent::CheckJobs() {
  const auto now = Steady::now();
  std::vector<JobId> ended;
  for (auto& [id, job] : jobs_) {
    const bool sessions_open = std::any_of(sessions_.begin(), sessions_.end(),
                                           [&](const auto& s) { return s.second->je == job.je; });
    if (sessions_open || !job.pids.empty() || job.out.fd >= 0 || job.err.fd >= 0) continue;
    if (job.launcher) {
      if (!job.mpirun_reaped) continue;
    } else {
      const bool all_sessions_seen = job.session_hosts.size() == job.my_hosts.size();
      const bool timed_out = now - job.launched_at > milliseconds(o_.start_timeout_ms);
      // A job preempted while mpirun is still starting its daemons: stay until the grace ends,
      // so the late rsh request is accepted and its ranks get the SIGTERM (not a refusal that
      // turns the preemption into a failure).
      const bool preempt_over = job.preempt && now >= job.grace_deadline;
      if (!all_sessions_seen && !job.kill && !preempt_over && !timed_out) continue;
    }
    // The last scan may predate the newest processes: look once more before declaring it gone.
    if (now - (next_scan_ - kScanInterval) > milliseconds(20)) {
      Scan();
      if (!job.pids.empty()) continue;
    }
    ended.push_back(id);
  }
  for (JobId id : ended) {
    auto it = jobs_.find(id);
    if (it != jobs_.end()) FinishJob(it->second);
  }
}

void Agent::FinishJob(Job& job) {
  ExitReport report;
  report.job = job.je;
  report.hosts = job.my_hosts;
  report.last_checkpoint_step = job.last_checkpoint_step;
  if (job.launcher) {
    const Verdict v = ClassifyExit({job.mpirun_status, job.kill, job.preempt, job.grace_expired,
                                    job.grace_seconds});
    report.reason = v.reason;
    report.exit_code = v.exit_code;
    report.message = v.message;
    FlushLog(job, /*final=*/true);
    UploadLog(job);
    if (v.reason == ExitReason::kFailed) {
      const size_t keep = std::min<size_t>(job.tail.size(), 4096);
      spdlog::warn("job {} epoch {} failed; last output:\n{}", job.je.job.value(), job.je.epoch,
                   job.tail.substr(job.tail.size() - keep));
    }
  } else {
    report.reason = ExitReason::kReleased;
    report.message = job.session_hosts.empty() ? "no process was started here"
                                                : "processes gone";
  }
  spdlog::info("job {} epoch {}: exited {} ({})", job.je.job.value(), job.je.epoch,
               ExitReasonName(report.reason), report.message);
  book_.AddExit(report);
  book_.MarkEnded(job.je);
  bus::Envelope env;
  ToProto(report, *env.mutable_exited());
  Send(env);
  CloseFd(job.spool_fd);
  if (!job.spool_path.empty()) std::filesystem::remove(job.spool_path);
  std::optional<bus::Launch> next = std::move(job.next);
  jobs_.erase(job.je.job);
  if (next) StartJob(*next);
}

void Agent::ReadJobPipe(Job& job, LinePipe& pipe) {
  char buf[65536];
  const ssize_t n = read(pipe.fd, buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    if (!pipe.partial.empty()) {
      job.pending_log += pipe.partial + "\n";
      pipe.partial.clear();
    }
    CloseFd(pipe.fd);
    FlushLog(job, false);
    return;
  }
  const std::string_view data(buf, static_cast<size_t>(n));
  pipe.partial.append(data);
  const size_t last_nl = pipe.partial.rfind('\n');
  if (last_nl != std::string::npos) {
    job.pending_log.append(pipe.partial, 0, last_nl + 1);
    pipe.partial.erase(0, last_nl + 1);
  }
  if (pipe.partial.size() >= kMaxLogMessage) {  // a line longer than a Log message: cut it
    job.pending_log += pipe.partial + "\n";
    pipe.partial.clear();
  }
  FlushLog(job, false);
}

void Agent::FlushLog(Job& job, bool final) {
  if (final) {
    for (LinePipe* p : {&job.out, &job.err}) {
      if (!p->partial.empty()) job.pending_log += p->partial + "\n";
      p->partial.clear();
    }
  }
  while (!job.pending_log.empty()) {
    size_t n = job.pending_log.size();
    if (n > kMaxLogMessage) {
      const size_t nl = job.pending_log.rfind('\n', kMaxLogMessage - 1);
      n = nl == std::string::npos ? kMaxLogMessage : nl + 1;
    }
    const std::string_view chunk(job.pending_log.data(), n);
    if (job.spool_fd >= 0) {
      if (job.log_offset + static_cast<int64_t>(n) <= kMaxSpool) {
        (void)!write(job.spool_fd, chunk.data(), chunk.size());
      } else if (job.log_offset <= kMaxSpool) {
        const std::string note = "podworker: output beyond " + std::to_string(kMaxSpool >> 20) +
                                 " MiB is not stored (it was streamed as Log messages)\n";
        (void)!write(job.spool_fd, note.data(), note.size());  // once: the crossing chunk
      }
    }
    job.tail.append(chunk);
    if (job.tail.size() > kLogTail) job.tail.erase(0, job.tail.size() - kLogTail);
    bus::Envelope env;
    auto* log = env.mutable_log();
    log->mutable_job()->set_job_id(job.je.job.value());
    log->mutable_job()->set_epoch(job.je.epoch);
    log->set_offset(job.log_offset);
    log->set_data(std::string(chunk));
    Send(env);
    job.log_offset += static_cast<int64_t>(n);
    job.pending_log.erase(0, n);
  }
}

void Agent::UploadLog(Job& job) {
  if (job.launch.log_url().empty()) return;
  auto store = store::OpenObjectStore(job.launch.log_url());
  const std::string key = std::to_string(job.je.job.value()) + "/logs/epoch-" +
                          std::to_string(job.je.epoch) + ".log";
  if (!store) {
    spdlog::warn("job {}: log store {}: {}", job.je.job.value(), job.launch.log_url(),
                 store.error().ToString());
    return;
  }
  std::ifstream in(job.spool_path, std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (auto s = (*store)->Put(key, all); !s.ok()) {
    spdlog::warn("job {}: storing {}: {}", job.je.job.value(), key, s.ToString());
  }
}

// ---- progress ----

void Agent::OnProgressDatagram() {
  char buf[65536];
  while (true) {
    const ssize_t n = recv(udp_fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) return;
    auto p = progress::ParseProgressJson(std::string_view(buf, static_cast<size_t>(n)));
    if (!p) {
      Drop({"progress_malformed", p.error().message()});
      continue;
    }
    Job* job = nullptr;
    for (auto& [id, j] : jobs_) {
      if (j.launcher && std::to_string(id.value()) == p->job && j.je.epoch == p->epoch) job = &j;
    }
    if (job == nullptr) {
      Drop({"progress_other_job", "progress of job '" + p->job.substr(0, 32) + "' epoch " +
                                      std::to_string(p->epoch) + " does not run here"});
      continue;
    }
    if (const int64_t step = progress::CheckpointStep(p->checkpoint); step > 0) {
      job->last_checkpoint_step = step;
    }
    bus::Envelope env;
    auto* pr = env.mutable_progress();
    pr->mutable_job()->set_job_id(job->je.job.value());
    pr->mutable_job()->set_epoch(job->je.epoch);  // from the Launch, never from the datagram
    pr->set_step(p->step);
    pr->set_loss(p->loss);
    pr->set_accuracy(p->accuracy);
    pr->set_examples_per_second(p->examples_per_s);
    pr->set_last_checkpoint_step(job->last_checkpoint_step);
    pr->set_total_steps(p->steps);
    Send(env);
  }
}


}  // namespace podsched::agent::internal
