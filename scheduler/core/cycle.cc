#include "scheduler/core/cycle.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <tuple>

#include "common/check.h"
#include "scheduler/core/spec.h"

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

std::string ClassName(bool preemptible) { return preemptible ? "preemptible" : "on-demand"; }

// A victim's reason.
std::string PreemptedFor(const JobRecord& job) {
  return "preempted for job " + std::to_string(job.id.value()) +
         (job.spec.preemptible ? " (higher priority)" : " (on-demand)");
}

// The reason of a job moved to defragment (SearchVictims): it starts again on free hosts.
std::string MovedFor(const JobRecord& job) {
  return "moved to make room for job " + std::to_string(job.id.value()) +
         " (defragmentation: its pod has the hosts, not the block)";
}

// Only preemptible work is ever preempted (docs/jobspec.md): by on-demand work, or by
// preemptible work of higher priority. On-demand work is never preempted, whatever the
// priority: a user's priority must not stop another user's on-demand job.
bool MayPreempt(const JobSpec& waiting, const JobSpec& victim) {
  if (!victim.preemptible) return false;
  return !waiting.preemptible || victim.priority < waiting.priority;
}

// Hosts taken in this pass or reserved are marked draining in a view, so that the placement
// policy skips them.
void Exclude(pod::Pod& view, const pod::Placement& p) {
  for (HostId h : view.HostsIn(p)) PODSCHED_CHECK(view.SetDraining(h, true).ok());
}

}  // namespace

Pass::Pass(Inputs in, TimePoint now)
    : in_(in),
      now_(now),
      view_(in.views != nullptr ? *in.views : own_views_),
      start_version_(in.hosts.version()) {
  view_ = in.hosts.fleet().pods();  // assigned, not constructed: the old views' memory is reused
  for (const auto& [id, res] : in_.hosts.reservations()) {
    Exclude(view_[static_cast<size_t>(res.placement.pod)], res.placement.rect);
    for (const pod::FleetPlacement& p : res.more_slices) {
      Exclude(view_[static_cast<size_t>(p.pod)], p.rect);
    }
  }
}

Pass::TypeKey Pass::KeyOf(const pod::AcceleratorType& type) const {
  return {static_cast<int>(type.generation()), type.shape().rows, type.shape().cols, scope_};
}

int Pass::ScopeOf(const JobSpec& spec) {
  if (spec.zone.empty() && spec.pod.empty()) return ClassScope(spec.preemptible);
  return ScopeNumber(spec.zone, spec.pod, JobClass(spec.preemptible));
}

int Pass::JobClass(bool preemptible) const {
  // A fleet with pods for one class only: the job's class is part of where it may run.
  return in_.hosts.fleet().HasClassPods() ? (preemptible ? 2 : 1) : 0;
}

int Pass::ClassScope(bool preemptible) {
  const int job_class = JobClass(preemptible);
  if (job_class == 0) return 0;
  int& known = class_scopes_[static_cast<size_t>(job_class)];
  if (known == 0) known = ScopeNumber("", "", job_class);
  return known;
}

int Pass::ScopeNumber(const std::string& zone, const std::string& pod, int job_class) {
  if (zone.empty() && pod.empty() && job_class == 0) return 0;
  auto [it, inserted] =
      scopes_.try_emplace({zone, pod, job_class}, static_cast<int>(scope_names_.size()));
  if (inserted) scope_names_.emplace_back(zone, pod, job_class);
  return it->second;
}

const std::vector<int>& Pass::Candidates(const pod::AcceleratorType& type) {
  auto [it, inserted] = candidates_.try_emplace(KeyOf(type));
  if (inserted) {
    const auto& [zone, pod, job_class] = scope_names_[static_cast<size_t>(scope_)];
    it->second = in_.hosts.fleet().PodsThatCanHold(
        type, zone, pod, job_class == 0 ? std::nullopt : std::optional<bool>(job_class == 2));
  }
  return it->second;
}

std::string Pass::PodsText(const std::vector<int>& pods) const {
  const pod::Fleet& fleet = in_.hosts.fleet();
  if (fleet.size() == 1) return "the pod";
  std::vector<std::string> names;
  for (int i : pods) names.push_back(fleet.pod(i).name());
  return (pods.size() == 1 ? "pod " : "pods ") + pod::SomeNames(names);
}

template <typename After>
size_t Pass::ConsiderInOrder(const std::vector<QueueEntry>& queue, size_t from, size_t to,
                             bool until_head, After after) {
  // The pass touches every queued job's record, scattered in memory and visited in queue order,
  // so most of its time went to cache misses. The memory a few entries ahead is fetched while
  // this one is considered, in two steps (the second reads what the first fetched): the queue's
  // reference to the job, then the job's record. (Its reason's text is shared by the jobs told
  // it, SharedText, so it is in the cache.)
  // A job whose memo is valid is most likely skipped without reading its record.
  for (size_t i = from; i < to; ++i) {
    // Not for the jobs of a group (QueueGroup): most are skipped unread (SkipsUnread).
    if (i + 24 < queue.size() && queue[i + 24].group == 0) __builtin_prefetch(queue[i + 24].ref);
    if (const QueuedRef* ahead =
            i + 16 < queue.size() && queue[i + 16].group == 0 ? queue[i + 16].ref : nullptr;
        ahead != nullptr && !ahead->memo.valid) {
      const JobRecord* job = ahead->job;
      __builtin_prefetch(job);
      __builtin_prefetch(&job->spec.zone);
      __builtin_prefetch(&job->spec.array);
      __builtin_prefetch(&job->reason);
      __builtin_prefetch(&job->not_before);
    }
    if (queue[i].ref == nullptr) continue;  // left the queue during this pass
    if (in_.check_memos || !SkipsUnread(queue[i])) Consider(queue[i]);
    after(i);
    if (until_head && behind_) return i + 1;
  }
  return to;
}

void Pass::ConsiderQueue(const std::vector<QueueEntry>& queue, StrictTail* tail,
                         const std::vector<QueueKey>& changed) {
  const size_t stop = ConsiderInOrder(queue, 0, queue.size(), tail != nullptr, [](size_t) {});
  if (tail != nullptr) {
    if (behind_) {
      ConsiderBehindHead(queue, stop - 1, *tail, changed);
    } else {
      tail->valid = false;  // no head, so no tail: the next pass with one walks it
    }
  }
  if (in_.groups != nullptr) StampGroups();
}

void Pass::NoteBehind(const QueueEntry& e, StrictTail& tail) {
  if (e.ref == nullptr) return;  // started (it held a reservation)
  const QueuedRef& ref = *e.ref;
  using Kind = QueuedRef::Memo::Kind;
  if (!ref.memo.valid || (ref.memo.kind != Kind::kFiltered && ref.memo.kind != Kind::kBehind)) {
    tail.irregular.push_back(QueueKeyOf(e));
    return;
  }
  auto [it, inserted] = tail.groups.try_emplace({ref.user, ref.memo.preemptible});
  StrictTail::Group& group = it->second;
  if (inserted) {
    group.user = ref.user;
    group.use = ref.use;
    group.preemptible = ref.memo.preemptible;
  }
  if (ref.memo.kind == Kind::kBehind) {
    group.behind.push_back(QueueKeyOf(e));
    group.max_behind_cores = std::max(group.max_behind_cores, ref.memo.cores);
  } else {
    group.filtered.push_back(QueueKeyOf(e));
  }
}

std::array<int, 3> Pass::CountsOf(const StrictTail::Group& group) {
  return Counts(*group.user, *group.use, group.preemptible);
}

std::array<int, 3> Pass::Counts(const UserRecord& user, const QuotaUsage& use, bool preemptible) {
  return {use.Of(preemptible), user.quota.Of(preemptible),
          ReservedCores(user, preemptible, JobId())};
}

const std::array<int, 3>* Pass::MemoCounts(const QueueEntry& entry) {
  // Only the pass that considers a job reserves for it; checked all the same.
  if (!in_.hosts.reservations().empty() && in_.hosts.ReservationOf(entry.id) != nullptr) {
    return nullptr;
  }
  // This job holds no reservation.
  return &UserCountsOf(entry, entry.ref->memo.preemptible);
}

