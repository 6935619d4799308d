#include "scheduler/core/scheduler.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/check.h"
#include "scheduler/core/scheduler_impl.h"
#include "scheduler/core/spec.h"
#include "scheduler/core/state_machine.h"

namespace podsched::core {
namespace {

std::string JobName(JobId id) { return "job " + std::to_string(id.value()); }

Result<JobRecord*> FindActive(std::map<JobId, JobRecord>& jobs, JobId id) {
  auto it = jobs.find(id);
  if (it == jobs.end()) return NotFound(JobName(id) + " does not exist");
  if (IsTerminal(it->second.state)) {
    return FailedPrecondition(JobName(id) + " already ended " +
                              std::string(JobStateName(it->second.state)));
  }
  return &it->second;
}

}  // namespace

Scheduler::Impl::Impl(pod::Pod p, SchedulerConfig c, Profile prof,
                      std::unique_ptr<pod::PlacementPolicy> pl, JobRepository* r)
    : hosts(std::move(p)),
      config(std::move(c)),
      accounting(Accounting::Rules{config.default_quota, config.fair_share_half_life,
                                   config.max_jobs_created_per_user_per_hour}),
      profile(prof),
      placement(std::move(pl)),
      repo(r),
      rng(config.seed) {}

void Scheduler::Impl::Enqueue(JobRecord& job, TimePoint now) {
  queued[job.id] = QueuedRef{&job, &types.at(job.id), &accounting.User(job.spec.user, now),
                             &accounting.InUse(job.spec.user)};
}

Status Scheduler::Impl::Transition(JobRecord& job, JobState to, std::string reason,
                                   TimePoint now) {
  Status legal = CheckTransition(job.id, job.state, to);
  if (!legal.ok()) return legal;
  JobEvent event;
  event.time = now;
  event.job = job.id;
  event.epoch = job.epoch;
  event.from = job.state;
  event.to = to;
  event.reason = reason;
  if (job.placement) event.hosts = hosts.pod().HostsIn(*job.placement);

  const bool held = HoldsHosts(job.state);
  const bool holds = HoldsHosts(to);
  if (!held && holds) {
    accounting.StartHolding(job.id, job.spec.user, job.spec.preemptible, Cores(job.id),
                            job.start_time);
  }
  if (held && !holds) {
    // Close the epoch's accounting: the job's usage (and, in Accounting, the user's).
    job.run_time += now - job.start_time;
    job.usage_core_hours += accounting.StopHolding(job.id, now);
    job.placement.reset();
    timers.ClearKill(job.id);
  }
  if (job.state == JobState::kQueued) queued.erase(job.id);
  if (to == JobState::kQueued) Enqueue(job, now);
  NoteTransition(job, job.state, to);
  --jobs_in_state[static_cast<int>(job.state)];
  ++jobs_in_state[static_cast<int>(to)];
  job.state = to;
  job.reason = std::move(reason);
  if (IsTerminal(to)) {
    job.end_time = now;
    if (active.erase(job.id) > 0) {
      ActiveUse& u = active_per_user[job.spec.user];
      u.spec_bytes -= SpecBytes(job.spec);
      if (--u.jobs == 0) active_per_user.erase(job.spec.user);
    }
    hosts.Unreserve(job.id);
    unasked_exits.erase(job.id);  // also when it ends without another exit (cancelled queued)
    CountDependencyTargets(job.spec, -1);
    if (config.ended_job_retention > Duration::zero()) {
      forget_at.emplace(now + config.ended_job_retention, job.id);
    }
  }
  if (to != JobState::kQueued) hosts.Unreserve(job.id);
  outbox.Record(std::move(event));
  ++stats.events;
  // Only changes that can let a waiting job start (or change the queue) need a pass.
  if ((held && !holds) || to == JobState::kQueued || IsTerminal(to)) dirty = true;
  return Status::Ok();
}

const JobRecord* Scheduler::Impl::LiveOwner(const Lease& lease) const {
  const JobRecord& job = jobs.at(lease.owner.job);
  return job.epoch == lease.owner.epoch && HoldsHosts(job.state) ? &job : nullptr;
}

void Scheduler::Impl::SetReason(JobRecord& job, const std::string& reason) {
  if (job.reason == reason) return;
  job.reason = reason;
  outbox.Changed(job.id);
}

void Scheduler::Impl::Bind(JobRecord& job, const pod::Placement& p, TimePoint now) {
  const JobEpoch owner{job.id, job.epoch + 1};
  auto held = hosts.Hold(owner, p);
  PODSCHED_CHECK_MSG(held.has_value(), held.error().message().c_str());
  job.epoch = owner.epoch;
  job.placement = p;
  job.start_time = now;
  job.last_checkpoint_time = now;
  Status moved = Transition(job, JobState::kPlaced, "placed", now);
  PODSCHED_CHECK_MSG(moved.ok(), moved.message().c_str());
  LaunchPlan launch{owner,
                    types.at(job.id),
                    hosts.pod().name(),
                    p,
                    hosts.pod().HostsIn(p),
                    job.spec.command,
                    job.spec.args,
                    job.spec.env,
                    job.spec.ranks_per_host,
                    job.spec.launcher,
                    job.spec.grace_period,
                    job.restarts,
                    job.preemptions,
                    job.spec.array,
                    job.spec.user};
  outbox.Send(std::move(launch));
  ++stats.launches;
  ArmHoldTimers(job, /*draw_reclaim=*/true);
}

void Scheduler::Impl::ArmHoldTimers(const JobRecord& job, bool draw_reclaim) {
  const JobEpoch owner{job.id, job.epoch};
  if (job.state == JobState::kPreempting) {
    timers.Add(job.preempt_deadline, TimerKind::kKill, owner);
    return;
  }
  if (job.spec.preemptible) {
    if (config.preemptible_lifetime > Duration::zero()) {
      timers.Add(job.start_time + config.preemptible_lifetime, TimerKind::kLifetime, owner);
    }
    if (draw_reclaim && config.reclaim_rate_per_hour > 0) {
      std::exponential_distribution<double> hours(config.reclaim_rate_per_hour);
      timers.Add(job.start_time + FromSeconds(hours(rng) * 3600.0), TimerKind::kReclaim, owner);
    }
  }
  if (job.spec.max_runtime > Duration::zero()) {
    timers.Add(job.start_time + RuntimeLeftAtStart(job), TimerKind::kMaxRuntime, owner);
  }
}

Duration Scheduler::Impl::RuntimeLeftAtStart(const JobRecord& job) const {
  return std::max(job.spec.max_runtime - job.run_time, Duration::zero());
}

bool Scheduler::Impl::RuntimeExhausted(const JobRecord& job, TimePoint now) const {
  if (job.spec.max_runtime <= Duration::zero()) return false;
  const Duration held_now = HoldsHosts(job.state) ? now - job.start_time : Duration::zero();
  return job.run_time + held_now >= job.spec.max_runtime;
}

std::string Scheduler::Impl::MaxRuntimeReason(const JobRecord& job) const {
  return "max_runtime of " +
         std::to_string(static_cast<int64_t>(ToSeconds(job.spec.max_runtime))) + " s reached";
}

void Scheduler::Impl::StartPreemption(JobRecord& job, std::string reason,
                                      std::optional<JobId> reserved_for, TimePoint now) {
  const JobEpoch owner{job.id, job.epoch};
  std::vector<HostId> held = hosts.pod().HostsIn(*job.placement);
  job.preempt_deadline = now + job.spec.grace_period;
  job.reserved_for = reserved_for;
  Status moved = Transition(job, JobState::kPreempting, reason, now);
  PODSCHED_CHECK_MSG(moved.ok(), moved.message().c_str());
  PreemptAction preempt{owner, job.spec.grace_period, std::move(held), reason};
  outbox.Send(std::move(preempt));
  timers.Add(job.preempt_deadline, TimerKind::kKill, owner);
  ++stats.preemptions;
}

void Scheduler::Impl::HostGone(JobEpoch owner, std::optional<HostId> host) {
  if (hosts.Gone(owner, host)) dirty = true;
}

void Scheduler::Impl::FailOrRetry(JobRecord& job, const std::string& why, TimePoint now) {
  ++job.restarts;
  if (job.restarts > job.spec.max_restarts) {
    Status s = Transition(job, JobState::kFailed,
                          "failed after " + std::to_string(job.spec.max_restarts) +
                              " restarts: " + why,
                          now);
    PODSCHED_CHECK(s.ok());
    return;
  }
  // Exponential backoff: base, 2 base, 4 base, ... capped.
  Duration backoff = config.retry_backoff_base;
  for (int i = 1; i < job.restarts && backoff < config.retry_backoff_max; ++i) backoff *= 2;
  backoff = std::min(backoff, config.retry_backoff_max);
  job.not_before = now + backoff;
  timers.AddWakeup(job.not_before);
  Status s = Transition(job, JobState::kQueued,
                        "retry " + std::to_string(job.restarts) + "/" +
                            std::to_string(job.spec.max_restarts) + " in " +
                            std::to_string(static_cast<int64_t>(ToSeconds(backoff))) +
                            " s after: " + why,
                        now);
  PODSCHED_CHECK(s.ok());
}

void Scheduler::Impl::ApplyExit(JobRecord& job, ExitKind kind, const std::string& reason,
                                TimePoint now) {
  if (kind != ExitKind::kPreempted && kind != ExitKind::kNeverStarted) {
    unasked_exits.erase(job.id);
  }
  if (kind == ExitKind::kSucceeded) {
    PODSCHED_CHECK(Transition(job, JobState::kSucceeded, "exited 0", now).ok());
    return;
  }
  if (job.state == JobState::kPreempting && job.cancel_requested) {
    PODSCHED_CHECK(Transition(job, JobState::kCancelled, "cancelled", now).ok());
    return;
  }
  // A job that used up its max_runtime ends here, whatever stopped it (the limit's own
  // preemption, another preemption, a crash): it is never requeued past its limit.
  if (RuntimeExhausted(job, now)) {
    PODSCHED_CHECK(Transition(job, JobState::kFailed, MaxRuntimeReason(job), now).ok());
    return;
  }
  if (job.state == JobState::kPreempting) {
    // Any exit while preempting is the preemption completing (SIGKILL looks like a failure).
    ++job.preemptions;
    // A kill after the grace period says so (the program did not honour SIGTERM).
    std::string why = "preempted: " + job.reason;
    if (kind == ExitKind::kKilled && !reason.empty()) why += "; " + reason;
    PODSCHED_CHECK(Transition(job, JobState::kQueued, why, now).ok());
    return;
  }
  if (kind == ExitKind::kPreempted) {
    // Exit 75 without a Preempt of ours: the job saved and stopped because its host is going
    // away (podworker stopping, the provider's notice). A preemption, not a failure. But a
    // program that exits 75 on its own again and again would loop place, launch, requeue
    // forever (the audit's M3): past kFreeUnaskedExits within an hour it waits, doubling.
    ++job.preemptions;
    std::string why = reason.empty() ? "preempted (exit 75)" : reason;
    if (auto [count, backoff] = CountUnaskedRequeue(job, now); backoff > Duration::zero()) {
      why = "preempted: " + std::to_string(count) +
            " exits 75 without a preemption within an hour, waits " +
            std::to_string(static_cast<int64_t>(ToSeconds(backoff))) + " s (" + why + ")";
    }
    PODSCHED_CHECK(Transition(job, JobState::kQueued, why, now).ok());
    return;
  }
  if (kind == ExitKind::kNeverStarted && job.state == JobState::kPlaced) {
    // The launch was lost, not the job's doing (audit L11: podsched crashed between committing
    // PLACED and sending the Launch): requeued without a restart charged, under the same
    // hourly count as exits 75, so an agent that dies at every launch does not loop freely.
    std::string why = "requeued: its launch never started (" + reason + "); not a failure";
    if (auto [count, backoff] = CountUnaskedRequeue(job, now); backoff > Duration::zero()) {
      why = "requeued: " + std::to_string(count) +
            " launches lost or exits 75 within an hour, waits " +
            std::to_string(static_cast<int64_t>(ToSeconds(backoff))) + " s (" + reason + ")";
    }
    PODSCHED_CHECK(Transition(job, JobState::kQueued, why, now).ok());
    return;
  }
  FailOrRetry(job, reason.empty() ? "exited with an error" : reason, now);
}

std::pair<size_t, Duration> Scheduler::Impl::CountUnaskedRequeue(JobRecord& job,
                                                                 TimePoint now) {
  std::deque<TimePoint>& recent = unasked_exits[job.id];
  while (!recent.empty() && recent.front() <= now - std::chrono::hours(1)) recent.pop_front();
  recent.push_back(now);
  const int excess = static_cast<int>(recent.size()) - kFreeUnaskedExits;
  if (excess <= 0) return {recent.size(), Duration::zero()};
  Duration backoff = config.retry_backoff_base;
  for (int i = 1; i < excess && backoff < config.retry_backoff_max; ++i) backoff *= 2;
  backoff = std::min(backoff, config.retry_backoff_max);
  job.not_before = now + backoff;
  timers.AddWakeup(job.not_before);
  return {recent.size(), backoff};
}

void Scheduler::Impl::RunTimers(TimePoint now) {
  while (const std::optional<Timer> due = timers.PopDue(now)) {
    const Timer& timer = *due;
    if (timer.kind == TimerKind::kWakeup) {
      dirty = true;  // a waiting job may have become eligible (backoff, minimum runtime)
      continue;
    }
    auto it = jobs.find(timer.job.job);
    if (it == jobs.end() || it->second.epoch != timer.job.epoch) continue;
    JobRecord& job = it->second;
    switch (timer.kind) {
      case TimerKind::kKill:
        if (job.state == JobState::kPreempting && timers.TakeKill(job.id)) {
          KillAction kill{timer.job, hosts.pod().HostsIn(*job.placement),
                          "grace period of " +
                              std::to_string(static_cast<int64_t>(
                                  ToSeconds(job.spec.grace_period))) +
                              " s expired"};
          outbox.Send(std::move(kill));
        }
        break;
      case TimerKind::kMaxRuntime:
        if (HoldsHosts(job.state) && job.state != JobState::kPreempting) {
          StartPreemption(job, MaxRuntimeReason(job), std::nullopt, now);
        }
        break;
      case TimerKind::kReclaim:
      case TimerKind::kLifetime:
        if (HoldsHosts(job.state) && job.state != JobState::kPreempting) {
          StartPreemption(job,
                          timer.kind == TimerKind::kReclaim
                              ? "provider reclaim of a preemptible allocation"
                              : "24-hour preemptible lifetime reached",
                          std::nullopt, now);
        }
        break;
      case TimerKind::kWakeup:
        break;
    }
  }
}

Result<Actions> Scheduler::Impl::Finish(TimePoint now) {
  ResolveDependencies(now);
  Outbox::Batch out = outbox.Take();
  StoreBatch batch;
  batch.jobs.reserve(out.changed_jobs.size());
  for (JobId id : out.changed_jobs) batch.jobs.push_back(jobs.at(id));
  batch.users = accounting.TakeChanged();
  batch.events = std::move(out.events);
  if (!batch.empty()) {
    Status committed = repo->Commit(batch);
    if (!committed.ok()) return std::unexpected(committed.WithContext("job store commit"));
  }
  return std::move(out.actions);
}

// ------------------------------------------------------------------------------------------
// Public API.

Scheduler::Scheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Scheduler::~Scheduler() = default;

Result<std::unique_ptr<Scheduler>> Scheduler::Create(pod::Pod pod, SchedulerConfig config,
                                                     JobRepository* repo, TimePoint now) {
  PODSCHED_CHECK(repo != nullptr);
  auto profile = LookupProfile(config.profile);
  if (!profile) return std::unexpected(profile.error());
  auto placement = pod::MakePlacementPolicy(profile->placement);
  if (!placement) return std::unexpected(placement.error());
  if (config.fair_share_half_life <= Duration::zero() || config.aging_step <= Duration::zero()) {
    return InvalidArgument("fair_share_half_life and aging_step must be > 0");
  }
  if (config.reclaim_rate_per_hour < 0) return InvalidArgument("reclaim rate must be >= 0");
  if (config.max_jobs_created_per_user_per_hour < 1) {
    return InvalidArgument("max_jobs_created_per_user_per_hour must be >= 1");
  }
  if (config.ended_job_retention < Duration::zero()) {
    return InvalidArgument("ended_job_retention must be >= 0");
  }
  const bool retention = config.ended_job_retention > Duration::zero();
  auto loaded = retention ? repo->LoadEndedSince(now - config.ended_job_retention) : repo->Load();
  if (!loaded) return std::unexpected(loaded.error().WithContext("loading the job store"));
  if (retention) {
    Status targets = LoadDependencyTargets(*repo, &*loaded);
    if (!targets.ok()) return std::unexpected(targets.WithContext("loading the job store"));
  }

  auto impl = std::make_unique<Impl>(std::move(pod), std::move(config), *profile,
                                     std::move(*placement), repo);
  impl->next_job_id = loaded->next_job_id;
  impl->outbox.SetNextEventSeq(loaded->next_event_seq);
  impl->accounting.Load(std::move(loaded->users));
  impl->quarantined = std::move(loaded->quarantined);
  for (JobRecord& job : loaded->jobs) {
    auto type = ValidateSpec(job.spec, impl->hosts.pod(), SpecOrigin::kStored);
    if (!type && IsTerminal(job.state)) {
      impl->quarantined.push_back(
          {job.id, std::string(JobStateName(job.state)) + ", " + type.error().message()});
      continue;
    }
    if (!type) {
      return std::unexpected(type.error().WithContext(
          JobName(job.id) + " (" + std::string(JobStateName(job.state)) +
          ") cannot run on the configured pod; restore the pod's configuration, or let it end "
          "first"));
    }
    impl->types.emplace(job.id, *type);
    ++impl->jobs_in_state[static_cast<int>(job.state)];
    if (!IsTerminal(job.state)) {
      impl->active.insert(job.id);
      impl->AddActive(job.spec);
      impl->CountDependencyTargets(job.spec, +1);
    } else if (retention) {
      impl->forget_at.emplace(job.end_time + impl->config.ended_job_retention, job.id);
    }
    const bool waiting = job.state == JobState::kQueued;
    if (HoldsHosts(job.state)) {
      if (!job.placement) return Internal(JobName(job.id) + " holds hosts but has no placement");
      auto held = impl->hosts.Hold(JobEpoch{job.id, job.epoch}, *job.placement);
      if (!held) return std::unexpected(held.error().WithContext(JobName(job.id)));
      impl->accounting.StartHolding(job.id, job.spec.user, job.spec.preemptible,
                                    type->tensor_cores(), job.start_time);
      impl->ArmHoldTimers(job, /*draw_reclaim=*/false);
    }
    if (job.state == JobState::kQueued && job.not_before > now) {
      impl->timers.AddWakeup(job.not_before);
    }
    auto [it, inserted] = impl->jobs.emplace(job.id, std::move(job));
    if (waiting) impl->Enqueue(it->second, now);
  }
  // After every job is in: an index entry may name any other job.
  for (const auto& [id, job] : impl->jobs) impl->Index(job);
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

Result<JobId> Scheduler::Submit(JobSpec spec, TimePoint now) {
  Impl& s = *impl_;
  if (spec.array) return InvalidArgument("a single job's spec carries no array task");
  auto type = s.CheckSubmission(spec, 1, now);
  if (!type) return std::unexpected(type.error());
  s.accounting.ChargeCreation(spec.user, 1, now);
  const JobId id = s.Queue(std::move(spec), *type, now);
  auto done = s.Finish(now);
  if (!done) return std::unexpected(done.error());
  return id;
}

void Scheduler::Impl::CancelOne(JobRecord& j, TimePoint now) {
  if (j.state == JobState::kQueued) {
    PODSCHED_CHECK(Transition(j, JobState::kCancelled, "cancelled", now).ok());
  } else if (j.state == JobState::kPreempting) {
    j.cancel_requested = true;
    outbox.Changed(j.id);
  } else {
    j.cancel_requested = true;
    StartPreemption(j, "cancelled", std::nullopt, now);
  }
}

Result<Actions> Scheduler::Cancel(JobId id, TimePoint now) {
  Impl& s = *impl_;
  auto job = FindActive(s.jobs, id);
  if (!job) return std::unexpected(job.error());
  s.CancelOne(**job, now);
  return s.Finish(now);
}

Result<Actions> Scheduler::Preempt(JobId id, std::string reason, TimePoint now) {
  Impl& s = *impl_;
  auto job = FindActive(s.jobs, id);
  if (!job) return std::unexpected(job.error());
  JobRecord& j = **job;
  if (!HoldsHosts(j.state) || j.state == JobState::kPreempting) {
    return FailedPrecondition(JobName(id) + " is " + std::string(JobStateName(j.state)) +
                              "; only a placed or running job can be preempted");
  }
  s.StartPreemption(j, reason.empty() ? "preempted by an admin" : reason, std::nullopt, now);
  return s.Finish(now);
}

Actions Scheduler::Tick(TimePoint now) {
  Impl& s = *impl_;
  s.RunTimers(now);
  s.ForgetEndedJobs(now);
  if (s.dirty) s.RunPass(now);
  auto done = s.Finish(now);
  PODSCHED_CHECK_MSG(done.has_value(), done.error().message().c_str());
  return std::move(*done);
}

std::optional<TimePoint> Scheduler::NextTimer() const { return impl_->timers.Next(); }

bool Scheduler::dirty() const { return impl_->dirty; }

Result<Actions> Scheduler::ReportStarted(JobEpoch je, TimePoint now) {
  return impl_->Advance(je, {JobState::kPlaced}, JobState::kStarting, "processes started", now);
}

Result<Actions> Scheduler::ReportRunning(JobEpoch je, TimePoint now) {
  return impl_->Advance(je, {JobState::kPlaced, JobState::kStarting}, JobState::kRunning,
                        "every rank is running", now);
}

Result<Actions> Scheduler::Impl::Advance(JobEpoch je, std::initializer_list<JobState> from,
                                         JobState to, const char* reason, TimePoint now) {
  auto it = jobs.find(je.job);
  if (it == jobs.end()) return NotFound(JobName(je.job) + " does not exist");
  JobRecord& job = it->second;
  if (je.epoch != job.epoch) {
    ++stats.stale_reports;
  } else if (std::find(from.begin(), from.end(), job.state) != from.end()) {
    PODSCHED_CHECK(Transition(job, to, reason, now).ok());
  }
  return Finish(now);
}

Result<Actions> Scheduler::ReportProgress(JobEpoch je, int64_t step, int64_t last_checkpoint_step,
                                          TimePoint now) {
  Impl& s = *impl_;
  auto it = s.jobs.find(je.job);
  if (it == s.jobs.end()) return NotFound(JobName(je.job) + " does not exist");
  JobRecord& job = it->second;
  if (step < 0 || last_checkpoint_step < 0 || last_checkpoint_step > step) {
    return InvalidArgument("progress of " + JobName(je.job) + ": step " + std::to_string(step) +
                           " and checkpoint step " + std::to_string(last_checkpoint_step) +
                           " must satisfy 0 <= checkpoint <= step");
  }
  if (je.epoch != job.epoch || !HoldsHosts(job.state)) {
    if (je.epoch != job.epoch) ++s.stats.stale_reports;
    return s.Finish(now);
  }
  job.step = step;
  if (last_checkpoint_step > job.last_checkpoint_step) job.last_checkpoint_time = now;
  job.last_checkpoint_step = std::max(job.last_checkpoint_step, last_checkpoint_step);
  s.outbox.Changed(job.id);
  if (job.state == JobState::kPlaced || job.state == JobState::kStarting) {
    PODSCHED_CHECK(s.Transition(job, JobState::kRunning, "running", now).ok());
  }
  return s.Finish(now);
}

Result<Actions> Scheduler::ReportExited(JobEpoch je, std::optional<HostId> host, ExitKind kind,
                                        std::string reason, TimePoint now) {
  Impl& s = *impl_;
  auto it = s.jobs.find(je.job);
  if (it == s.jobs.end()) return NotFound(JobName(je.job) + " does not exist");
  JobRecord& job = it->second;
  // The processes of that epoch are gone on that host whatever the job does now.
  s.HostGone(je, host);
  if (je.epoch != job.epoch) {
    ++s.stats.stale_reports;
  } else if (HoldsHosts(job.state)) {
    s.ApplyExit(job, kind, reason, now);
  }
  return s.Finish(now);
}

Result<Actions> Scheduler::ReportHostReleased(JobEpoch je, HostId host, TimePoint now) {
  Impl& s = *impl_;
  (void)now;
  if (!s.jobs.contains(je.job)) return NotFound(JobName(je.job) + " does not exist");
  if (!s.hosts.pod().Contains(host)) {
    return NotFound("host " + std::to_string(host.value()) + " is not in the pod");
  }
  s.HostGone(je, host);
  return s.Finish(now);
}

Result<Actions> Scheduler::HostDown(HostId host, TimePoint now) {
  Impl& s = *impl_;
  if (!s.hosts.pod().Contains(host)) {
    return NotFound("host " + std::to_string(host.value()) + " is not in the pod");
  }
  Status marked = s.hosts.MarkUnhealthy(host);
  if (!marked.ok()) return std::unexpected(marked);
  s.dirty = true;
  const Lease* lease = s.hosts.LeaseOn(host);
  if (lease == nullptr) return s.Finish(now);
  const JobEpoch owner = lease->owner;
  const std::vector<HostId> held = s.hosts.pod().HostsIn(lease->placement);
  const bool live = s.LiveOwner(*lease) != nullptr;
  s.HostGone(owner, host);  // nothing runs on a dead host any more (`lease` may be gone now)
  JobRecord& job = s.jobs.at(owner.job);
  if (live) {
    const std::string why = "host " + std::to_string(host.value()) + " failed";
    KillAction kill{owner, held, why};
    s.outbox.Send(std::move(kill));
    if (job.cancel_requested) {
      PODSCHED_CHECK(s.Transition(job, JobState::kCancelled, "cancelled; " + why, now).ok());
    } else {
      PODSCHED_CHECK(s.Transition(job, JobState::kQueued, "requeued: " + why, now).ok());
    }
  }
  return s.Finish(now);
}

Result<Actions> Scheduler::HostUp(HostId host, TimePoint now) {
  Impl& s = *impl_;
  if (!s.hosts.pod().Contains(host)) {
    return NotFound("host " + std::to_string(host.value()) + " is not in the pod");
  }
  Status marked = s.hosts.MarkHealthy(host);
  if (!marked.ok()) return std::unexpected(marked);
  s.dirty = true;
  return s.Finish(now);
}

Status Scheduler::SetQuota(const UserName& user, Quota quota, TimePoint now) {
  Impl& s = *impl_;
  if (quota.on_demand_cores < 0 || quota.preemptible_cores < 0) {
    return Status(StatusCode::kInvalidArgument, "quota cores must be >= 0");
  }
  s.accounting.SetQuota(user, quota, now);
  s.dirty = true;
  auto done = s.Finish(now);
  return done ? Status::Ok() : done.error();
}

const JobRecord* Scheduler::Find(JobId job) const {
  auto it = impl_->jobs.find(job);
  return it == impl_->jobs.end() ? nullptr : &it->second;
}

Result<std::optional<JobRecord>> Scheduler::FindStored(JobId job) const {
  auto found = impl_->repo->JobsInRange(job, 1);
  if (!found) return std::unexpected(found.error().WithContext("reading " + JobName(job)));
  if (found->empty()) return std::nullopt;
  return std::move(found->front());
}

Result<EndedJobPage> Scheduler::StoredEndedJobs(const EndedJobQuery& query) const {
  return impl_->repo->EndedJobs(query);
}

QuotaUsage Scheduler::UsageOf(const UserName& user) const {
  return impl_->accounting.InUseOf(user);
}

Quota Scheduler::QuotaOf(const UserName& user) const { return impl_->accounting.QuotaOf(user); }

double Scheduler::FairShareUsage(const UserName& user, TimePoint now) const {
  return impl_->accounting.UsageNow(user, now);
}

const std::map<JobId, JobRecord>& Scheduler::jobs() const { return impl_->jobs; }
const std::vector<QuarantinedJob>& Scheduler::quarantined() const { return impl_->quarantined; }
const pod::Pod& Scheduler::pod() const { return impl_->hosts.pod(); }
const SchedulerStats& Scheduler::stats() const { return impl_->stats; }
const SchedulerConfig& Scheduler::config() const { return impl_->config; }
size_t Scheduler::JobsWithUnaskedExits() const { return impl_->unasked_exits.size(); }
int Scheduler::CoresOf(const JobRecord& job) const { return impl_->Cores(job.id); }
int Scheduler::ActiveJobs() const { return static_cast<int>(impl_->active.size()); }
const std::set<JobId>& Scheduler::ActiveJobIds() const { return impl_->active; }
int Scheduler::ActiveJobsOf(const UserName& user) const {
  auto it = impl_->active_per_user.find(user);
  return it == impl_->active_per_user.end() ? 0 : it->second.jobs;
}
int64_t Scheduler::JobsIn(JobState state) const {
  return impl_->jobs_in_state[static_cast<int>(state)];
}
QuotaUsage Scheduler::CoresHeld() const { return impl_->accounting.CoresHeld(); }
std::vector<UserName> Scheduler::KnownUsers() const {
  std::vector<UserName> out;
  out.reserve(impl_->accounting.users().size());
  for (const auto& [name, user] : impl_->accounting.users()) out.push_back(name);
  return out;
}

}  // namespace podsched::core
