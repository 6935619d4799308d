// The QUEUED jobs: what a pass reads of each (QueuedRef) and their order of submission (submit
// time, then id), kept up to date as jobs enter and leave the queue.
//
// Why the order is kept rather than sorted each pass: a FIFO queue behind a large head grows to
// thousands of jobs, and a pass that rebuilt and sorted it from a map every time spent almost half
// of podsim's replay there (issue 29, "FIFO behind a large head"). New jobs nearly always come
// last (their submit time is now), so keeping the order costs an append; a requeued job keeps its
// submit time and is merged in at the next pass.
//
// Pure; single-threaded (the scheduler's owner). References returned stay valid until the next
// call that changes the queue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "pod/accelerator.h"
#include "scheduler/core/accounting.h"
#include "scheduler/core/job.h"

namespace podsched::core {

// A QUEUED job with direct pointers to what a pass reads (job records, types and users never
// move while the job waits), so a pass over 10,000 queued jobs does no lookups by id.
struct QueuedRef {
  // What the last pass decided for this job when all it did was give the job a reason, with the
  // inputs that reason was made of. A later pass skips the job while they are unchanged: the same
  // inputs make the same reason, which the job has already. (A FIFO queue behind a large head is
  // thousands of such jobs, every pass; a fair-share queue that nothing can start is too: issue
  // 29.) Only for jobs without dependencies or an array (their HeldBack changes with other jobs),
  // past their not_before and holding no reservation. Pass::Consider keeps it.
  struct Memo {
    enum class Kind : uint8_t {
      kFiltered,  // Filter's quota reason
      kBehind,    // strict order's reason (Filter let it through)
      // Filter let it through, then no room and no victims, with the pass's backfill head as it
      // was (`head`): the same hosts, leases, reservations and head give the same outcome.
      kBlocked,
      // Filter let it through, then no block of healthy hosts at all: waits aside.
      kAside,
    };
    bool valid = false;
    Kind kind = Kind::kFiltered;
    // kBlocked: false when the answer may change although nothing it was decided on does (a
    // victim waits for its minimum runtime), or the pass had changed something before it
    // (Pass::Consider): then it holds in no later pass (Pass::MemoHolds), but still says what
    // the job was told (Pass::BlockedAsBefore).
    bool exact = true;
    bool preemptible = false;     // the job's class (which of the user's counts)
    int cores = 0;                // the job's
    // Filter's quota inputs then: the user's cores in use, quota, and cores reserved for the
    // user's other jobs, of the job's class (kFiltered).
    int used = 0, limit = 0, promised = 0;
    uint32_t behind_text = 0;     // which strict-order text (its ReasonTexts number)
    uint64_t hosts_version = 0;   // kBlocked, kAside: HostLeases::blocked_version() then
    uint64_t head = 0;            // kBlocked: the backfill head then (PassHeads::IdOf)
    TimePoint at{};               // that pass's now: a clock that went back evaluates again
    // kBlocked: what a later pass needs to find the job's answers among its own without reading
    // the job (Pass::BlockedAsBefore): no zone or pod narrows where it may run (its scope is at
    // most its class's pods, known from `preemptible`: Pass::ClassScope), and its expected
    // runtime (Pass::SetProtect).
    bool anywhere = false;
    Duration estimate{};
    // kBlocked: Pass::BlockedKindKey of the job's type, priority and class with protect false,
    // made once (Pass::Remember) rather than at every pass that finds the job blocked as before.
    uint64_t kind_key = 0;
  };

  QueuedRef(JobRecord* j, const pod::AcceleratorType& t, UserRecord* u, QuotaUsage* q,
            uint32_t number)
      : job(j), type(t), user(u), use(q), priority(j->spec.priority), user_number(number) {}