const std::array<int, 3>& Pass::UserCountsOf(const QueueEntry& entry, bool preemptible) {
  const size_t slot = size_t{entry.user_number} * 2 + (preemptible ? 1 : 0);
  if (slot >= user_counts_.size()) user_counts_.resize(slot + 1);
  UserCounts& known = user_counts_[slot];
  if (known.version_plus_one != in_.hosts.version() + 1) {
    const QueuedRef& ref = *entry.ref;
    const std::array<int, 3> counts = Counts(*ref.user, *ref.use, preemptible);
    const auto [used, limit, promised] = counts;
    known = {in_.hosts.version() + 1, counts, std::min(limit, limit - used - promised)};
  }
  return known.counts;
}

namespace {

// Whether Filter lets a job of `cores` through a user's counts (used, limit, promised).
bool LetsThrough(int cores, const std::array<int, 3>& counts) {
  const auto [used, limit, promised] = counts;
  return cores <= limit && used + promised + cores <= limit;
}

// Whether a user's headroom for a job (QueuedRef::Memo: cores <= limit, used + promised + cores <=
// limit) got smaller: only then can a job told it is behind be filtered instead.
bool Shrank(const std::array<int, 3>& was, const std::array<int, 3>& now) {
  return now[1] < was[1] || now[1] - now[0] - now[2] < was[1] - was[0] - was[2];
}

// Whether a job of `group` told it is behind (and so let through by Filter then) may be filtered
// under `now`: not while Filter lets through the largest of them, since it lets a job through more
// easily the fewer cores it asks. (Without quotas, every start of a user's job shrank the user's
// headroom, and all of that user's jobs behind the head were read again.)
bool BehindMayBeFiltered(const StrictTail::Group& group, const std::array<int, 3>& now) {
  return !LetsThrough(group.max_behind_cores, now);
}

void TakeAfter(std::vector<QueueKey>& from, const QueueKey& after, std::vector<QueueKey>& to) {
  for (const QueueKey& k : from) {
    if (after < k) to.push_back(k);
  }
  from.clear();
}

}  // namespace

void Pass::Recount(StrictTail& tail, const QueueKey& after, std::vector<QueueKey>* visit) {
  for (auto& [key, group] : tail.groups) {
    const std::array<int, 3> counts = CountsOf(group);
    if (counts == group.counts) continue;
    group.revisit = true;  // its members read before this hold under the old counts
    if (visit != nullptr) {
      for (const QueueKey& k : group.filtered) {
        if (after < k) visit->push_back(k);
      }
      if (Shrank(group.counts, counts) && BehindMayBeFiltered(group, counts)) {
        for (const QueueKey& k : group.behind) {
          if (after < k) visit->push_back(k);
        }
      }
    }
    group.counts = counts;
  }
}

void Pass::CheckUnread(const std::vector<QueueEntry>& queue, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (queue[i].ref == nullptr) continue;
    PODSCHED_CHECK_MSG(queue[i].ref->memo.valid && MemoHolds(queue[i]),
                       ("job " + std::to_string(queue[i].id.value()) +
                        " not read behind the head, but its memo does not hold")
                           .c_str());
    CheckSkipped(queue[i]);
  }
}

void Pass::ConsiderBehindHead(const std::vector<QueueEntry>& queue, size_t head,
                              StrictTail& tail, const std::vector<QueueKey>& changed) {
  const QueueKey head_key = QueueKeyOf(queue[head]);
  // The last pass's lists describe the jobs behind its head, so with the same text they hold for
  // this pass's jobs behind both heads (`known`), but those changed since. The jobs between this
  // head and the last one, when this one is further forward, are read in full. Otherwise every
  // job behind the head is read, and the lists are made again.
  const bool shortcut =
      tail.valid && behind_text_ != 0 && tail.text == behind_text_ && !(now_ < tail.at);
  const QueueKey known = shortcut ? std::max(head_key, tail.head) : head_key;
  const bool forward = known != head_key;  // this head is before the last one
  tail.valid = false;
  tail.head = head_key;
  tail.text = behind_text_;
  tail.at = now_;
  const auto after_known = [&](const QueueKey& k) { return known < k; };
  std::vector<QueueKey> visit;  // the jobs after `known` to read
  if (!shortcut) {
    tail.groups.clear();
    tail.irregular.clear();
  } else {
    std::copy_if(changed.begin(), changed.end(), std::back_inserter(visit), after_known);
    std::copy_if(tail.irregular.begin(), tail.irregular.end(), std::back_inserter(visit),
                 after_known);
    tail.irregular.clear();
    // A user's jobs are read again (and noted again as they are read) when the counts changed:
    // those told Filter's reason, whose text has the counts in it, and those told they are
    // behind when the headroom got smaller than the largest of them asks.
    const auto before_known = [&](const QueueKey& k) { return !after_known(k); };
    for (auto it = tail.groups.begin(); it != tail.groups.end();) {
      StrictTail::Group& group = it->second;
      const std::array<int, 3> counts = CountsOf(group);
      if (counts != group.counts || group.revisit) {
        TakeAfter(group.filtered, known, visit);
        if ((group.revisit || Shrank(group.counts, counts)) && BehindMayBeFiltered(group, counts)) {
          TakeAfter(group.behind, known, visit);
          group.max_behind_cores = 0;
        }
        group.counts = counts;
        group.revisit = false;
      }
      if (forward) {  // those up to `known` are read and noted below
        std::erase_if(group.filtered, before_known);
        std::erase_if(group.behind, before_known);
      }
      it = group.filtered.empty() && group.behind.empty() ? tail.groups.erase(it) : std::next(it);
    }
  }
  // A job read here that changes leases or reservations (one holding a reservation starts, say)
  // changes its user's counts: Recount.
  uint64_t version = in_.hosts.version();
  const auto note = [&](size_t i) {
    NoteBehind(queue[i], tail);
    if (in_.hosts.version() == version) return;
    version = in_.hosts.version();
    Recount(tail, QueueKeyOf(queue[i]), shortcut ? &visit : nullptr);
  };
  // Read in full: every job behind the head, or those up to the last pass's head.
  const size_t from = static_cast<size_t>(
      std::upper_bound(queue.begin() + static_cast<std::ptrdiff_t>(head) + 1, queue.end(), known,
                       [](const QueueKey& k, const QueueEntry& e) { return k < QueueKeyOf(e); }) -
      queue.begin());
  ConsiderInOrder(queue, head + 1, shortcut ? from : queue.size(), false, note);
  if (shortcut) {
    std::sort(visit.begin(), visit.end());
    visit.erase(std::unique(visit.begin(), visit.end()), visit.end());
    const auto key_less = [](const QueueEntry& e, const QueueKey& k) { return QueueKeyOf(e) < k; };
    size_t last = from - 1;  // the last entry read
    for (size_t v = 0; v < visit.size(); ++v) {
      const auto at = std::lower_bound(queue.begin() + static_cast<std::ptrdiff_t>(last) + 1,
                                       queue.end(), visit[v], key_less);
      if (at == queue.end()) break;
      if (QueueKeyOf(*at) != visit[v] || at->ref == nullptr) continue;  // left the queue
      const size_t i = static_cast<size_t>(at - queue.begin());
      // Every job not read would have been skipped by its memo, as it stands when it comes.
      if (in_.check_memos) CheckUnread(queue, last + 1, i);
      skipped_unread_ += static_cast<int64_t>(i - last - 1);
      last = i;
      Consider(*at);
      const size_t before = visit.size();
      note(i);
      if (visit.size() != before) {  // Recount added jobs still to read
        std::sort(visit.begin() + static_cast<std::ptrdiff_t>(v) + 1, visit.end());
        visit.erase(std::unique(visit.begin() + static_cast<std::ptrdiff_t>(v) + 1, visit.end()),
                    visit.end());
      }
    }
    if (in_.check_memos) CheckUnread(queue, last + 1, queue.size());
    skipped_unread_ += static_cast<int64_t>(queue.size() - last - 1);
    skipped_ += skipped_unread_;
  }
  for (auto& [key, group] : tail.groups) group.counts = CountsOf(group);
  tail.valid = true;
}

