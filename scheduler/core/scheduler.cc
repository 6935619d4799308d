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

Result<JobRecord*> FindActive(Scheduler::Impl& s, JobId id) {
  Result<JobRecord*> job = s.Existing(id);
  if (job && IsTerminal((*job)->state)) {
    return FailedPrecondition(JobName(id) + " already ended " +
                              std::string(JobStateName((*job)->state)));
  }
  return job;
}

}  // namespace

Scheduler::Scheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Scheduler::~Scheduler() = default;

Result<std::unique_ptr<Scheduler>> Scheduler::Create(pod::Pod pod, SchedulerConfig config,
                                                     JobRepository* repo, TimePoint now) {
  return Create(pod::Fleet::Of(std::move(pod)), std::move(config), repo, now);
}

Result<std::unique_ptr<Scheduler>> Scheduler::Create(pod::Fleet fleet, SchedulerConfig config,
                                                     JobRepository* repo, TimePoint now) {
  PODSCHED_CHECK(repo != nullptr);
  auto profile =
      MakeProfile(config.profile, FairShareRules{config.aging_step, config.max_aging_bonus});
  if (!profile) return std::unexpected(profile.error());
  if (config.fair_share_half_life <= Duration::zero() || config.aging_step <= Duration::zero()) {
    return InvalidArgument("fair_share_half_life and aging_step must be > 0");
  }
  if (config.reclaim_rate_per_hour < 0) return InvalidArgument("reclaim rate must be >= 0");
  if (!(config.defrag_budget_core_seconds_per_hour >= 0) ||
      config.defrag_budget_core_seconds_per_hour > 1e12) {
    return InvalidArgument("defrag_budget_core_seconds_per_hour must be 0..1e12");
  }
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

  auto impl = std::make_unique<Impl>(std::move(fleet), std::move(config), std::move(*profile),
                                     repo);
  impl->jobs.TakeIdsBelow(loaded->next_job_id);
  impl->outbox.SetNextEventSeq(loaded->next_event_seq);
  impl->accounting.Load(std::move(loaded->users));
  impl->quarantined = std::move(loaded->quarantined);
  for (JobRecord& job : loaded->jobs) {
    if (impl->jobs.Find(job.id) != nullptr) {
      return Internal(JobName(job.id) + " appears twice in the job store");
    }
    auto type = ValidateSpec(job.spec, impl->hosts.fleet(), SpecOrigin::kStored);
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
    if (!IsTerminal(job.state)) {
      impl->arrays_deps.CountTargets(job.spec, +1);
    } else if (retention) {
      impl->forget_at.emplace(job.end_time + impl->config.ended_job_retention, job.id);
    }
    const bool waiting = job.state == JobState::kQueued;
    if (HoldsHosts(job.state)) {
      if (!job.placement) return Internal(JobName(job.id) + " holds hosts but has no placement");
      auto held = impl->hosts.Hold(JobEpoch{job.id, job.epoch}, SlicesOf(job),
                                   /*evictable=*/job.spec.preemptible);
      if (!held) return std::unexpected(held.error().WithContext(JobName(job.id)));
      impl->accounting.StartHolding(job.id, job.spec.user, job.spec.preemptible,
                                    JobCores(job.spec, *type), job.start_time);
      impl->ArmHoldTimers(job, /*draw_reclaim=*/false);
    }
    if (job.state == JobState::kQueued && job.not_before > now) {
      impl->timers.AddWakeup(job.not_before);
    }
    JobRecord& added = impl->jobs.Add(std::move(job), *type);
    if (waiting) impl->Enqueue(added, now);
  }
  // After every job is in: an index entry may name any other job.
  for (const auto& [id, job] : impl->jobs.all()) impl->arrays_deps.Index(job);
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

Result<Actions> Scheduler::Cancel(JobId id, TimePoint now) {
  Impl& s = *impl_;
  auto job = FindActive(s, id);
  if (!job) return std::unexpected(job.error());
  s.CancelOne(**job, now);
  return s.Finish(now);
}

Result<Actions> Scheduler::Preempt(JobId id, std::string reason, TimePoint now) {
  Impl& s = *impl_;
  auto job = FindActive(s, id);
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

Result<Actions> Scheduler::ReportProgress(JobEpoch je, int64_t step, int64_t last_checkpoint_step,
                                          TimePoint now, std::optional<int64_t> checkpoint_bytes) {
  Impl& s = *impl_;
  Result<JobRecord*> found = s.Existing(je.job);
  if (!found) return std::unexpected(found.error());
  JobRecord& job = **found;
  if (step < 0 || last_checkpoint_step < 0 || last_checkpoint_step > step) {
    return InvalidArgument("progress of " + JobName(je.job) + ": step " + std::to_string(step) +
                           " and checkpoint step " + std::to_string(last_checkpoint_step) +
                           " must satisfy 0 <= checkpoint <= step");
  }
  if (checkpoint_bytes && *checkpoint_bytes < 0) {
    return InvalidArgument("progress of " + JobName(je.job) + ": checkpoint bytes " +
                           std::to_string(*checkpoint_bytes) + " must not be negative");
  }
  if (je.epoch != job.epoch || !HoldsHosts(job.state)) {
    if (je.epoch != job.epoch) ++s.stats.stale_reports;
    return s.Finish(now);
  }
  job.step = step;
  if (checkpoint_bytes) job.checkpoint_bytes = *checkpoint_bytes;
  if (last_checkpoint_step > job.last_checkpoint_step) {
    job.last_checkpoint_time = now;
    // A checkpoint written from another zone than its store's crosses zones.
    s.ChargeEgress(job, s.hosts.fleet().zone(job.placement->pod), job.checkpoint_bytes, now);
  }
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
  Result<JobRecord*> found = s.Existing(je.job);
  if (!found) return std::unexpected(found.error());
  JobRecord& job = **found;
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
  if (Result<JobRecord*> found = s.Existing(je.job); !found) return std::unexpected(found.error());
  if (!s.hosts.fleet().Contains(host)) {
    return NotFound("host " + std::to_string(host.value()) + " is not in the fleet");
  }
  s.HostGone(je, host);
  return s.Finish(now);
}

Result<Actions> Scheduler::HostDown(HostId host, TimePoint now) {
  Impl& s = *impl_;
  if (!s.hosts.fleet().Contains(host)) {
    return NotFound("host " + std::to_string(host.value()) + " is not in the fleet");
  }
  Status marked = s.hosts.MarkUnhealthy(host);
  if (!marked.ok()) return std::unexpected(marked);
  s.dirty = true;
  const Lease* lease = s.hosts.LeaseOn(host);
  if (lease == nullptr) return s.Finish(now);
  const JobEpoch owner = lease->owner;
  const std::vector<HostId> held = s.hosts.HostsOf(owner);  // every slice of the job
  const bool live = s.LiveOwner(*lease) != nullptr;
  s.HostGone(owner, host);  // nothing runs on a dead host any more (`lease` may be gone now)
  JobRecord& job = s.jobs.at(owner.job);
  if (live) {
    const std::string why = s.hosts.fleet().HostName(host) + " failed";
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
  if (!s.hosts.fleet().Contains(host)) {
    return NotFound("host " + std::to_string(host.value()) + " is not in the fleet");
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

const JobRecord* Scheduler::Find(JobId job) const { return impl_->jobs.Find(job); }
const pod::AcceleratorType* Scheduler::TypeOf(JobId job) const {
  return impl_->jobs.TypeOf(job);
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

const std::map<JobId, JobRecord>& Scheduler::jobs() const { return impl_->jobs.all(); }
const std::vector<QuarantinedJob>& Scheduler::quarantined() const { return impl_->quarantined; }
const pod::Fleet& Scheduler::fleet() const { return impl_->hosts.fleet(); }
const SchedulerStats& Scheduler::stats() const { return impl_->stats; }
const SchedulerConfig& Scheduler::config() const { return impl_->config; }
size_t Scheduler::JobsWithUnaskedExits() const { return impl_->unasked_exits.size(); }
int Scheduler::CoresOf(const JobRecord& job) const { return impl_->Cores(job.id); }
int Scheduler::ActiveJobs() const { return static_cast<int>(impl_->jobs.active().size()); }
const std::set<JobId>& Scheduler::ActiveJobIds() const { return impl_->jobs.active(); }
int Scheduler::ActiveJobsOf(const UserName& user) const {
  return impl_->jobs.ActiveOf(user).jobs;
}
int64_t Scheduler::JobsIn(JobState state) const { return impl_->jobs.CountIn(state); }
QuotaUsage Scheduler::CoresHeld() const { return impl_->accounting.CoresHeld(); }
std::vector<UserName> Scheduler::KnownUsers() const {
  std::vector<UserName> out;
  out.reserve(impl_->accounting.users().size());
  for (const auto& [name, user] : impl_->accounting.users()) out.push_back(name);
  return out;
}

double Scheduler::EgressUsdOf(const UserName& user) const {
  auto it = impl_->accounting.users().find(user);
  return it == impl_->accounting.users().end() ? 0 : it->second.egress_usd;
}

std::vector<HostId> HostsOfJob(const pod::Fleet& fleet, const JobRecord& job) {
  std::vector<HostId> hosts;
  for (const pod::FleetPlacement& slice : SlicesOf(job)) {
    for (HostId h : fleet.HostsIn(slice)) hosts.push_back(h);
  }
  return hosts;
}

}  // namespace podsched::core