  JobRecord* job;
  // A copy: the job's own is scattered in memory, and a pass reads the type of jobs it does not
  // otherwise read (Pass::BlockedAsBefore).
  pod::AcceleratorType type;
  UserRecord* user;
  QuotaUsage* use;
  // job->spec.priority (a spec does not change while its job waits): fair share's order reads it
  // for every queued job every pass, and then needs nothing from the job's record.
  int priority;
  // The user's Accounting::UserNumber: fair share's order keeps per-user values in an array by it
  // (a hash table keyed by `user` was two 64-bit divisions per queued job, per pass).
  uint32_t user_number;
  Memo memo{};
  // The text the job's reason is, by its ReasonTexts number (cycle.h), when a pass told it one
  // that has a number; 0: not known. A pass that would tell the job the same text again then
  // need not read the job's own copy, a cache miss per job when the memos fail (after a job
  // ends, say: issue 29, "pass p99 after a release"). Any other change of the job's reason
  // forgets it (JobQueue::ForgetTold).
  uint32_t told = 0;
};

// One QUEUED job in the order of this pass.
struct QueueEntry {
  // Fair share: priority + aging bonus. In submission order (JobQueue): the job's own priority
  // (QueuedRef::priority), which fair share's order then reads without following `ref` (a cache
  // miss per queued job, every pass).
  int effective_priority = 0;
  uint32_t user_number = 0;  // QueuedRef::user_number, likewise (in what was padding)
  double usage = 0;          // fair share: the user's decayed usage in core-hours; FIFO: 0
  TimePoint submit{};
  JobId id;
  QueuedRef* ref = nullptr;  // the pass keeps its memo there
  // The job's QueueGroup (JobQueue::group), 0: none. Here so that a pass can skip a judged group's
  // jobs without reading their QueuedRefs.
  uint32_t group = 0;
};

// A queued job's place in submission order (JobQueue's order).
struct QueueKey {
  TimePoint submit{};
  JobId id;
  friend auto operator<=>(const QueueKey&, const QueueKey&) = default;
};
inline QueueKey QueueKeyOf(const QueueEntry& e) { return {e.submit, e.id}; }

// Queued jobs that a pass judges alike, whose memos (QueuedRef::Memo) can therefore be one: the
// regular jobs (no dependencies, array, zone or pod, one slice) of one type, priority, class and
// number of cores (JobQueue::Add groups them), whoever submitted them. Behind a backfill head,
// thousands of queued jobs that nothing can start are a few such groups, and a pass that finds a
// group blocked as before skips all its jobs without reading them (Pass::SkippedAsGroup): issue
// 29, "podsim, Philly". What differs between members is judged apart: Filter's quota by the
// member's user (QueueEntry::user_number), and the expected runtime (whether the job must keep off
// the backfill head's rectangle) only where it could change the answer.
struct QueueGroup {
  // Every member's memo and told are `memo` and `told` (its own are stale until Unstamp writes
  // these into it), but for the outliers'. Set by a pass that judged the members alike
  // (Pass::StampGroups).
  bool stamped = false;
  QueuedRef::Memo memo{};  // its `estimate` is one member's: each keeps its own
  uint32_t told = 0;
  std::vector<QueuedRef*> members;  // in no particular order
  // The smallest positive expected runtime of the members (a bound: kept while members leave);
  // max: none. Whether every member must keep off the backfill head's rectangle.
  Duration min_estimate = Duration::max();

  // Writes the group's memo and told into `member` (which keeps its own estimate).
  void GiveStampTo(QueuedRef& member) const;

  // Members judged on their own while the group is stamped, with memos of their own: a job that
  // joined since, one filtered by its user's quota, one holding a reservation, the backfill head.
  // Some: more end the stamp.
  static constexpr size_t kMaxOutliers = 32;
  bool IsOutlier(JobId id) const {
    if ((outlier_bits_ & Bit(id)) == 0) return false;  // most members, with one test
    for (const auto& [outlier, ref] : outliers_) {
      if (outlier == id) return true;
    }
    return false;
  }
  bool HasOutliers() const { return !outliers_.empty(); }
  // Bit of every outlier's id: a member whose Bit is not in it is none.
  uint64_t outlier_bits() const { return outlier_bits_; }
  static uint64_t Bit(JobId id) { return uint64_t{1} << (static_cast<uint64_t>(id.value()) % 64); }
  const std::vector<std::pair<JobId, QueuedRef*>>& outliers() const { return outliers_; }
  // Makes member `id` an outlier; false when there are too many already (the caller ends the
  // stamp).
  bool AddOutlier(QueuedRef& member, JobId id);
  // Takes the outliers `joins` says yes to (or all) back into the stamp.
  template <typename Joins>
  void TakeBackOutliers(Joins joins) {
    std::erase_if(outliers_,
                  [&](const auto& outlier) { return joins(outlier.first, *outlier.second); });
    outlier_bits_ = 0;
    for (const auto& [outlier, ref] : outliers_) outlier_bits_ |= Bit(outlier);
  }
  void ClearOutliers() {
    outliers_.clear();
    outlier_bits_ = 0;
  }