void Pass::Consider(const QueueEntry& entry) {
  if (entry.group != 0 && in_.groups != nullptr && SkippedAsGroup(entry)) return;
  QueuedRef& ref = *entry.ref;
  if (ref.memo.valid && (MemoHolds(entry) || BlockedAsBefore(entry))) {
    // Its reason would be the one it has.
    ++skipped_;
    if (in_.check_memos) CheckSkipped(entry);
    return;
  }
  ref.memo.valid = false;
  JobRecord& job = *ref.job;
  const pod::AcceleratorType& type = ref.type;
  scope_ = ScopeOf(job.spec);
  if (auto why = Filter(entry)) {
    // A reservation is only held for a job that could use it now.
    if (in_.hosts.Unreserve(job.id)) in_.binder.PassAgain();
    in_.binder.SetReason(job, *why);
    Remember(ref, QueuedRef::Memo::Kind::kFiltered);
    return;
  }
  // Strict order: a job holding a reservation is past the blocker already (its hosts are set
  // aside); every other job waits behind it.
  if (behind_ && in_.hosts.ReservationOf(job.id) == nullptr) {
    in_.binder.SetReason(job, *behind_);
    Remember(ref, QueuedRef::Memo::Kind::kBehind);
    return;
  }
  if (scope_ != 0 && Candidates(type).empty()) {
    // Checked at submission: the configuration changed since (a pod renamed, a zone moved).
    const std::string where = !job.spec.pod.empty()    ? "pod " + job.spec.pod
                              : !job.spec.zone.empty() ? "zone " + job.spec.zone
                                                       : "class";
    in_.binder.SetReason(job, "no pod of this fleet matches its " + where + " that can hold a " +
                                  type.ToString() + " (was the configuration changed?)");
    return;
  }
  if (job.spec.slices > 1) {
    ConsiderSlices(entry);
    return;
  }
  if (auto chosen = Score(entry)) {
    BindAndTake(job, {*chosen});
    return;
  }
  if (AwaitReservation(job)) return;
  if (!FitsHealthyPod(type)) {
    // No eviction can help and waiting in line would hold up everyone behind: it waits aside.
    in_.binder.SetReason(job, AsideReason(type));
    Remember(ref, QueuedRef::Memo::Kind::kAside);
    return;
  }
  bool lasting = false;
  if (Preempt(ref, type, &lasting)) return;
  // Blocked behind this pass's head, it stays blocked while nothing it was judged on changes,
  // when its answer lasts and this pass has changed nothing yet: its own binds and reservations
  // are draining hosts in its views, which a victim search cannot free but the next pass's can.
  // Otherwise the memo only says what it was told (BlockedAsBefore). The first blocked job
  // becomes the head, Block, and is never skipped: no head is known when it comes.
  if (head_id_ != 0) {
    Remember(ref, QueuedRef::Memo::Kind::kBlocked,
             lasting && in_.hosts.version() == start_version_);
  }
  Block(type);
}

void Pass::ConsiderSlices(const QueueEntry& entry) {
  JobRecord& job = *entry.ref->job;
  const pod::AcceleratorType& type = entry.ref->type;
  if (const Reservation* res = in_.hosts.ReservationOf(job.id)) {
    // Its victims are gone: the slices kept for it.
    std::vector<pod::FleetPlacement> kept = res->Slices();
    if (std::all_of(kept.begin(), kept.end(),
                    [&](const pod::FleetPlacement& p) { return in_.hosts.fleet().CanPlace(p); })) {
      BindAndTake(job, kept);
      return;
    }
    if (AwaitReservation(job)) return;
  }
  if (std::optional<std::vector<pod::FleetPlacement>> slices = ChooseSlices(entry)) {
    BindAndTake(job, *slices);
    return;
  }
  if (!SlicesFitHealthy(type, job.spec.slices)) {
    // As for a single slice (AsideReason): waiting in line would hold up everyone behind.
    in_.binder.SetReason(job, "no " + std::to_string(job.spec.slices) + " " + type.ToString() +
                                  " slices fit the healthy hosts of one zone of " +
                                  PodsText(Candidates(type)) +
                                  ": waits for repairs without blocking others");
    return;
  }
  if (PreemptForSlices(job, type)) return;
  in_.binder.SetReason(job, "no room for " + std::to_string(job.spec.slices) + " " +
                                type.ToString() + " slices in one zone of " +
                                PodsText(Candidates(type)));
  Block(type, /*multislice=*/true);
}

bool Pass::PreemptForSlices(JobRecord& job, const pod::AcceleratorType& type) {
  if (in_.profile.post_filter == nullptr) return false;
  const pod::SliceShape shape = type.shape();
  const VictimSets& sets = VictimsFor(job.spec);
  // As for ChooseSlices: no plan for N slices in this pass, none for N or more (the victims only
  // become fewer). Per class and priority (what may be evicted) and side of the head.
  const VictimKey key = VictimKeyOf(type, job.spec.preemptible, job.spec.priority);
  if (auto it = failed_slice_preemption_.find(key);
      it != failed_slice_preemption_.end() && job.spec.slices >= it->second) {
    if (sets.earliest != TimePoint::max()) in_.binder.WakeAt(sets.earliest);
    return false;
  }
  const std::vector<pod::Pod>& views = head_view_ ? *head_view_ : view_;
  // Per zone, slice after slice: a free rectangle if there is one, else the cheapest victims in
  // one of the zone's pods (Profile::post_filter), those already chosen for an earlier slice
  // counted as free. The zone whose plan loses the least work wins.
  struct Plan {
    std::vector<pod::FleetPlacement> slices;
    std::set<JobId> victims;
    double lost_core_seconds = 0;
  };
  std::optional<Plan> best;
  for (const std::vector<int>& pods : CandidatesByZone(type)) {
    std::vector<pod::Pod> trial = views;  // a copy: multislice decisions are few
    std::map<int, VictimCandidates> candidates;
    for (int i : pods) {
      if (auto it = sets.eligible.find(i); it != sets.eligible.end()) candidates[i] = it->second;
    }
    Plan plan;
    while (static_cast<int>(plan.slices.size()) < job.spec.slices) {
      std::optional<pod::FleetPlacement> chosen = in_.profile.score->ChooseAmong(trial, pods, type);
      std::optional<VictimChoice> evict;
      if (!chosen) {
        for (int i : pods) {
          auto c = in_.profile.post_filter->Choose(trial[static_cast<size_t>(i)], shape, candidates[i]);
          if (c && (!evict || std::tie(c->lost_core_seconds, c->cores) <
                                  std::tie(evict->lost_core_seconds, evict->cores))) {
            evict = std::move(c);
            chosen = pod::FleetPlacement{i, evict->placement};
          }
        }
      }
      if (!chosen) break;
      Exclude(trial[static_cast<size_t>(chosen->pod)], chosen->rect);
      plan.slices.push_back(*chosen);
      if (!evict) continue;
      plan.lost_core_seconds += evict->lost_core_seconds;
      for (JobId v : evict->victims) {
        if (!plan.victims.insert(v).second) continue;
        // Going anyway: free for the next slices.
        for (auto& [pod, by_alloc] : candidates) {
          for (auto& [alloc, c] : by_alloc) {
            if (c.job == v) c = VictimCandidate{v, 0, 0};
          }
        }
      }
    }
    if (static_cast<int>(plan.slices.size()) < job.spec.slices || plan.victims.empty()) continue;
    if (!best || plan.lost_core_seconds < best->lost_core_seconds) best = std::move(plan);
  }
  if (!best) {
    int& least = failed_slice_preemption_.try_emplace(key, job.spec.slices).first->second;
    least = std::min(least, job.spec.slices);
    // Work past its minimum runtime later may do: look again then.
    if (sets.earliest != TimePoint::max()) in_.binder.WakeAt(sets.earliest);
    return false;
  }
  const std::vector<JobId> victims(best->victims.begin(), best->victims.end());
  for (JobId v : victims) {
    in_.binder.StartPreemption(v, PreemptedFor(job), job.id);
  }
  Reservation res{best->slices.front(), victims,
                  std::vector<pod::FleetPlacement>(best->slices.begin() + 1, best->slices.end())};
  in_.hosts.Reserve(job.id, res);
  for (const pod::FleetPlacement& p : best->slices) Take(p);
  in_.binder.SetReason(job, "waiting for job " + Ids(victims) + " to checkpoint");
  return true;
}

