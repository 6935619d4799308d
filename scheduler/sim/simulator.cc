#include "scheduler/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "common/check.h"
#include "pod/cost.h"
#include "scheduler/core/scheduler.h"

namespace podsched::sim {
namespace {

using core::Action;
using core::Actions;
using core::ExitKind;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Rounded, not truncated: a timer read back as seconds must map to the same microsecond.
TimePoint At(double s) {
  return TimePoint{} + std::chrono::round<Duration>(std::chrono::duration<double>(s));
}

enum class EventKind { kArrival, kFinish, kCheckpoint, kExit, kHostFail, kHostRepair };

struct Event {
  double t;
  uint64_t seq;
  EventKind kind;
  int job = -1;  // index into the trace
  int64_t epoch = 0;
  int host = 0;  // the fleet's HostId (host failure and repair)
  ExitKind exit = ExitKind::kSucceeded;
  bool operator>(const Event& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
};

struct SimJob {
  bool submitted = false;  // the core accepted it (id is its id)
  JobId id;
  int cores = 0;
  std::optional<pod::AcceleratorType> type;
  bool running = false;
  int64_t epoch = 0;
  double epoch_start = 0;
  double saved_work = 0;  // seconds of work at the last checkpoint
  double saved_at = 0;    // when that checkpoint was written (or the epoch started)
  double first_start = -1;
  bool done = false;
};

// The replay's store keeps the ids of the jobs stored, not their rows: nothing reads a row back
// (no restart, no retention, no API), and a copy of every job's row at each commit was a
// twentieth of a replay's time and a third of its memory. It still refuses what a store refuses:
// a reason update for a job never stored.
class IdsOnlyRepository final : public core::JobRepository {
 public:
  Result<core::StoredState> Load() override { return core::StoredState{}; }
  Status Commit(const core::StoreBatch& batch) override {
    for (const core::JobRecord& job : batch.jobs) stored_.insert(job.id);
    for (const core::ReasonUpdate& update : batch.reasons) {
      if (!stored_.contains(update.job)) {
        return ToStatus(Internal("a reason update for job " + std::to_string(update.job.value()) +
                                 ", which is not stored"));
      }
    }
    return Status::Ok();
  }
  Result<std::vector<core::JobEvent>> EventsOf(JobId) override {
    return std::vector<core::JobEvent>{};
  }

 private:
  std::unordered_set<JobId> stored_;
};

class Simulation {
 public:
  Simulation(const Trace& trace, const SimOptions& options)
      : trace_(trace), opt_(options), rng_(options.seed), jobs_(trace.jobs.size()) {}

  Result<SimResult> Run();

 private:
  void Push(Event e) {
    e.seq = seq_++;
    events_.push(e);
  }
  double WorkAt(const SimJob& j, double t) const { return j.saved_work + (t - j.saved_at); }
  ClassMetrics& ClassOf(int job) {
    return trace_.jobs[static_cast<size_t>(job)].preemptible ? result_.preemptible
                                                             : result_.on_demand;
  }
  void Handle(const Result<Actions>& actions);
  void Apply(const Actions& actions);
  void Arrive(int job);
  // The core's dependencies of a trace row, or why it cannot be submitted.
  Result<std::vector<core::Dependency>> CoreDependencies(const TraceJob& t) const;
  // Bookkeeping of a job the core accepted.
  void Register(int job, JobId id);
  // A job the core ended without running it to the end (a dependency that can never be met, or
  // a final failure): counted once, then the same for its dependents.
  void Settle(int job);
  // The job's processes stop (finish, preempted or killed): accounting, then the report.
  void Stop(int job, ExitKind kind);
  void Advance(double t);
  void Sample();
  bool AnyWork() const;
  void Reject(int job, std::string reason);
  std::vector<JobOutcome> Unfinished() const;
  JobOutcome OutcomeOf(int job, std::string reason) const;
  // The size podsim's jobs report for their checkpoints (SimOptions::checkpoint_gib), if any.
  std::optional<int64_t> CheckpointBytes() const {
    return checkpoint_bytes_ > 0 ? std::optional(checkpoint_bytes_) : std::nullopt;
  }
  // Adds the egress the core billed each job to its class's metrics and cost.
  void CountEgress();

