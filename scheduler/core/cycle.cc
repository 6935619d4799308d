// The scheduling pass: queue sort -> filter -> score/reserve -> preempt -> permit -> bind.
//
// Within a pass availability only shrinks (placements and reservations take hosts, nothing is
// freed), so a shape that did not fit once does not fit later in the same pass: the pass
// remembers failed shapes and failed victim searches, which keeps a pass over 10,000 queued jobs
// close to linear.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "common/check.h"
#include "scheduler/core/scheduler_impl.h"
#include "scheduler/core/victims.h"

namespace podsched::core {
namespace {

std::string Ids(const std::vector<JobId>& ids) {
  std::string out;
  for (JobId id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id.value());
  return out;
}

std::string BlockText(pod::SliceShape shape) {
  if (shape.hosts() == 1) return "no free host";
  return "no free " + std::to_string(shape.rows) + "x" + std::to_string(shape.cols) +
         " block of hosts";
}

// On-demand work is never preempted for preemptible work; otherwise a job may evict preemptible
// work (when it is on-demand) or work of lower priority.
bool MayPreempt(const JobSpec& waiting, const JobSpec& victim) {
  if (!victim.preemptible && waiting.preemptible) return false;
  return (victim.preemptible && !waiting.preemptible) || victim.priority < waiting.priority;
}

// One view of the pod for a pass: hosts taken in this pass or reserved are marked draining so
// that the placement policy skips them.
void Exclude(pod::Pod& view, const pod::Placement& p) {
  for (HostId h : view.HostsIn(p)) PODSCHED_CHECK(view.SetDraining(h, true).ok());
}

struct FailedShape {
  int rows, cols;
  bool protected_view;
  auto operator<=>(const FailedShape&) const = default;
};

}  // namespace

void Scheduler::Impl::RunPass(TimePoint now) {
  ++stats.passes;
  dirty = false;

  // Queue sort.
  std::unordered_map<const UserRecord*, double> usage;  // fair-share key per user, once a pass
  if (profile.order == QueueOrder::kFairShare) {
    for (const auto& [name, user] : users) {
      usage[&user] = user.decayed_core_hours *
                    std::exp2(-ToSeconds(now - user.usage_as_of) /
                              ToSeconds(config.fair_share_half_life));
    }
    for (const auto& [alloc, lease] : leases) {
      const JobRecord& job = jobs.at(lease.owner.job);
      if (job.epoch == lease.owner.epoch && HoldsHosts(job.state)) {
        usage[&users.at(job.spec.user)] += Cores(job.id) * ToSeconds(now - job.start_time) / 3600.0;
      }
    }
  }
  struct Entry {
    int effective_priority;
    double usage;
    TimePoint submit;
    JobId id;
    const QueuedRef* ref;
  };
  std::vector<Entry> queue;
  queue.reserve(queued.size());
  for (const auto& [id, ref] : queued) {
    const JobRecord& job = *ref.job;
    Entry e{0, 0, job.submit_time, id, &ref};
    if (profile.order == QueueOrder::kFairShare) {
      const int64_t waited = (now - job.submit_time) / config.aging_step;
      e.effective_priority =
          job.spec.priority + static_cast<int>(std::min<int64_t>(waited, config.max_aging_bonus));
      e.usage = usage[ref.user];
    }
    queue.push_back(e);
  }
  std::sort(queue.begin(), queue.end(), [](const Entry& a, const Entry& b) {
    return std::tie(b.effective_priority, a.usage, a.submit, a.id) <
           std::tie(a.effective_priority, b.usage, b.submit, b.id);
  });

  // Views: `view` excludes reserved hosts; `head_view` also excludes the backfill head's
  // rectangle, for jobs that could still be running when the head is expected to start.
  pod::Pod view = pod;
  for (const auto& [id, res] : reservations) Exclude(view, res.placement);
  std::optional<pod::Pod> head_view;
  TimePoint head_start = TimePoint::max();
  std::optional<JobId> blocker;  // no backfill: the first job that could not start
  std::string behind;            // the reason of every job behind it
  std::set<FailedShape> failed;
  std::map<std::tuple<int, int, bool, int>, std::string> failed_preemption;
  struct RunningRef {
    AllocationId alloc;
    const JobRecord* job;
    int cores;
  };
  std::vector<RunningRef> running;
  bool running_built = false;

  for (const Entry& entry : queue) {
    JobRecord& job = *entry.ref->job;
    const pod::AcceleratorType& type = *entry.ref->type;
    const int cores = type.tensor_cores();

    // Filter: backoff and quota. Filtered jobs never block others.
    if (job.not_before > now) {
      SetReason(job, job.reason.starts_with("retry") ? job.reason : "backoff after a failure");
      continue;
    }
    const Quota quota = entry.ref->user->quota;
    const QuotaUsage& use = *entry.ref->use;
    const int used = job.spec.preemptible ? use.preemptible_cores : use.on_demand_cores;
    const int limit = job.spec.preemptible ? quota.preemptible_cores : quota.on_demand_cores;
    if (used + cores > limit) {
      std::string reason = "quota: " + std::to_string(used) + "/" + std::to_string(limit) + " " +
                           (job.spec.preemptible ? "preemptible" : "on-demand") + " cores in use";
      if (used < limit) reason += ", job needs " + std::to_string(cores);
      SetReason(job, std::move(reason));
      continue;
    }
    // A job holding a reservation is past the blocker already: its hosts are set aside.
    if (blocker && !reservations.contains(job.id)) {
      SetReason(job, behind);
      continue;
    }

    // Score + permit: where would it go now, without delaying the backfill head?
    bool protect = false;
    if (head_view) {
      const Duration estimate = job.spec.expected_runtime.value_or(job.spec.max_runtime);
      protect = estimate <= Duration::zero() || now + estimate > head_start;
    }
    pod::Pod& score_view = protect ? *head_view : view;
    std::optional<pod::Placement> chosen;
    const pod::SliceShape shape = type.shape();
    if (!failed.contains({shape.rows, shape.cols, protect})) {
      chosen = placement->Choose(score_view, type);
      if (!chosen) failed.insert({shape.rows, shape.cols, protect});
    }
    auto res = reservations.find(job.id);
    if (!chosen && res != reservations.end() && pod.CanPlace(res->second.placement)) {
      chosen = res->second.placement;
    }
    if (chosen) {
      Bind(job, *chosen, now);
      Exclude(view, *chosen);
      if (head_view) Exclude(*head_view, *chosen);
      continue;
    }

    // Already waiting for victims?
    if (res != reservations.end()) {
      std::vector<JobId> stopping;
      for (JobId v : res->second.victims) {
        if (jobs.at(v).state == JobState::kPreempting) stopping.push_back(v);
      }
      bool healthy = true;
      for (HostId h : pod.HostsIn(res->second.placement)) healthy &= pod.host(h).healthy;
      if (healthy) {
        SetReason(job, stopping.empty()
                           ? "waiting for the hosts of job " + Ids(res->second.victims) +
                                 " to be released"
                           : "waiting for job " + Ids(stopping) + " to checkpoint");
        continue;
      }
      reservations.erase(res);  // a reserved host failed: look again
    }

    // Preemption: evict lower-class / lower-priority work to make a legal rectangle.
    const auto key = std::make_tuple(shape.rows, shape.cols, job.spec.preemptible,
                                     job.spec.priority);
    auto memo = failed_preemption.find(key);
    if (memo == failed_preemption.end() && !profile.preemption) {
      memo = failed_preemption.emplace(key, BlockText(shape)).first;
    }
    if (memo == failed_preemption.end()) {
      if (!running_built) {
        // Running work that could be evicted, once per pass (not per blocked job).
        running_built = true;
        for (const auto& [alloc, lease] : leases) {
          const JobRecord& v = jobs.at(lease.owner.job);
          if (v.epoch == lease.owner.epoch && HoldsHosts(v.state)) {
            running.push_back({alloc, &v, Cores(v.id)});
          }
        }
      }
      std::map<AllocationId, VictimCandidate> eligible, later;
      TimePoint earliest = TimePoint::max();
      for (const RunningRef& r : running) {
        const JobRecord& v = *r.job;
        const AllocationId alloc = r.alloc;
        if (v.state == JobState::kPreempting || !MayPreempt(job.spec, v.spec)) continue;
        const int vcores = r.cores;
        VictimCandidate c{v.id, vcores * ToSeconds(now - v.last_checkpoint_time), vcores};
        const TimePoint free_at = v.start_time + config.min_runtime_before_preemption;
        if (free_at <= now) {
          eligible.emplace(alloc, c);
        } else {
          earliest = std::min(earliest, free_at);
        }
        later.emplace(alloc, c);
      }
      pod::Pod& victim_view = head_view ? *head_view : view;
      if (auto choice = ChooseVictims(victim_view, shape, eligible)) {
        for (JobId v : choice->victims) {
          StartPreemption(jobs.at(v),
                          "preempted for job " + std::to_string(job.id.value()) +
                              (job.spec.preemptible ? " (higher priority)" : " (on-demand)"),
                          job.id, now);
        }
        reservations[job.id] = Reservation{choice->placement, choice->victims};
        Exclude(view, choice->placement);
        if (head_view) Exclude(*head_view, choice->placement);
        SetReason(job, "waiting for job " + Ids(choice->victims) + " to checkpoint");
        continue;
      }
      std::string why = BlockText(shape);
      if (auto relaxed = ChooseVictims(victim_view, shape, later)) {
        why += "; " + std::to_string(relaxed->victims.size()) +
               " running jobs would have to go, after their minimum runtime";
        AddWakeup(earliest);
      }
      memo = failed_preemption.emplace(key, std::move(why)).first;
    }
    SetReason(job, memo->second);

    // Blocked. Without backfill the queue stops here; with EASY the first blocked job gets a
    // protected rectangle that later, longer jobs must not use.
    if (!profile.backfill) {
      blocker = job.id;
      // The same text whichever job blocks, so that a new head does not rewrite every row.
      behind = "waiting for earlier jobs to start (FIFO order)";
    } else if (!head_view) {
      std::vector<ExpectedRelease> releases;
      for (const auto& [alloc, lease] : leases) {
        const JobRecord& v = jobs.at(lease.owner.job);
        TimePoint at = now;  // lingering leases (job moved on) go soon
        if (v.epoch == lease.owner.epoch && HoldsHosts(v.state)) {
          const Duration estimate = v.spec.expected_runtime.value_or(v.spec.max_runtime);
          if (v.state == JobState::kPreempting) {
            at = v.preempt_deadline;
          } else if (estimate > Duration::zero()) {
            at = std::max(now, v.start_time + estimate);
          } else {
            at = TimePoint::max();
          }
        }
        releases.push_back({alloc, at});
      }
      Shadow shadow = ComputeShadow(view, type, *placement, std::move(releases));
      head_view = view;
      head_start = shadow.start;
      if (shadow.placement) Exclude(*head_view, *shadow.placement);
    }
  }
  dirty = false;
}

}  // namespace podsched::core