std::optional<std::vector<pod::FleetPlacement>> Pass::ChooseSlices(const QueueEntry& entry) {
  const JobRecord& job = *entry.ref->job;
  const pod::AcceleratorType& type = entry.ref->type;
  SetProtect(job);
  const std::vector<pod::Pod>& views = protect_ ? *head_view_ : view_;
  const pod::SliceShape shape = type.shape();
  // A shape that found no room for one slice in this pass finds none for more, and one that
  // found none for N slices finds none for N or more (availability only shrinks in a pass).
  const FailedShape key{static_cast<int>(type.generation()), shape.rows, shape.cols, scope_,
                        protect_};
  if (Failed(key)) return std::nullopt;
  auto failed = failed_slices_.find(key);
  if (failed != failed_slices_.end() && job.spec.slices >= failed->second) return std::nullopt;
  // The zone of the profile's choice for one slice over the whole fleet comes first (best fit:
  // a zone of devices before a pod's corner, as for a single slice; its ties to the zone of the
  // job's checkpoint store, HomeFirst), then the others in order.
  const std::optional<pod::FleetPlacement> first =
      in_.profile.score->ChooseAmong(views, HomeFirst(job, Candidates(type)), type);
  if (!first) {
    failed_.push_back(key);
    return std::nullopt;
  }
  std::vector<std::vector<int>> zones = CandidatesByZone(type);
  std::stable_partition(zones.begin(), zones.end(), [&](const std::vector<int>& pods) {
    return std::find(pods.begin(), pods.end(), first->pod) != pods.end();
  });
  for (const std::vector<int>& pods : zones) {
    int available = 0;
    for (int i : pods) available += views[static_cast<size_t>(i)].AvailableHosts();
    if (available < job.spec.slices * shape.hosts()) continue;  // too few hosts: no copy
    // The profile's choice, slice after slice, each excluded from what the next may use, on a
    // copy of the views.
    std::vector<pod::Pod> trial = views;
    std::vector<pod::FleetPlacement> chosen;
    while (static_cast<int>(chosen.size()) < job.spec.slices) {
      std::optional<pod::FleetPlacement> p = in_.profile.score->ChooseAmong(trial, pods, type);
      if (!p) break;
      Exclude(trial[static_cast<size_t>(p->pod)], p->rect);
      chosen.push_back(*p);
    }
    if (static_cast<int>(chosen.size()) == job.spec.slices) return chosen;
  }
  int& least = failed_slices_.try_emplace(key, job.spec.slices).first->second;
  least = std::min(least, job.spec.slices);
  return std::nullopt;
}

std::string Pass::AsideReason(const pod::AcceleratorType& type) {
  int out_of_service = 0;
  const std::vector<int>& pods = Candidates(type);
  for (int i : pods) {
    const pod::Pod& pod = in_.hosts.fleet().pod(i);
    for (int h = 0; h < pod.num_hosts(); ++h) {
      const pod::HostStatus& host = pod.host(HostId(h));
      out_of_service += (!host.healthy || host.draining) ? 1 : 0;
    }
  }
  const pod::SliceShape shape = type.shape();
  return "no " + std::to_string(shape.rows) + "x" + std::to_string(shape.cols) +
         " block of healthy hosts in " + PodsText(pods) + " (" + std::to_string(out_of_service) +
         " unhealthy or draining): waits for repairs without blocking others";
}

// The memo reads only the QueuedRef and the user's records, not the job's own (scattered in
// memory): what makes skipping cheaper than Filter.
bool Pass::MemoHolds(const QueueEntry& entry) {
  const QueuedRef& ref = *entry.ref;
  const QueuedRef::Memo& m = ref.memo;
  using Kind = QueuedRef::Memo::Kind;
  if (now_ < m.at) return false;
  if (m.kind == Kind::kBehind && (behind_text_ == 0 || m.behind_text != behind_text_)) return false;
  if (m.kind == Kind::kBlocked || m.kind == Kind::kAside) {
    // The same hosts, leases and reservations, and for a blocked job the same head ahead of it.
    // Behind strict order's first blocked job, every job Filter lets through is told it is
    // behind instead (Consider): an aside job too. (Strict order has no head.)
    if (behind_) return false;
    if (m.hosts_version != in_.hosts.blocked_version()) return false;
    if (m.kind == Kind::kBlocked && (!m.exact || head_id_ == 0 || m.head != head_id_)) {
      return false;
    }
  }
  const std::array<int, 3>* counts = MemoCounts(entry);
  if (counts == nullptr) return false;
  // Behind, blocked, aside: Filter still lets it through (then its reason is the one it was given
  // after Filter). Filtered: the same numbers make the same quota reason.
  if (m.kind != Kind::kFiltered) return LetsThrough(m.cores, *counts);
  return *counts == std::array<int, 3>{m.used, m.limit, m.promised};
}

// After a job ends the leases have changed and no blocked job's memo holds, so each was judged
// again in full: Filter, Score and the victim search, answered from this pass's caches after the
// first job of each shape, class and priority, but reading the job's record (a cache miss per
// job) on the way and giving it the text it had. This finds the same answers in the same caches
// from what the memo kept, without the record; a job whose answers are not there yet (the first
// of its kind in this pass) is judged in full. When the answer's text differs from the one the
// job was told (a pass after a job's end often changes it for every job of a kind: "N running
// jobs would have to go" counts them), the job is told the new text, and only then is its record
// written.
uint64_t Pass::BlockedKindKey(const pod::AcceleratorType& type, int priority, bool preemptible,
                              bool protect) {
  const auto generation = static_cast<uint64_t>(type.generation());
  const pod::SliceShape shape = type.shape();
  // Each field within its bits: a pod's grid is at most 16x16 hosts, priorities 0..kMaxPriority.
  PODSCHED_CHECK(generation < 256 && shape.rows >= 0 && shape.rows < 256 && shape.cols >= 0 &&
                 shape.cols < 256 && priority >= 0 && priority <= kMaxPriority);
  return generation << 56 | static_cast<uint64_t>(shape.rows) << 48 |
         static_cast<uint64_t>(shape.cols) << 40 | static_cast<uint64_t>(priority) << 2 |
         (preemptible ? 2U : 0U) | (protect ? 1U : 0U);
}

const Pass::BlockedAnswer* Pass::BlockedAnswerOf(const QueueEntry& entry,
                                                 std::optional<bool> protect_as) {
  const QueuedRef& ref = *entry.ref;
  const QueuedRef::Memo& m = ref.memo;
  using Kind = QueuedRef::Memo::Kind;
  // Consider's order: Filter (as MemoHolds checks it), strict order's "behind", the scope, Score,
  // AwaitReservation, FitsHealthyPod, Preempt, then Block, which does nothing once there is a head.
  if (m.kind != Kind::kBlocked || !m.anywhere || behind_ || !head_view_ || now_ < m.at) {
    return nullptr;
  }
  if (const auto* counts = MemoCounts(entry); counts == nullptr || !LetsThrough(m.cores, *counts)) {
    return nullptr;
  }
  const pod::AcceleratorType& type = ref.type;
  const bool protect = protect_as.value_or(Protects(m.estimate));
  const uint64_t kind = m.kind_key | (protect ? 1U : 0U);  // BlockedKindKey's protect bit
  auto known = std::find_if(blocked_answers_.begin(), blocked_answers_.end(),
                            [kind](const auto& known) { return known.first == kind; });
  if (known == blocked_answers_.end()) {
    scope_ = ClassScope(m.preemptible);
    const pod::SliceShape shape = type.shape();
    if (!Failed({static_cast<int>(type.generation()), shape.rows, shape.cols, scope_, protect})) {
      return nullptr;
    }
    if (auto fits = fits_healthy_.find(KeyOf(type)); fits == fits_healthy_.end() || !fits->second) {
      return nullptr;
    }
    const auto none = failed_preemption_.find(VictimKeyOf(type, m.preemptible, ref.priority));
    if (none == failed_preemption_.end() || none->second.text == 0) return nullptr;
    blocked_answers_.emplace_back(
        kind, BlockedAnswer{none->second.text, none->second.lasting, &none->second});
    known = blocked_answers_.end() - 1;
  }
  return &known->second;
}