  const Trace& trace_;
  const SimOptions& opt_;
  std::mt19937_64 rng_;
  std::vector<SimJob> jobs_;
  std::unique_ptr<core::JobRepository> repo_;
  std::unique_ptr<core::Scheduler> sched_;          // the whole fleet's
  std::unordered_map<int64_t, int> by_id_;          // JobId -> trace index
  std::map<int64_t, int> job_row_;                  // trace job_id -> trace index
  std::map<int64_t, std::vector<int>> array_rows_;  // trace array_id -> indices by array_index
  std::vector<std::vector<int>> dependents_;        // trace index -> rows that depend on it
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  // The arrivals, in event order (time, then sequence number), read in turn rather than kept in
  // events_: there every push and pop sifted through the whole trace's arrivals (52,849 for
  // Philly) instead of the few events of the jobs running. The order of events is the same.
  std::vector<Event> arrivals_;
  size_t next_arrival_ = 0;
  // Whether the next event is the next arrival rather than events_'s top.
  bool ArrivalNext() const {
    return next_arrival_ < arrivals_.size() &&
           (events_.empty() || events_.top() > arrivals_[next_arrival_]);
  }
  uint64_t seq_ = 0;
  double now_ = 0;
  double host_time_ = 0;  // integral of allocated hosts over time
  int64_t checkpoint_bytes_ = 0;
  double next_sample_ = 0;
  double last_progress_ = 0;  // the last first start or end of a job
  int64_t arrived_ = 0;
  int64_t finished_ = 0;
  int64_t queued_ = 0;
  int64_t running_ = 0;
  SimResult result_;
};

void Simulation::Handle(const Result<Actions>& actions) {
  PODSCHED_CHECK_MSG(actions.has_value(), actions.error().ToString().c_str());
  Apply(*actions);
}

void Simulation::Apply(const Actions& actions) {
  core::Scheduler& s = *sched_;
  for (const Action& a : actions) {
    if (const auto* launch = std::get_if<core::LaunchPlan>(&a)) {
      const int job = by_id_.at(launch->job.job.value());
      SimJob& j = jobs_[static_cast<size_t>(job)];
      const TraceJob& t = trace_.jobs[static_cast<size_t>(job)];
      j.running = true;
      j.type = launch->accelerator;  // as the core parsed it at submission
      j.epoch = launch->job.epoch;
      j.epoch_start = now_;
      j.saved_at = now_;
      if (j.first_start < 0) {
        j.first_start = now_;
        last_progress_ = now_;
        ClassOf(job).wait_s.push_back(now_ - t.submit_s);
        result_.overall.wait_s.push_back(now_ - t.submit_s);
      }
      --queued_;
      ++running_;
      Handle(s.ReportStarted(launch->job, At(now_)));
      const auto work = static_cast<int64_t>(j.saved_work);
      Handle(s.ReportProgress(launch->job, work, work, At(now_), CheckpointBytes()));
      Push({now_ + (t.duration_s - j.saved_work), 0, EventKind::kFinish, job, j.epoch});
      if (t.checkpoint_interval_s > 0) {
        Push({now_ + t.checkpoint_interval_s, 0, EventKind::kCheckpoint, job, j.epoch});
      }
    } else if (const auto* preempt = std::get_if<core::PreemptAction>(&a)) {
      const int job = by_id_.at(preempt->job.job.value());
      const double delay = std::min(opt_.stop_delay_s, ToSeconds(preempt->grace));
      Push({now_ + delay, 0, EventKind::kExit, job, preempt->job.epoch, 0,
            ExitKind::kPreempted});
    } else if (const auto* kill = std::get_if<core::KillAction>(&a)) {
      const int job = by_id_.at(kill->job.job.value());
      Push({now_, 0, EventKind::kExit, job, kill->job.epoch, 0, ExitKind::kKilled});
    }
  }
}

// The simulated job loses all work since its last periodic checkpoint when it is preempted, so a
// preemptible job longer than the preemptible lifetime that saves nothing within one lifetime is
// preempted at the end of every lifetime forever: it is refused at arrival, with the reason.
std::optional<std::string> NeverFinishes(const TraceJob& t, Duration lifetime) {
  const double limit = ToSeconds(lifetime);
  if (!t.preemptible || limit <= 0 || t.duration_s <= limit) return std::nullopt;
  if (t.checkpoint_interval_s > 0 && t.checkpoint_interval_s < limit) return std::nullopt;
  return "a preemptible job of " + std::to_string(static_cast<int64_t>(t.duration_s)) +
         " s that saves no checkpoint within the " + std::to_string(static_cast<int64_t>(limit)) +
         " s preemptible lifetime can never finish";
}

Result<std::vector<core::Dependency>> Simulation::CoreDependencies(const TraceJob& t) const {
  std::vector<core::Dependency> out;
  for (const core::Dependency& dep : t.dependencies) {
    // Targets are earlier rows (trace.h); they arrived, but the core may have refused them.
    int row = -1;
    if (auto a = array_rows_.find(dep.job.value()); a != array_rows_.end()) {
      row = a->second.front();
    } else {
      row = job_row_.at(dep.job.value());
    }
    const SimJob& target = jobs_[static_cast<size_t>(row)];
    if (!target.submitted) {
      return InvalidArgument("dependency " + core::FormatDependency(dep) +
                             " names a job that was refused");
    }
    out.push_back({dep.kind, target.id, dep.array_index});
  }
  return out;
}

void Simulation::Register(int job, JobId id) {
  SimJob& j = jobs_[static_cast<size_t>(job)];
  j.submitted = true;
  j.id = id;
  j.cores = sched_->CoresOf(*sched_->Find(id));
  by_id_[id.value()] = job;
  ++queued_;
}

void Simulation::Arrive(int job) {
  const TraceJob& t = trace_.jobs[static_cast<size_t>(job)];
  // An array arrives as a whole at its first row (the other rows get no arrival event).
  const std::vector<int> rows =
      t.array_id > 0 ? array_rows_.at(t.array_id) : std::vector<int>{job};
  for (int row : rows) {
    ++arrived_;
    ++ClassOf(row).jobs;
    ++result_.overall.jobs;
  }
  last_progress_ = now_;
  if (auto never = NeverFinishes(t, sched_->config().preemptible_lifetime)) {
    for (int row : rows) Reject(row, *never);
    return;
  }
  auto deps = CoreDependencies(t);
  if (!deps) {
    for (int row : rows) Reject(row, deps.error().message());
    return;
  }
  core::JobSpec spec;
  spec.name = "trace-" + std::to_string(job);
  spec.user = UserName(t.user);
  spec.accelerator = t.accelerator;
  spec.preemptible = t.preemptible;
  spec.priority = t.priority;
  spec.slices = t.slices;
  spec.command = "podtrain";
  spec.checkpoint_interval = FromSeconds(t.checkpoint_interval_s);
  spec.max_restarts = t.fails ? 0 : 10;
  spec.dependencies = std::move(*deps);
  if (opt_.exact_estimates) spec.expected_runtime = FromSeconds(t.duration_s);
  core::Scheduler& s = *sched_;
  if (t.array_id > 0) {
    core::ArraySpec array;
    array.text = "trace array " + std::to_string(t.array_id);
    for (int row : rows) array.indices.push_back(trace_.jobs[static_cast<size_t>(row)].array_index);
    array.throttle = t.array_throttle;
    auto ids = s.SubmitArray(spec, array, At(now_));
    if (!ids) {
      for (int row : rows) Reject(row, ids.error().message());
      return;
    }
    for (size_t i = 0; i < rows.size(); ++i) Register(rows[i], (*ids)[i]);
  } else {
    auto id = s.Submit(spec, At(now_));
    if (!id) return Reject(job, id.error().message());
    Register(job, *id);
  }
  // A dependency on a job that already ended badly ends the new job at once.
  for (int row : rows) {
    if (core::IsTerminal(s.Find(jobs_[static_cast<size_t>(row)].id)->state)) Settle(row);
  }
}

void Simulation::Settle(int job) {
  std::vector<int> todo = {job};
  while (!todo.empty()) {
    const int row = todo.back();
    todo.pop_back();
    SimJob& j = jobs_[static_cast<size_t>(row)];
    if (j.done || !j.submitted || j.running) continue;
    const core::JobRecord* record = sched_->Find(j.id);
    if (!core::IsTerminal(record->state)) continue;
    j.done = true;
    ++finished_;
    --queued_;
    last_progress_ = now_;
    if (record->state == core::JobState::kCancelled) {
      ++result_.cancelled;
      result_.cancelled_jobs.push_back(OutcomeOf(row, record->reason));
    } else {
      ++result_.failed;
    }
    for (int d : dependents_[static_cast<size_t>(row)]) todo.push_back(d);
  }
}

JobOutcome Simulation::OutcomeOf(int job, std::string reason) const {
  const TraceJob& t = trace_.jobs[static_cast<size_t>(job)];
  return {job, t.user, t.accelerator, t.preemptible, std::move(reason)};
}

void Simulation::Reject(int job, std::string reason) {
  ++result_.rejected;
  result_.rejected_jobs.push_back(OutcomeOf(job, std::move(reason)));
  jobs_[static_cast<size_t>(job)].done = true;
  ++finished_;
}

std::vector<JobOutcome> Simulation::Unfinished() const {
  std::vector<JobOutcome> out;
  for (size_t i = 0; i < jobs_.size(); ++i) {
    const SimJob& j = jobs_[i];
    if (j.done) continue;
    std::string reason = "never arrived";
    if (j.submitted) {
      const core::JobRecord* record = sched_->Find(j.id);
      reason = std::string(core::JobStateName(record->state)) + ": " + record->reason;
    }
    out.push_back(OutcomeOf(static_cast<int>(i), std::move(reason)));
  }
  return out;
}

void Simulation::Stop(int job, ExitKind kind) {
  SimJob& j = jobs_[static_cast<size_t>(job)];
  const TraceJob& t = trace_.jobs[static_cast<size_t>(job)];
  ClassMetrics& c = ClassOf(job);
  const double held_h = (now_ - j.epoch_start) / 3600.0;
  const double cost = t.slices * pod::SliceUsd(*j.type,
                                               t.preemptible ? pod::PriceClass::kPreemptible
                                                             : pod::PriceClass::kOnDemand,
                                               FromSeconds(now_ - j.epoch_start));
  for (ClassMetrics* m : {&c, &result_.overall}) {
    m->held_core_h += j.cores * held_h;
    m->cost_usd += cost;
  }
  j.running = false;
  --running_;
  if (kind == ExitKind::kSucceeded) {
    for (ClassMetrics* m : {&c, &result_.overall}) {
      ++m->completed;
      m->jct_s.push_back(now_ - t.submit_s);
      m->useful_core_h += j.cores * t.duration_s / 3600.0;
    }
    j.done = true;
    ++finished_;
    last_progress_ = now_;
  } else {
    const double lost = WorkAt(j, now_) - j.saved_work;
    for (ClassMetrics* m : {&c, &result_.overall}) {
      m->work_lost_core_h += j.cores * lost / 3600.0;
      if (kind != ExitKind::kFailed) ++m->preemptions;
    }
    ++queued_;
  }
  Handle(sched_->ReportExited({j.id, j.epoch}, std::nullopt, kind, "", At(now_)));
  // Failed for good (a trace row that fails; host failures never count), and whatever the core
  // ended because it depended on this job.
  Settle(job);
  for (int d : dependents_[static_cast<size_t>(job)]) Settle(d);
}

void Simulation::Advance(double t) {
  if (t <= now_) return;
  const int64_t allocated = sched_->fleet().AllocatedHosts();
  while (opt_.timeseries_interval_s > 0 && next_sample_ <= t) {
    Sample();
    next_sample_ += opt_.timeseries_interval_s;
  }
  host_time_ += static_cast<double>(allocated) * (t - now_);
  now_ = t;
}

void Simulation::Sample() {
  const pod::Fleet& fleet = sched_->fleet();
  const int64_t allocated = fleet.AllocatedHosts(), hosts = fleet.num_hosts();
  result_.timeseries.push_back(
      {next_sample_, static_cast<double>(allocated) / static_cast<double>(hosts), queued_,
       running_});
}

bool Simulation::AnyWork() const {
  return finished_ < static_cast<int64_t>(jobs_.size());
}

Result<SimResult> Simulation::Run() {
  result_.profile = opt_.profile;
  result_.jobs = static_cast<int64_t>(trace_.jobs.size());
  std::vector<pod::FleetPodSpec> specs = opt_.fleet;
  if (specs.empty()) {
    if (opt_.pods < 1) return InvalidArgument("pods must be >= 1");
    const pod::GenerationSpec& gen = pod::SpecOf(opt_.generation);
    for (int p = 0; p < opt_.pods; ++p) {
      specs.push_back({"pod" + std::to_string(p), opt_.generation, gen.full_pod_host_rows,
                       gen.full_pod_host_cols, ""});
    }
  }
  Result<pod::Fleet> fleet = pod::Fleet::Create(specs);
  if (!fleet) return std::unexpected(fleet.error());
  int fleet_cores = 0;
  for (const pod::Pod& p : fleet->pods()) {
    fleet_cores += p.num_hosts() * pod::SpecOf(p.generation()).cores_per_host();
  }
  core::SchedulerConfig config;
  config.profile = opt_.profile;
  config.default_quota = core::Quota{
      opt_.quota_on_demand_cores > 0 ? opt_.quota_on_demand_cores : fleet_cores,
      opt_.quota_preemptible_cores > 0 ? opt_.quota_preemptible_cores : fleet_cores};
  config.reclaim_rate_per_hour = opt_.reclaim_rate_per_hour;
  config.min_runtime_before_preemption = FromSeconds(opt_.min_runtime_before_preemption_s);
  config.defrag_budget_core_seconds_per_hour = opt_.defrag_budget_core_seconds_per_hour;
  if (opt_.checkpoint_gib > 0) {
    // The store of the zone a job first runs in (the daemon's CheckpointStores with a store per
    // zone); a fleet without zones bills nothing.
    config.choose_checkpoint_store = [](const core::JobSpec&, std::string_view zone) {
      return core::CheckpointStore{std::string(zone), std::string(zone)};
    };
    checkpoint_bytes_ = static_cast<int64_t>(opt_.checkpoint_gib * (int64_t{1} << 30));
  }
  // A trace is replayed as submitted: the daemon's guard against one user flooding it does not
  // apply (a backlog of a trace's user may exceed it).
  config.max_active_jobs_per_user = std::numeric_limits<int>::max();
  config.max_jobs_created_per_user_per_hour = std::numeric_limits<int>::max();
  config.max_active_spec_bytes_per_user = std::numeric_limits<int64_t>::max();
  config.seed = opt_.seed;
  config.check_pass_memos = opt_.check_pass_memos;
  repo_ = std::make_unique<IdsOnlyRepository>();
  auto created = core::Scheduler::Create(std::move(*fleet), config, repo_.get(), At(0));
  if (!created) return std::unexpected(created.error());
  sched_ = std::move(*created);
  dependents_.resize(trace_.jobs.size());
  for (size_t i = 0; i < trace_.jobs.size(); ++i) {
    const TraceJob& t = trace_.jobs[i];
    if (t.job_id > 0) job_row_[t.job_id] = static_cast<int>(i);
    if (t.array_id > 0) array_rows_[t.array_id].push_back(static_cast<int>(i));
  }
  for (auto& [id, rows] : array_rows_) {
    std::sort(rows.begin(), rows.end(), [&](int a, int b) {
      return trace_.jobs[static_cast<size_t>(a)].array_index <
             trace_.jobs[static_cast<size_t>(b)].array_index;
    });
  }
  for (size_t i = 0; i < trace_.jobs.size(); ++i) {
    for (const core::Dependency& dep : trace_.jobs[i].dependencies) {
      std::vector<int> targets;
      if (auto a = array_rows_.find(dep.job.value()); a != array_rows_.end()) {
        for (int row : a->second) {
          if (!dep.array_index || trace_.jobs[static_cast<size_t>(row)].array_index ==
                                      *dep.array_index) {
            targets.push_back(row);
          }
        }
      } else if (auto j = job_row_.find(dep.job.value()); j != job_row_.end()) {
        targets.push_back(j->second);
      }
      for (int row : targets) dependents_[static_cast<size_t>(row)].push_back(static_cast<int>(i));
    }
  }
  for (size_t i = 0; i < trace_.jobs.size(); ++i) {
    const TraceJob& t = trace_.jobs[i];
    // An array arrives once, at its first row in the trace (its rows share the submit time).
    if (t.array_id > 0) {
      const std::vector<int>& rows = array_rows_.at(t.array_id);
      if (*std::min_element(rows.begin(), rows.end()) != static_cast<int>(i)) continue;
    }
    arrivals_.push_back({t.submit_s, seq_++, EventKind::kArrival, static_cast<int>(i)});
  }
  std::sort(arrivals_.begin(), arrivals_.end(),
            [](const Event& a, const Event& b) { return b > a; });
  const pod::Fleet& hosts = sched_->fleet();
  std::exponential_distribution<double> failure_gap(
      std::max(1e-12, opt_.host_failures_per_host_day * hosts.num_hosts() / 86400.0));
  // Every host fails at the same rate. Pods of one size: a pod, then a host in it (two draws:
  // the random sequence of earlier versions, so that a one-pod replay stays byte-identical);
  // otherwise one draw over the fleet's hosts.
  bool equal_pods = true;
  for (const pod::Pod& p : hosts.pods()) equal_pods &= p.num_hosts() == hosts.pod(0).num_hosts();
  if (opt_.host_failures_per_host_day > 0) {
    Push({failure_gap(rng_), 0, EventKind::kHostFail});
  }
  const double first_submit = trace_.jobs.empty() ? 0 : trace_.jobs.front().submit_s;
  now_ = first_submit;
  next_sample_ = first_submit;
  double last_end = first_submit;
  int64_t last_progress = -1;
  double horizon = opt_.stall_horizon_s;
  if (horizon <= 0) {
    horizon = 30 * 86400.0;
    for (const TraceJob& t : trace_.jobs) horizon = std::max(horizon, 2 * t.duration_s);
  }
  const auto all_arrived = [&] { return arrived_ == static_cast<int64_t>(jobs_.size()); };

  while (AnyWork()) {
    // The next tick: on the grid when a pod is dirty, or at a pod's timer.
    double tick = kInf;
    if (sched_->dirty()) tick = std::min(tick, std::ceil(now_ / opt_.tick_s) * opt_.tick_s);
    if (auto timer = sched_->NextTimer()) {
      tick = std::min(tick, std::max(now_, ToSeconds(timer->time_since_epoch())));
    }
    const bool arrival = ArrivalNext();
    const double next_event = arrival           ? arrivals_[next_arrival_].t
                              : events_.empty() ? kInf
                                                : events_.top().t;
    if (tick == kInf && next_event == kInf) break;  // nothing can happen any more
    // Only fruitless work is left (e.g. a job preempted again and again, never saving).
    if (all_arrived() && std::min(tick, next_event) - last_progress_ > horizon) break;
    if (tick <= next_event) {
      Advance(tick);
      Apply(sched_->Tick(At(now_)));
      continue;
    }
    Event e;
    if (arrival) {
      e = arrivals_[next_arrival_++];
    } else {
      e = events_.top();
      events_.pop();
    }
    Advance(e.t);
    ++result_.events;
    SimJob& j = e.job >= 0 ? jobs_[static_cast<size_t>(e.job)] : jobs_[0];
    switch (e.kind) {
      case EventKind::kArrival:
        Arrive(e.job);
        break;
      case EventKind::kFinish:
        if (j.running && j.epoch == e.epoch) {
          Stop(e.job, trace_.jobs[static_cast<size_t>(e.job)].fails ? ExitKind::kFailed
                                                                    : ExitKind::kSucceeded);
          last_end = now_;
        }
        break;
      case EventKind::kCheckpoint:
        if (j.running && j.epoch == e.epoch) {
          j.saved_work = WorkAt(j, now_);
          j.saved_at = now_;
          const auto work = static_cast<int64_t>(j.saved_work);
          Handle(sched_->ReportProgress({j.id, j.epoch}, work, work, At(now_), CheckpointBytes()));
          const double interval = trace_.jobs[static_cast<size_t>(e.job)].checkpoint_interval_s;
          Push({now_ + interval, 0, EventKind::kCheckpoint, e.job, e.epoch});
        }
        break;
      case EventKind::kExit:
        if (j.running && j.epoch == e.epoch) Stop(e.job, e.exit);
        break;
      case EventKind::kHostFail: {
        HostId host;
        if (equal_pods) {
          std::uniform_int_distribution<int> pick_pod(0, hosts.size() - 1);
          std::uniform_int_distribution<int> pick_host(0, hosts.pod(0).num_hosts() - 1);
          const int p = pick_pod(rng_);
          host = hosts.FleetHost(p, HostId(pick_host(rng_)));
        } else {
          host = HostId(std::uniform_int_distribution<int>(0, hosts.num_hosts() - 1)(rng_));
        }
        if (hosts.host(host).healthy) {
          Handle(sched_->HostDown(host, At(now_)));
          Push({now_ + opt_.host_repair_s, 0, EventKind::kHostRepair, -1, 0, host.value()});
        }
        if (AnyWork()) Push({now_ + failure_gap(rng_), 0, EventKind::kHostFail});
        break;
      }
      case EventKind::kHostRepair:
        Handle(sched_->HostUp(HostId(e.host), At(now_)));
        break;
    }
    if (opt_.progress && result_.jobs > 0) {
      const int64_t pct = finished_ * 100 / result_.jobs;
      if (pct != last_progress) {
        last_progress = pct;
        opt_.progress(static_cast<double>(finished_) / static_cast<double>(result_.jobs));
      }
    }
  }

  const int64_t host_count = hosts.num_hosts();
  result_.preemptions = sched_->stats().preemptions;
  result_.defrag_moves = sched_->stats().defrag_moves;
  result_.defrag_lost_core_h = sched_->stats().defrag_lost_core_seconds / 3600;
  result_.passes = sched_->stats().passes;
  result_.stale_reports = sched_->stats().stale_reports;
  result_.makespan_s = std::max(last_end, now_) - first_submit;
  result_.utilization =
      result_.makespan_s > 0
          ? std::min(1.0, host_time_ / (static_cast<double>(host_count) * result_.makespan_s))
          : 0;
  result_.unfinished = static_cast<int64_t>(jobs_.size()) - finished_;
  result_.unfinished_jobs = Unfinished();
  if (checkpoint_bytes_ > 0) CountEgress();
  return std::move(result_);
}

void Simulation::CountEgress() {
  result_.egress_modelled = true;
  for (size_t i = 0; i < jobs_.size(); ++i) {
    const core::JobRecord* record = sched_->Find(jobs_[i].id);
    if (record == nullptr) continue;
    for (ClassMetrics* m : {&ClassOf(static_cast<int>(i)), &result_.overall}) {
      m->egress_gib += static_cast<double>(record->egress_bytes) / (int64_t{1} << 30);
      m->egress_usd += record->egress_usd;
      m->cost_usd += record->egress_usd;
    }
  }
}

}  // namespace

Result<SimResult> Simulate(const Trace& trace, const SimOptions& options) {
  return Simulation(trace, options).Run();
}

}  // namespace podsched::sim
