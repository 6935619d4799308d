// Scheduler::Impl's own steps (scheduler_impl.h): the one Transition that updates several owners
// together, binding and preempting, exits and retries, timers, and Finish (one commit per call).
// The public calls are in scheduler.cc.
#include <algorithm>
#include <cmath>
#include <string>

#include "common/check.h"
#include "scheduler/core/scheduler_impl.h"
#include "scheduler/core/state_machine.h"

namespace podsched::core {

Scheduler::Impl::Impl(pod::Fleet p, SchedulerConfig c, Profile prof, JobRepository* r)
    : hosts(std::move(p)),
      config(std::move(c)),
      accounting(Accounting::Rules{config.default_quota, config.fair_share_half_life,
                                   config.max_jobs_created_per_user_per_hour}),
      profile(std::move(prof)),
      repo(r),
      rng(config.seed) {
  if (const double budget = config.defrag_budget_core_seconds_per_hour; budget > 0) {
    defrag_budget.emplace(budget / 3600, budget);
  }
}

void Scheduler::Impl::Enqueue(JobRecord& job, TimePoint now) {
  queued.Add(job.id, job.submit_time,
             QueuedRef{&job, *jobs.TypeOf(job.id), &accounting.User(job.spec.user, now),
                       &accounting.InUse(job.spec.user), accounting.UserNumber(job.spec.user)});
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
  if (job.placement) {
    const pod::Pod& pod = hosts.fleet().pod(job.placement->pod);
    event.pod = pod.name();
    event.hosts = pod.HostsIn(job.placement->rect);
    for (const pod::FleetPlacement& slice : job.more_slices) {
      const pod::Pod& other = hosts.fleet().pod(slice.pod);
      event.more_slices.push_back({other.name(), other.HostsIn(slice.rect)});
    }
  }

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
    job.more_slices.clear();
    timers.ClearKill(job.id);
  }
  if (job.state == JobState::kQueued) queued.Remove(job.id);
  if (to == JobState::kQueued) Enqueue(job, now);
  arrays_deps.NoteTransition(job, job.state, to);
  jobs.Move(job, to);
  job.reason = std::move(reason);
  if (IsTerminal(to)) {
    job.end_time = now;
    hosts.Unreserve(job.id);
    unasked_exits.erase(job.id);  // also when it ends without another exit (cancelled queued)
    arrays_deps.CountTargets(job.spec, -1);
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

void Scheduler::Impl::SetReason(JobRecord& job, SharedText reason) {
  if (Retell(job, std::move(reason)) && job.state == JobState::kQueued) {
    queued.ForgetTold(job.id);  // QueuedRef::told
  }
}

bool Scheduler::Impl::Retell(JobRecord& job, SharedText reason) {
  if (job.reason == reason) return false;
  job.reason = reason;
  outbox.Retold(job.id, std::move(reason));
  return true;
}

void Scheduler::Impl::Bind(JobRecord& job, const std::vector<pod::FleetPlacement>& slices,
                           TimePoint now) {
  const JobEpoch owner{job.id, job.epoch + 1};
  auto held = hosts.Hold(owner, slices, /*evictable=*/job.spec.preemptible);
  PODSCHED_CHECK_MSG(held.has_value(), held.error().message().c_str());
  const pod::FleetPlacement& p = slices.front();
  job.epoch = owner.epoch;
  job.placement = p;
  job.more_slices.assign(slices.begin() + 1, slices.end());
  job.start_time = now;
  job.last_checkpoint_time = now;
  const std::string& zone = hosts.fleet().zone(p.pod);
  if (job.checkpoint_store.empty() && config.choose_checkpoint_store) {
    // A job with checkpoints and no store recorded (stored before stores were) has them in the
    // default store: "" asks for that one.
    CheckpointStore store =
        config.choose_checkpoint_store(job.spec, job.last_checkpoint_step > 0 ? "" : zone);
    job.checkpoint_store = std::move(store.url);
    job.checkpoint_zone = std::move(store.zone);
  }
  Status moved = Transition(job, JobState::kPlaced, "placed", now);
  PODSCHED_CHECK_MSG(moved.ok(), moved.message().c_str());
  LaunchPlan launch{owner,
                    *jobs.TypeOf(job.id),
                    hosts.fleet().pod(p.pod).name(),
                    p.rect,
                    hosts.fleet().HostsIn(p),
                    hosts.fleet().pod(p.pod).HostsIn(p.rect),
                    job.spec.command,
                    job.spec.args,
                    job.spec.env,
                    job.spec.ranks_per_host,
                    job.spec.launcher,
                    job.spec.grace_period,
                    job.restarts,
                    job.preemptions,
                    job.spec.array,
                    job.spec.user,
                    {},
                    zone,
                    job.checkpoint_store};
  // A job that resumes away from its checkpoint store reads its checkpoint across zones.
  if (job.last_checkpoint_step > 0) ChargeEgress(job, launch.zone, job.checkpoint_bytes, now);
  for (const pod::FleetPlacement& s : job.more_slices) {
    const pod::Pod& pod = hosts.fleet().pod(s.pod);
    launch.more_slices.push_back({pod.name(), s.rect});
    for (HostId h : hosts.fleet().HostsIn(s)) launch.hosts.push_back(h);
    for (HostId h : pod.HostsIn(s.rect)) launch.pod_hosts.push_back(h);
  }
  outbox.Send(std::move(launch));
  ++stats.launches;
  ArmHoldTimers(job, /*draw_reclaim=*/true);
}

void Scheduler::Impl::ChargeEgress(JobRecord& job, std::string_view zone, int64_t bytes,
                                   TimePoint now) {
  if (bytes <= 0 || !pod::EgressPricing::Crosses(job.checkpoint_zone, zone)) return;
  const double usd = config.egress.Usd(bytes, job.checkpoint_zone, zone);
  job.egress_bytes += bytes;
  job.egress_usd += usd;
  accounting.ChargeEgress(job.spec.user, usd, now);
  outbox.Changed(job.id);
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
  std::vector<HostId> held = hosts.HostsOf(owner);  // every slice's agents
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

Duration Scheduler::Impl::Backoff(int n) const {
  Duration backoff = config.retry_backoff_base;
  for (int i = 1; i < n && backoff < config.retry_backoff_max; ++i) backoff *= 2;
  return std::min(backoff, config.retry_backoff_max);
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
  const Duration backoff = Backoff(job.restarts);
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
  const Duration backoff = Backoff(excess);
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
    JobRecord* found = jobs.Find(timer.job.job);
    if (found == nullptr || found->epoch != timer.job.epoch) continue;
    JobRecord& job = *found;
    switch (timer.kind) {
      case TimerKind::kKill:
        if (job.state == JobState::kPreempting && timers.TakeKill(job.id)) {
          KillAction kill{timer.job, hosts.HostsOf(timer.job),
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
  batch.reasons = std::move(out.retold);
  batch.users = accounting.TakeChanged();
  batch.events = std::move(out.events);
  if (!batch.empty()) {
    Status committed = repo->Commit(batch);
    if (!committed.ok()) return std::unexpected(committed.WithContext("job store commit"));
  }
  return std::move(out.actions);
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

Result<Actions> Scheduler::Impl::Advance(JobEpoch je, std::initializer_list<JobState> from,
                                         JobState to, const char* reason, TimePoint now) {
  Result<JobRecord*> found = Existing(je.job);
  if (!found) return std::unexpected(found.error());
  JobRecord& job = **found;
  if (je.epoch != job.epoch) {
    ++stats.stale_reports;
  } else if (std::find(from.begin(), from.end(), job.state) != from.end()) {
    PODSCHED_CHECK(Transition(job, to, reason, now).ok());
  }
  return Finish(now);
}

}  // namespace podsched::core