void Pass::RefreshBlocked(QueuedRef::Memo& m, const BlockedAnswer& answer) {
  m.exact = answer.lasting && in_.hosts.version() == start_version_;  // as Consider's
  if (m.exact) {
    m.hosts_version = in_.hosts.blocked_version();
    m.head = head_id_;
    m.at = now_;
  }
}

bool Pass::BlockedAsBefore(const QueueEntry& entry) {
  const BlockedAnswer* answer = BlockedAnswerOf(entry, std::nullopt);
  if (answer == nullptr) return false;
  QueuedRef& ref = *entry.ref;
  if (ref.told == answer->text) {
    ++told_known_;
  } else {
    TellNoVictims(ref, *answer->none);  // the same answer in other words: the record is written
  }
  RefreshBlocked(ref.memo, *answer);
  return true;
}

bool Pass::ProbeBlocked(const QueueEntry& entry, bool protect) {
  // Consider's steps for a job that Filter lets through, without their effects on the job: Score
  // on the view `protect` gives, FitsHealthyPod, and the victim search.
  const QueuedRef& ref = *entry.ref;
  const pod::AcceleratorType& type = ref.type;
  const pod::SliceShape shape = type.shape();
  scope_ = ClassScope(ref.memo.preemptible);
  const FailedShape key{static_cast<int>(type.generation()), shape.rows, shape.cols, scope_,
                        protect};
  if (!Failed(key)) {
    if (in_.profile.score->ChooseAmong(protect ? *head_view_ : view_, Candidates(type), type)) {
      return false;
    }
    failed_.push_back(key);
  }
  if (!FitsHealthyPod(type)) return false;
  const VictimSearch search = SearchVictims(*ref.job, type);
  if (search.found) return false;
  if (search.wake != TimePoint::max()) in_.binder.WakeAt(search.wake);  // as Preempt
  return true;
}

bool Pass::SkippedAsGroup(const QueueEntry& entry) {
  using Way = GroupDecision::Way;
  if (entry.group >= group_decisions_.size()) group_decisions_.resize(in_.groups->group_ids());
  GroupDecision& decision = group_decisions_[entry.group];
  if (decision.way == Way::kOneByOne) return false;
  QueueGroup& group = in_.groups->group(entry.group);
  // Every member judged on its own from now on (StampGroups may stamp the group again).
  const auto one_by_one = [&] {
    in_.groups->Unstamp(entry.group);
    decision.way = Way::kOneByOne;
    one_by_one_.push_back(entry.group);
    return false;
  };
  // An outlier was met: StampGroups may take it back into the stamp.
  const auto note_outliers = [&] {
    if (!decision.outliers_seen) {
      decision.outliers_seen = true;
      with_outliers_.push_back(entry.group);
    }
  };
  if (!group.stamped) return one_by_one();
  if (group.HasOutliers() && group.IsOutlier(entry.id)) {
    note_outliers();  // judged on its own, by its own memo
    return false;
  }
  const auto judge_alone = [&] {
    group.GiveStampTo(*entry.ref);  // what it was told, as its own memo
    if (!group.AddOutlier(*entry.ref, entry.id)) return one_by_one();  // too many
    decision.outlier_bits = group.outlier_bits();
    note_outliers();
    return false;
  };
  // Filter's quota is this job's user's (read by number, without the job's QueuedRef).
  if (!LetsThrough(group.memo.cores, UserCountsOf(entry, group.memo.preemptible))) {
    return judge_alone();  // filtered
  }
  const auto skip = [&] {
    ++skipped_;
    if (decision.way == Way::kByAnswer) ++told_known_;  // as BlockedAsBefore counts each
    if (in_.check_memos) {
      group.GiveStampTo(*entry.ref);
      CheckSkipped(entry);
    }
    return true;
  };
  if (decision.way != Way::kUnseen && decision.version == in_.hosts.version() &&
      decision.head == head_id_) {
    return skip();
  }
  if (head_id_ == 0) {
    // Before this pass's backfill head no memo of a blocked job holds: this one is placed, or
    // preempts, or becomes the head.
    return judge_alone();
  }
  // Judged now, by the group's memo, as this job alone would be: every member's is the same.
  QueuedRef& ref = *entry.ref;
  group.GiveStampTo(ref);
  Way way = Way::kOneByOne;
  if (MemoHolds(entry)) {
    way = Way::kByMemo;
  } else {
    // The answer for the members' view: the whole one when some member may use the head's
    // rectangle. No room there means none on the view without the rectangle either, and the
    // victims' answer is the same for both, so it is every member's, whatever its expected
    // runtime. Not found yet in this pass: found now, as Consider would for this member.
    const bool protect = head_view_ != nullptr && (group.min_estimate == Duration::max() ||
                                                   now_ + group.min_estimate > head_start_);
    const BlockedAnswer* answer = BlockedAnswerOf(entry, protect);
    if (answer == nullptr && ProbeBlocked(entry, protect)) {
      answer = BlockedAnswerOf(entry, protect);
    }
    if (answer == nullptr) {
      // It may start or preempt: judged on its own (and the next member as this one).
      return judge_alone();
    }
    if (answer->text == ref.told) {
      RefreshBlocked(ref.memo, *answer);
      way = Way::kByAnswer;
    }
  }
  if (way == Way::kOneByOne) return one_by_one();  // every member is told another text
  group.memo = ref.memo;
  decision.way = way;
  decision.version = in_.hosts.version();
  decision.head = head_id_;
  decision.preemptible = group.memo.preemptible;
  decision.cores = group.memo.cores;
  decision.outlier_bits = group.outlier_bits();
  return skip();
}

void Pass::StampGroups() {
  using Kind = QueuedRef::Memo::Kind;
  // The group's memo must be true of every member it covers: all were told one text and are
  // blocked jobs of one kind, but some were refreshed in this pass and others not (their memo
  // held), so that their memos differ in the hosts and head they were made at, and in when. The
  // group's is the latest time (a clock that went back judges them all again) and, unless all
  // were made on the same hosts and head, not exact: it holds in no later pass by itself, yet
  // says what they were told (BlockedAnswerOf). Expected runtimes differ: each member keeps its
  // own (QueueGroup::GiveStampTo).
  const auto joins = [](const QueuedRef& member, const QueueGroup& group) {
    const QueuedRef::Memo& m = member.memo;
    return m.valid && m.kind == Kind::kBlocked && member.told == group.told &&
           m.preemptible == group.memo.preemptible && m.cores == group.memo.cores &&
           m.anywhere == group.memo.anywhere && m.kind_key == group.memo.kind_key;
  };
  const auto merge = [](QueueGroup& group, const QueuedRef::Memo& m) {
    QueuedRef::Memo& memo = group.memo;
    memo.exact =
        memo.exact && m.exact && m.hosts_version == memo.hosts_version && m.head == memo.head;
    memo.at = std::max(memo.at, m.at);
  };
  for (const uint32_t id : one_by_one_) {
    QueueGroup& group = in_.groups->group(id);
    if (group.stamped || group.members.empty()) continue;
    // The first member blocked and told a text with a number gives the group's; members whose
    // memo says otherwise (the backfill head, a job filtered by its user's quota) are judged on
    // their own as outliers, while they are few.
    auto first = std::find_if(group.members.begin(), group.members.end(), [](const QueuedRef* r) {
      return r->memo.valid && r->memo.kind == Kind::kBlocked && r->told != 0;
    });
    if (first == group.members.end()) continue;
    group.memo = (*first)->memo;
    group.told = (*first)->told;
    group.ClearOutliers();
    bool too_many = false;
    for (QueuedRef* member : group.members) {
      if (joins(*member, group)) {
        merge(group, member->memo);
      } else if (!group.AddOutlier(*member, member->job->id)) {
        too_many = true;
        break;
      }
    }
    if (too_many) {
      group.ClearOutliers();
      continue;
    }
    group.stamped = true;
  }
  // Outliers whose memo now says what their group's does join its stamp.
  for (const uint32_t id : with_outliers_) {
    QueueGroup& group = in_.groups->group(id);
    if (!group.stamped) continue;
    group.TakeBackOutliers([&](JobId, const QueuedRef& outlier) {
      if (!joins(outlier, group)) return false;
      merge(group, outlier.memo);
      return true;
    });
  }
}