 private:
  std::vector<std::pair<JobId, QueuedRef*>> outliers_;
  uint64_t outlier_bits_ = 0;  // Bit of each outlier
};

class JobQueue {
 public:
  // Puts `id` in the queue (or replaces its references and memo, keeping its place when
  // `submit` is the same).
  void Add(JobId id, TimePoint submit, const QueuedRef& ref);
  // Takes `id` out of the queue; nothing when it is not in it.
  void Remove(JobId id);

  // The job's reason changed other than by the text QueuedRef::told names: forget that.
  void ForgetTold(JobId id) {
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return;
    SetApart(*it->second, id, /*keep_stamp=*/true);
    it->second->ref.told = 0;
  }

  // Group `id` (QueueEntry::group; not 0) and the number of group ids in use or free: every
  // QueueEntry::group is below it.
  QueueGroup& group(uint32_t id) { return groups_[id]; }
  size_t group_ids() const { return groups_.size(); }
  // Ends group `id`'s stamp, if it has one: every member but the outliers gets the group's memo
  // and told as its own, and all are judged on their own from then on.
  void Unstamp(uint32_t id);

  size_t size() const { return by_id_.size(); }
  bool contains(JobId id) const { return by_id_.contains(id); }

  // Every queued job in submission order (QueueEntry::effective_priority is the job's own
  // priority, usage 0).
  // Amortised O(queue): merges the jobs added since the last call and drops the removed ones.
  // Until the next call, Remove sets a leaving job's entry's ref to null (the vector does not
  // move: a pass may walk it while jobs leave the queue).
  const std::vector<QueueEntry>& InSubmitOrder();
  // The jobs added (or whose references and memo were replaced) since the last call, each at
  // least once: what a pass that skips jobs in bulk must visit (StrictTail, cycle.h).
  std::vector<QueueKey> TakeChanged();

 private:
  struct Node {
    QueuedRef ref;
    TimePoint submit;
    uint32_t group = 0;  // QueueEntry::group
    uint32_t slot = 0;   // its place in the group's members
  };
  // What makes jobs a QueueGroup: generation, rows, cols, priority, class, cores.
  using GroupKey = std::tuple<int, int, int, int, bool, int>;
  static std::optional<GroupKey> GroupKeyOf(const QueuedRef& ref);
  // Puts job `id`'s `node` in its group (none when GroupKeyOf says so), as an outlier of a stamped
  // group (or ending the stamp when it has enough).
  void Join(Node& node, JobId id);
  void Leave(Node& node, JobId id);  // takes job `id`'s node out of its group, freeing it if empty
  // Job `id`'s memo or told is about to change: it becomes an outlier of its stamped group (with
  // the group's memo as its own first, if `keep_stamp`), or the stamp ends when there are enough.
  void SetApart(Node& node, JobId id, bool keep_stamp);
  static bool Before(const QueueEntry& a, const QueueEntry& b) {
    return QueueKeyOf(a) < QueueKeyOf(b);
  }

  // The references live in pool_, whose elements never move; a removed job's node is reused by a
  // later one. Kept together rather than one allocation each among the job records, so that a
  // pass reading them in queue order stays in a few MB of memory (the memos make that most of a
  // pass over a long FIFO queue).
  std::map<JobId, Node*> by_id_;
  std::deque<Node> pool_;
  std::vector<Node*> free_;
  std::vector<QueueEntry> ordered_;  // sorted; a removed job's entry has ref == nullptr
  size_t removed_ = 0;               // such entries in ordered_
  std::vector<QueueEntry> added_;    // since the last InSubmitOrder, in any order
  std::vector<QueueKey> changed_;    // since the last TakeChanged
  // Groups by id (0 is never used); ids of empty groups are reused.
  std::vector<QueueGroup> groups_ = std::vector<QueueGroup>(1);
  std::map<GroupKey, uint32_t> group_ids_;
  std::vector<GroupKey> group_keys_ = std::vector<GroupKey>(1);  // by id
  std::vector<uint32_t> free_groups_;
  // Each group's members' nodes, in the order of QueueGroup::members (Node::slot indexes both).
  std::vector<std::vector<Node*>> group_nodes_ = std::vector<std::vector<Node*>>(1);
};

}  // namespace podsched::core