void Pass::CheckSkipped(const QueueEntry& entry) {
  const JobRecord& job = *entry.ref->job;
  const auto fail = [&](const std::string& what) {
    PODSCHED_CHECK_MSG(false, ("job " + std::to_string(job.id.value()) + " skipped " + what).c_str());
  };
  scope_ = ScopeOf(job.spec);
  const std::optional<std::string> why = Filter(entry);
  const bool reserved = in_.hosts.ReservationOf(job.id) != nullptr;
  if (reserved) fail("but holds a reservation");
  std::string want;
  using Kind = QueuedRef::Memo::Kind;
  const Kind kind = entry.ref->memo.kind;
  if (kind == Kind::kFiltered || kind == Kind::kBehind) {
    if (!why && !behind_) fail("but would be placed");
    want = why ? *why : *behind_;
  } else {
    if (why || behind_) fail("as blocked or aside, but is filtered or behind");
    if (Score(entry)) fail("as blocked, but would be placed");
    const pod::AcceleratorType& type = entry.ref->type;
    if (kind == Kind::kAside) {
      if (FitsHealthyPod(type)) fail("as aside, but a block of healthy hosts can hold it");
      want = AsideReason(type);
    } else {
      if (!FitsHealthyPod(type)) fail("as blocked, but waits aside");
      const VictimSearch search = SearchVictims(job, type);
      if (search.found) fail("as blocked, but would preempt");
      if (!search.none->lasting && entry.ref->memo.exact) {
        fail("as blocked for good, but its victims wait for a minimum runtime");
      }
      want = search.none->why;
    }
  }
  if (job.reason != want) fail("with '" + job.reason + "', should be '" + want + "'");
}

void Pass::Remember(QueuedRef& ref, QueuedRef::Memo::Kind kind, bool exact) {
  using Kind = QueuedRef::Memo::Kind;
  const JobRecord& job = *ref.job;
  // Filter's other reasons change with other jobs (dependencies, an array's throttle) or with
  // time (not_before); a reservation is dropped or used by the job's next pass.
  if (!job.spec.dependencies.empty() || job.spec.array || job.not_before > now_ ||
      in_.hosts.ReservationOf(job.id) != nullptr ||
      (kind == Kind::kBehind && behind_text_ == 0)) {
    return;
  }
  QueuedRef::Memo& m = ref.memo;
  m.valid = true;
  m.kind = kind;
  m.behind_text = kind == Kind::kBehind ? behind_text_ : 0;
  m.preemptible = job.spec.preemptible;
  m.cores = JobCores(job.spec, ref.type);
  m.used = ref.use->Of(m.preemptible);
  m.limit = ref.user->quota.Of(m.preemptible);
  m.promised = ReservedCores(*ref.user, m.preemptible, job.id);
  m.hosts_version = in_.hosts.blocked_version();
  m.head = head_id_;
  m.at = now_;
  m.exact = exact;
  m.anywhere = job.spec.zone.empty() && job.spec.pod.empty();
  m.estimate = job.spec.expected_runtime.value_or(job.spec.max_runtime);
  m.kind_key = BlockedKindKey(ref.type, ref.priority, m.preemptible, false);
}

std::optional<std::string> Pass::Filter(const QueueEntry& entry) {
  const JobRecord& job = *entry.ref->job;
  if (auto held = in_.jobs.HeldBack(job)) return held;
  if (job.not_before > now_) {
    // not_before is set by a retry's backoff and by repeated exits 75 without a preemption
    // (both say so in the reason); a job that never ran sees it only when the clock reads
    // before the epoch (a replay whose times start below zero): not a failure.
    if (job.reason.starts_with("retry") || job.reason.starts_with("preempted")) return job.reason;
    return job.restarts == 0 ? "waiting for its start time" : "backoff after a failure";
  }
  const int cores = JobCores(job.spec, entry.ref->type);
  const bool preemptible = job.spec.preemptible;
  const int limit = entry.ref->user->quota.Of(preemptible);
  if (cores > limit) {
    return "quota: the " + ClassName(preemptible) + " quota of " + std::to_string(limit) +
           " cores is smaller than the job's " + std::to_string(cores) +
           "; it can start only once the quota is raised";
  }
  const int used = entry.ref->use->Of(preemptible);
  const int promised = ReservedCores(*entry.ref->user, preemptible, job.id);
  if (used + promised + cores > limit) {
    std::string reason = "quota: " + std::to_string(used) + "/" + std::to_string(limit) + " " +
                         ClassName(preemptible) + " cores in use";
    if (promised > 0) reason += ", " + std::to_string(promised) + " reserved for other jobs";
    if (used + promised < limit) reason += ", job needs " + std::to_string(cores);
    return reason;
  }
  return std::nullopt;
}

void Pass::SyncReservedCores() {
  if (reserved_version_ == in_.hosts.reservations_version()) return;
  reserved_.clear();
  reserved_by_record_.clear();
  for (const auto& [id, res] : in_.hosts.reservations()) {
    if (const JobRecord* holder = in_.jobs.Find(id)) {
      reserved_[{holder->spec.user, holder->spec.preemptible}] += in_.jobs.Cores(id);
    }
  }
  reserved_version_ = in_.hosts.reservations_version();
}

int Pass::ReservedCores(const UserRecord& user, bool preemptible, JobId except) {
  const std::map<JobId, Reservation>& reservations = in_.hosts.reservations();
  if (reservations.empty()) return 0;
  SyncReservedCores();
  // By the user's record: the lookup by name compared strings for every job of every pass.
  auto [known, fresh] = reserved_by_record_.try_emplace(&user);
  if (fresh) {
    for (const bool cls : {false, true}) {
      auto it = reserved_.find({user.name, cls});
      known->second[cls ? 1 : 0] = it == reserved_.end() ? 0 : it->second;
    }
  }
  int cores = known->second[preemptible ? 1 : 0];
  if (except != JobId() && reservations.contains(except)) {  // none for a memo's counts
    const JobRecord* own = in_.jobs.Find(except);
    if (own != nullptr && own->spec.user == user.name && own->spec.preemptible == preemptible) {
      cores -= in_.jobs.Cores(except);
    }
  }
  return cores;
}

void Pass::SetProtect(const JobRecord& job) {
  protect_ = Protects(job.spec.expected_runtime.value_or(job.spec.max_runtime));
}

bool Pass::Protects(Duration estimate) const {
  return head_view_ && (estimate <= Duration::zero() || now_ + estimate > head_start_);
}

Pass::VictimKey Pass::VictimKeyOf(const pod::AcceleratorType& type, bool preemptible,
                                  int priority) const {
  const pod::SliceShape shape = type.shape();
  return std::make_tuple(static_cast<int>(type.generation()), shape.rows, shape.cols, scope_,
                         preemptible, priority, head_view_ != nullptr);
}

std::optional<pod::FleetPlacement> Pass::Score(const QueueEntry& entry) {
  const JobRecord& job = *entry.ref->job;
  SetProtect(job);
  const std::vector<pod::Pod>& views = protect_ ? *head_view_ : view_;
  const pod::AcceleratorType& type = entry.ref->type;
  const pod::SliceShape shape = type.shape();
  const FailedShape key{static_cast<int>(type.generation()), shape.rows, shape.cols, scope_,
                        protect_};
  std::optional<pod::FleetPlacement> chosen;
  if (!Failed(key)) {
    // A job resuming from a checkpoint has its store's zone first: the policy breaks its ties
    // (first fit: any pod that fits) towards a placement that reads without crossing zones.
    chosen = in_.profile.score->ChooseAmong(views, HomeFirst(job, Candidates(type)), type);
    if (!chosen) failed_.push_back(key);
  }
  const Reservation* res = in_.hosts.ReservationOf(job.id);
  if (!chosen && res != nullptr && in_.hosts.fleet().CanPlace(res->placement)) {
    chosen = res->placement;
  }
  return chosen;
}

const std::vector<int>& Pass::HomeFirst(const JobRecord& job, const std::vector<int>& candidates) {
  if (job.checkpoint_zone.empty() || job.last_checkpoint_step == 0) return candidates;
  const pod::Fleet& fleet = in_.hosts.fleet();
  home_first_.assign(candidates.begin(), candidates.end());
  std::stable_partition(home_first_.begin(), home_first_.end(),
                        [&](int i) { return fleet.zone(i) == job.checkpoint_zone; });
  return home_first_;
}

void Pass::BindAndTake(JobRecord& job, const std::vector<pod::FleetPlacement>& slices) {
  in_.binder.Bind(job, slices);
  for (const pod::FleetPlacement& p : slices) Take(p);
}

void Pass::Take(const pod::FleetPlacement& p) {
  const auto at = static_cast<size_t>(p.pod);
  Exclude(view_[at], p.rect);
  if (head_view_) Exclude((*head_view_)[at], p.rect);
}

bool Pass::AwaitReservation(JobRecord& job) {
  const Reservation* res = in_.hosts.ReservationOf(job.id);
  if (res == nullptr) return false;
  std::vector<JobId> stopping;
  for (JobId v : res->victims) {
    const JobRecord* victim = in_.jobs.Find(v);  // an ended victim may be forgotten (retention)
    if (victim != nullptr && victim->state == JobState::kPreempting) {
      stopping.push_back(v);
    }
  }
  bool healthy = true;
  const pod::Fleet& fleet = in_.hosts.fleet();
  for (const pod::FleetPlacement& p : res->Slices()) {
    for (HostId h : fleet.HostsIn(p)) healthy &= fleet.host(h).healthy;
  }
  if (!healthy) {
    in_.hosts.Unreserve(job.id);  // a reserved host failed: look again
    return false;
  }
  in_.binder.SetReason(job, stopping.empty() ? "waiting for the hosts of job " +
                                           Ids(res->victims) + " to be released"
                                     : "waiting for job " + Ids(stopping) + " to checkpoint");
  return true;
}

bool Pass::FitsHealthyPod(const pod::AcceleratorType& type) {
  auto [it, inserted] = fits_healthy_.try_emplace(KeyOf(type), true);
  if (!inserted) return it->second;
  bool fits = false;
  for (int i : Candidates(type)) {
    const pod::Pod& pod = in_.hosts.fleet().pod(i);
    if (pod.AvailableHosts() + pod.AllocatedHosts() == pod.num_hosts()) {
      fits = true;  // every host in service: the type fits the pod's grid (Candidates)
      break;
    }
    if (in_.profile.score->Choose(HealthyView(i), type).has_value()) {
      fits = true;
      break;
    }
  }
  it->second = fits;
  return fits;
}

const pod::Pod& Pass::HealthyView(int index) {
  if (healthy_view_.empty()) healthy_view_.resize(in_.hosts.fleet().pods().size());
  std::optional<pod::Pod>& healthy = healthy_view_[static_cast<size_t>(index)];
  if (!healthy) {
    const pod::Pod& pod = in_.hosts.fleet().pod(index);
    auto empty = pod::Pod::Create(pod.name(), pod.generation(), pod.host_rows(), pod.host_cols());
    PODSCHED_CHECK(empty.has_value());
    for (int h = 0; h < pod.num_hosts(); ++h) {
      const pod::HostStatus& host = pod.host(HostId(h));
      if (!host.healthy) PODSCHED_CHECK(empty->MarkUnhealthy(HostId(h)).ok());
      if (host.draining) PODSCHED_CHECK(empty->SetDraining(HostId(h), true).ok());
    }
    healthy = std::move(*empty);
  }
  return *healthy;
}

std::vector<std::vector<int>> Pass::CandidatesByZone(const pod::AcceleratorType& type) {
  const pod::Fleet& fleet = in_.hosts.fleet();
  std::vector<std::vector<int>> zones;
  for (int i : Candidates(type)) {
    auto same = std::find_if(zones.begin(), zones.end(), [&](const std::vector<int>& pods) {
      return fleet.zone(pods.front()) == fleet.zone(i);
    });
    if (same == zones.end()) same = zones.insert(zones.end(), std::vector<int>{});
    same->push_back(i);
  }
  return zones;
}

bool Pass::SlicesFitHealthy(const pod::AcceleratorType& type, int slices) {
  auto [it, inserted] = slices_fit_healthy_.try_emplace({KeyOf(type), slices}, true);
  if (!inserted) return it->second;
  bool fits = false;
  for (const std::vector<int>& pods : CandidatesByZone(type)) {
    int placed = 0;
    for (int i : pods) {
      pod::Pod trial = HealthyView(i);
      while (placed < slices) {
        std::optional<pod::Placement> p = in_.profile.score->Choose(trial, type);
        if (!p) break;
        Exclude(trial, *p);
        ++placed;
      }
    }
    if (placed >= slices) {
      fits = true;
      break;
    }
  }
  it->second = fits;
  return fits;
}

Pass::VictimSearch Pass::SearchVictims(const JobRecord& job, const pod::AcceleratorType& type) {
  const pod::SliceShape shape = type.shape();
  // Before the backfill head and behind it the search runs on different views (the head's
  // rectangle kept free), so their answers are kept apart: a job's reason then depends on its own
  // place, not on which job of its shape came first (a memo that skips it relies on that).
  const auto key =
      std::make_tuple(static_cast<int>(type.generation()), shape.rows, shape.cols, scope_,
                      job.spec.preemptible, job.spec.priority, head_view_ != nullptr);
  VictimSearch out;
  if (auto memo = failed_preemption_.find(key); memo != failed_preemption_.end()) {
    out.none = &memo->second;
    return out;
  }
  // Candidates per pod: a rectangle is freed within one pod.
  const std::vector<int>& pods = Candidates(type);
  std::string more;  // the reason's words after "no room" (written only when nothing is found)
  bool lasting = true;
  if (in_.profile.post_filter != nullptr) {
    const VictimSets& sets = VictimsFor(job.spec);
    std::vector<pod::Pod>& victim_views = head_view_ ? *head_view_ : view_;
    // The least lost work over the pods, then the fewest cores evicted, then the first pod.
    const auto choose = [&](const std::map<int, VictimCandidates>& by_pod)
        -> std::optional<std::pair<int, VictimChoice>> {
      static const VictimCandidates kNone;
      std::optional<std::pair<int, VictimChoice>> best;
      for (int i : pods) {
        const auto here = by_pod.find(i);
        auto c = in_.profile.post_filter->Choose(victim_views[static_cast<size_t>(i)], shape,
                                                 here == by_pod.end() ? kNone : here->second);
        if (c && (!best || std::tie(c->lost_core_seconds, c->cores) <
                               std::tie(best->second.lost_core_seconds, best->second.cores))) {
          best = std::make_pair(i, std::move(*c));
        }
      }
      return best;
    };
    out.found = choose(sets.eligible);
    if (out.found) return out;
    // No victims now. When none would do later either (`later` holds every victim that may
    // become eligible, and only new leases add to it), that lasts.
    if (auto relaxed = choose(sets.later)) {
      more += "; " + std::to_string(relaxed->second.victims.size()) +
              " running jobs would have to go, after their minimum runtime";
      lasting = false;
      out.wake = sets.earliest;
      // Defragmentation: an on-demand job blocked by fragmentation alone may move them now,
      // while the budget pays for what they lose.
      if (in_.defrag != nullptr && !job.spec.preemptible) {
        // In the pods with as many available hosts as the shape needs (blocked by fragmentation
        // alone), where the profile would place it were the movable jobs gone (ChooseMoves).
        std::optional<std::pair<int, VictimChoice>> moved;
        for (int i : pods) {
          const pod::Pod& view = victim_views[static_cast<size_t>(i)];
          const auto movable = sets.later.find(i);
          if (view.AvailableHosts() < shape.hosts() || movable == sets.later.end()) continue;
          auto c = ChooseMoves(view, type, *in_.profile.score, movable->second);
          if (c && (!moved || std::tie(c->lost_core_seconds, c->cores) <
                                  std::tie(moved->second.lost_core_seconds, moved->second.cores))) {
            moved = std::make_pair(i, std::move(*c));
          }
        }
        if (moved) {
          const double lost = moved->second.lost_core_seconds;
          if (in_.defrag->Available(now_) >= lost) {
            out.found = std::move(moved);
            out.defrag = true;
            return out;
          }
          more += " (moving them to defragment waits for its budget)";
          const double wait_s = in_.defrag->SecondsUntil(lost, now_);
          if (wait_s < 365.0 * 24 * 3600) {
            out.wake = std::min(out.wake, now_ + std::chrono::duration_cast<Duration>(
                                                     std::chrono::duration<double>(wait_s)) +
                                              Duration(1));
          }
        }
      }
    }
  }
  std::string why = BlockText(shape);
  if (in_.hosts.fleet().size() > 1) why += " in " + PodsText(pods);
  ReasonTexts::Numbered told = Interned(std::move(why) + more);
  NoVictims none{std::move(told.text), lasting, told.number};
  out.none = &failed_preemption_.emplace(key, std::move(none)).first->second;
  return out;
}

const Pass::VictimSets& Pass::VictimsFor(const JobSpec& spec) {
  // Who may be evicted changes with every preemption started (a victim is then PREEMPTING) and
  // every bind; both change the version.
  if (victim_sets_version_ != in_.hosts.version()) {
    victim_sets_.clear();
    victim_sets_version_ = in_.hosts.version();
  }
  auto [it, fresh] = victim_sets_.try_emplace({spec.preemptible, spec.priority});
  if (!fresh) return it->second;
  if (!running_built_) {
    // Running work that could be evicted, once per pass (not per blocked job): preemptible
    // work only (MayPreempt), which is a fraction of what runs.
    running_built_ = true;
    for (const LeaseRef& l : Leases()) {
      if (l.owner != nullptr && l.owner->spec.preemptible) {
        running_.push_back({l.alloc, l.pod, l.owner, in_.jobs.Cores(l.owner->id)});
      }
    }
  }
  VictimSets& sets = it->second;
  for (const RunningRef& r : running_) {
    const JobRecord& v = *r.job;
    if (v.state == JobState::kPreempting || !MayPreempt(spec, v.spec)) continue;
    VictimCandidate c{v.id, r.cores * ToSeconds(now_ - v.last_checkpoint_time), r.cores};
    const TimePoint free_at = v.start_time + in_.min_runtime_before_preemption;
    // running_ comes in allocation order: each candidate goes at the end.
    if (free_at <= now_) {
      VictimCandidates& eligible = sets.eligible[r.pod];
      eligible.emplace_hint(eligible.end(), r.alloc, c);
    } else {
      sets.earliest = std::min(sets.earliest, free_at);
    }
    VictimCandidates& later = sets.later[r.pod];
    later.emplace_hint(later.end(), r.alloc, c);
  }
  return sets;
}

ReasonTexts::Numbered Pass::Interned(std::string text) {
  if (in_.reason_texts == nullptr) return {0, SharedText(std::move(text))};
  return in_.reason_texts->Intern(std::move(text));
}

void Pass::TellNoVictims(QueuedRef& ref, const NoVictims& none) {
  if (none.text != 0 && ref.told == none.text) {
    if (in_.check_memos && ref.job->reason != none.why) {
      PODSCHED_CHECK_MSG(false, ("job " + std::to_string(ref.job->id.value()) + " was told '" +
                                 none.why + "' but has '" + ref.job->reason + "'")
                                    .c_str());
    }
    ++told_known_;
    return;
  }
  in_.binder.Tell(ref, none.why, none.text);
}

bool Pass::Preempt(QueuedRef& ref, const pod::AcceleratorType& type, bool* lasting) {
  JobRecord& job = *ref.job;
  const VictimSearch search = SearchVictims(job, type);
  if (!search.found) {
    if (search.wake != TimePoint::max()) in_.binder.WakeAt(search.wake);
    TellNoVictims(ref, *search.none);
    if (lasting != nullptr) *lasting = search.none->lasting;
    return false;
  }
  const int pod_index = search.found->first;
  const VictimChoice& choice = search.found->second;
  if (search.defrag) {
    PODSCHED_CHECK(in_.defrag->Take(choice.lost_core_seconds, now_));
    defrag_moves_ += static_cast<int64_t>(choice.victims.size());
    defrag_lost_core_seconds_ += choice.lost_core_seconds;
  }
  for (JobId v : choice.victims) {
    in_.binder.StartPreemption(v, search.defrag ? MovedFor(job) : PreemptedFor(job), job.id);
  }
  const pod::FleetPlacement freed{pod_index, choice.placement};
  in_.hosts.Reserve(job.id, Reservation{freed, choice.victims, {}});
  Take(freed);
  in_.binder.SetReason(job, "waiting for job " + Ids(choice.victims) + " to checkpoint");
  return true;
}

void Pass::Block(const pod::AcceleratorType& type, bool multislice) {
  if (head_view_) return;
  Permit::Decision d;
  if (multislice && in_.profile.permit->Backfills()) {
    // Backfill keeps one rectangle for its head, which does not hold a multislice job: the jobs
    // behind could take its other slices' hosts for ever. Nothing starts behind it instead.
    d.behind = "waiting for a multislice job ahead to start (no backfill behind a multislice job)";
  } else {
    d = in_.profile.permit->OnBlocked(view_, Candidates(type), type, *in_.profile.score,
                                      [&] { return ExpectedReleases(); });
  }
  if (d.behind) {
    ReasonTexts::Numbered told = Interned(std::move(*d.behind));
    behind_ = std::move(told.text);
    behind_text_ = told.number;
  }
  if (!d.head) return;
  // Assigned, not constructed: the memory of the last pass's head views is reused.
  head_view_ = in_.head_views != nullptr ? in_.head_views : &own_head_views_;
  *head_view_ = view_;
  head_start_ = d.head->start;
  if (in_.heads != nullptr) {
    head_id_ = in_.heads->IdOf(PassHeads::Head{d.head_pod, d.head->placement, d.head->start});
  }
  if (d.head->placement) {
    Exclude((*head_view_)[static_cast<size_t>(d.head_pod)], *d.head->placement);
  }
}

const std::vector<Pass::LeaseRef>& Pass::Leases() {
  if (leases_version_ != in_.hosts.version()) {
    leases_version_ = in_.hosts.version();
    leases_.clear();
    leases_.reserve(in_.hosts.leases().size());
    for (const auto& [alloc, lease] : in_.hosts.leases()) {
      leases_.push_back({alloc, lease.placement.pod, in_.jobs.LiveOwner(lease)});
    }
  }
  return leases_;
}

std::vector<ExpectedRelease> Pass::ExpectedReleases() {
  const std::vector<LeaseRef>& leases = Leases();
  std::vector<ExpectedRelease> releases;
  releases.reserve(leases.size());
  for (const LeaseRef& l : leases) {
    TimePoint at = now_;  // lingering leases (job moved on) go soon
    if (const JobRecord* v = l.owner) {
      const Duration estimate = v->spec.expected_runtime.value_or(v->spec.max_runtime);
      if (v->state == JobState::kPreempting) {
        at = v->preempt_deadline;
      } else if (estimate > Duration::zero()) {
        at = std::max(now_, v->start_time + estimate);
      } else {
        at = TimePoint::max();
      }
    }
    releases.push_back({l.alloc, at, l.pod});
  }
  return releases;
}

}  // namespace podsched::core
