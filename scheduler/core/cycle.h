// The scheduling pass as a list of named steps (the extension points of the Kubernetes
// scheduling framework, without its plugin registry: the Profile holds the step objects of the
// steps that differ between profiles, steps.h). Scheduler::Impl::RunPass (run_pass.cc) takes
// every QUEUED job in the order of the first step and runs the others:
//
//   QueueSort   Profile::queue_sort: submit time (FifoSort) or effective priority, then the
//               user's decayed usage, then submit time (FairShareSort).
//   Filter      Pass::Filter: unmet dependencies (settled before the pass, and only for jobs
//               whose targets changed: a lookup here); the array's throttle (O(1), the array
//               counts its tasks by state); retry backoff; quota, counting the cores already
//               promised to the user's other reservations; a shape that no rectangle of healthy
//               hosts can hold.
//               A filtered job never blocks others and holds no reservation.
//   Score       Pass::Score: Profile::score on this pass's views of the fleet's pods, one
//               decision across the pods that can hold the type (with the backfill head's
//               rectangle kept free for jobs that could delay it), or the job's own reservation
//               once its victims are gone.
//   PostFilter  Pass::Preempt: evict lower-class / lower-priority work that Profile::post_filter
//               chooses (least lost work, compared across the pods); the freed rectangle is
//               reserved while the victims checkpoint. No post_filter: no preemption.
//   Permit      Pass::Block: Profile::permit. StrictOrder: every job behind the first blocked one
//               waits; EasyBackfill: the first blocked job (the head) gets the rectangle where it
//               is expected to start, and later jobs may use it only if they end before then.
//   Bind        Binder::Bind (Scheduler::Impl::Bind): allocate, new epoch, Launch.
//
// Within a pass availability only shrinks (placements and reservations take hosts, nothing is
// freed), so a shape that did not fit once does not fit later in the same pass: the pass
// remembers failed shapes and failed victim searches (per generation: a v2 and a v3 type of one
// shape go to different pods), which keeps a pass over 10,000 queued jobs close to linear.
//
// The pass reads the owners it needs and nothing else (issue 27): HostLeases (the fleet, leases,
// reservations: it reserves and drops reservations itself), the profile's steps, the jobs through the narrow PassJobs, and it changes anything else only through a
// Binder (bind, start a preemption, set a reason, wake later). Scheduler::Impl provides both
// (run_pass.cc); the steps' own tests fake them (pass_test.cc).
//
// Pure; single-threaded (the scheduler's owner runs it).
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/token_bucket.h"
#include "pod/placement.h"
#include "scheduler/core/accounting.h"
#include "scheduler/core/host_leases.h"
#include "scheduler/core/job.h"
#include "scheduler/core/profile.h"
#include "scheduler/core/steps.h"
#include "scheduler/core/victims.h"

namespace podsched::core {

// What the pass reads of jobs other than the one it considers.
class PassJobs {
 public:
  virtual ~PassJobs() = default;
  virtual const JobRecord* Find(JobId job) const = 0;  // nullptr: forgotten (retention)
  virtual int Cores(JobId job) const = 0;              // of a job Find returns
  // The job whose current epoch holds `lease`, or nullptr for a lingering lease.
  virtual const JobRecord* LiveOwner(const Lease& lease) const = 0;
  // Why `job` may not start because of other jobs (unmet dependencies, its array's throttle).
  virtual std::optional<std::string> HeldBack(const JobRecord& job) const = 0;
};

// Reason texts a pass gives to many jobs at once (why no victims free a rectangle; strict order's
// "behind"), each with a number that names that text for the scheduler's life: a job's memo
// (QueuedRef::Memo::behind_text) and QueuedRef::told name texts by number. Numbers are never
// reused, so a number the table has forgotten matches no text again. Each text is kept once
// (SharedText), so every job told it, in any pass and for any kind of job, shares it.
class ReasonTexts {
 public:
  struct Numbered {
    uint32_t number = 0;  // never 0 in the table
    SharedText text;
  };
  const Numbered& Intern(std::string text) {
    // Bounded: texts name counts and pods, so over a long run they are many, but few at a time.
    if (texts_.size() >= kMaxTexts) texts_.clear();
    auto [it, fresh] = texts_.try_emplace(text);
    if (fresh) it->second = Numbered{next_++, SharedText(std::move(text))};
    return it->second;
  }

 private:
  static constexpr size_t kMaxTexts = 4096;
  std::unordered_map<std::string, Numbered> texts_;
  uint32_t next_ = 1;
};

// The backfill heads passes have had, each with a number that names it for the scheduler's life,
// so that a job's memo (QueuedRef::Memo::kBlocked) can name the head it was blocked behind. A
// head is what a job behind it sees of it: the pod, the rectangle kept free (none: its start is
// unknown) and when it is expected to start. A head seen again gets its old number, so the memos of
// the jobs blocked behind it hold again: a pass that starts a job before the head sees another
// head (the new job's hosts are draining in its view), and the next pass the first one again.
// Numbers are never reused, so a memo naming a forgotten head matches none.
class PassHeads {
 public:
  using Head = std::tuple<int, std::optional<pod::Placement>, TimePoint>;
  uint64_t IdOf(const Head& head) {
    for (const auto& [known, id] : known_) {
      if (known == head) return id;
    }
    if (known_.size() >= kMaxHeads) known_.clear();  // few at a time; old ones expire
    known_.emplace_back(head, ++next_);
    return next_;
  }

 private:
  static constexpr size_t kMaxHeads = 16;
  std::vector<std::pair<Head, uint64_t>> known_;
  uint64_t next_ = 0;
};

// Strict order's tail, kept by the scheduler between passes: the jobs behind the last pass's first
// blocked job (its head), so that the next pass visits only those whose reason may have changed.
//
// Behind the head every job is told either Filter's quota reason or strict order's text, and a job
// whose memo is one of those two (a regular job: kFiltered, kBehind) keeps it while its user's
// counts of its class (cores used, quota, cores promised to reservations) and the text do not
// change. So a pass whose head is the last one's or a later job, with the same text, visits only
//   - the jobs added or requeued since (JobQueue::TakeChanged),
//   - the irregular jobs: dependencies, arrays, backoff, reservations, or blocked or aside before,
//   - the jobs of a user and class whose counts changed: those given Filter's reason (its text
//     has the counts), and those told they are behind if the user's headroom got smaller than
//     the largest of them asks,
// in queue order, and skips the others without reading them. A job read there that changes its
// user's counts (one holding a reservation starts, say) has that user's other jobs read too.
// Issue 29, "FIFO behind a large head": thousands of such jobs, every pass.
struct StrictTail {
  // The regular jobs behind the head of one user and class, and that user's counts of the class
  // when the last pass ended, which every one of their memos holds under.
  struct Group {
    const UserRecord* user = nullptr;
    const QuotaUsage* use = nullptr;
    bool preemptible = false;
    std::array<int, 3> counts{};     // used, limit, promised (QueuedRef::Memo's)
    // Its jobs told Filter's reason (kFiltered) and told they are behind (kBehind); either may
    // name jobs that left the queue since.
    std::vector<QueueKey> filtered, behind;
    // The most cores a job noted in `behind` asks for (an upper bound: kept while jobs leave).
    // Filter lets a job through more easily the fewer cores it asks, so while it lets this many
    // through, every job told it is behind is still behind, however the headroom shrank.
    int max_behind_cores = 0;
    // The counts changed during the last pass, after some members were read: all are read again.
    bool revisit = false;
  };
  bool valid = false;  // whether the lists below describe the last pass's tail
  QueueKey head;
  uint32_t text = 0;   // Pass::behind_text_ then
  TimePoint at{};      // the last pass's now
  std::map<std::pair<const UserRecord*, bool>, Group> groups;
  std::vector<QueueKey> irregular;
};

// What the pass changes outside its views and HostLeases' reservations.
class Binder {
 public:
  virtual ~Binder() = default;
  // Places `job` at `slices` (one, or JobSpec::slices: allocate, new epoch, PLACED, Launch).
  virtual void Bind(JobRecord& job, const std::vector<pod::FleetPlacement>& slices) = 0;
  // Sends the victim a Preempt, for `for_job` (which holds a reservation of the freed hosts).
  virtual void StartPreemption(JobId victim, std::string reason, JobId for_job) = 0;
  // Sets the job's reason; a queued job's QueuedRef::told is forgotten.
  virtual void SetReason(JobRecord& job, SharedText reason) = 0;
  void SetReason(JobRecord& job, std::string reason) {
    SetReason(job, SharedText(std::move(reason)));
  }
  // Sets the queued job's reason to a text with a number (ReasonTexts), which `ref.told` then
  // names: as SetReason, without finding the job's QueuedRef again (a pass after a job's end
  // tells thousands of jobs a new text).
  virtual void Tell(QueuedRef& ref, SharedText reason, uint32_t number) = 0;
  virtual void WakeAt(TimePoint at) = 0;  // run a pass then (a minimum runtime ends)
  virtual void PassAgain() = 0;           // something changed that another pass may use
};

// The state of one pass: the views of the fleet's pods, the backfill head, what failed already.
class Pass {
 public:
  struct Inputs {
    const Profile& profile;  // its steps: Score, PostFilter, Permit (QueueSort runs before)
    Duration min_runtime_before_preemption;
    HostLeases& hosts;
    const PassJobs& jobs;
    Binder& binder;
    // Where the views of the pods are built; kept from one pass to the next, their memory is
    // reused (a copy of every pod per pass was a malloc per pod and per allocation). Null: the
    // pass's own.
    std::vector<pod::Pod>* views = nullptr;
    // Where the views without the backfill head's rectangle are built, kept likewise (a fleet of
    // a hundred single devices: their copies were a tenth of a pass). Null: the pass's own.
    std::vector<pod::Pod>* head_views = nullptr;
    // The heads passes have had, kept by the scheduler (QueuedRef::Memo::kBlocked names one).
    // Null: no job is skipped for being blocked.
    PassHeads* heads = nullptr;
    // Numbers for the texts of failed victim searches and strict order's "behind", kept by the
    // scheduler: a job told the same text again is not read (QueuedRef::told), and a memo names
    // the "behind" text (QueuedRef::Memo::behind_text). Null: every job is compared, and none
    // is skipped for being behind.
    ReasonTexts* reason_texts = nullptr;
    // SchedulerConfig::check_pass_memos.
    bool check_memos = false;
    // Defragmentation's budget (SchedulerConfig::defrag_budget_core_seconds_per_hour), in
    // core-seconds of lost work; null: off.
    TokenBucket<TimePoint>* defrag = nullptr;
    // The queue's groups of jobs judged alike (QueueGroup), kept by the scheduler: a pass skips a
    // stamped group's jobs at once while its memo holds. Null: every job is judged on its own.
    JobQueue* groups = nullptr;
  };
  Pass(Inputs in, TimePoint now);
  Pass(const Pass&) = delete;  // view_ may refer to own_views_
  Pass& operator=(const Pass&) = delete;

  // Considers every job of `queue`, in order (Scheduler::Impl::RunPass). With `tail` (only for a
  // queue in submission order, QueueSort::InSubmitOrder), strict order's jobs behind the head are
  // visited only when their reason may change (StrictTail), and `tail` is kept up to date;
  // `changed` names the jobs added or requeued since the last pass (JobQueue::TakeChanged).
  void ConsiderQueue(const std::vector<QueueEntry>& queue, StrictTail* tail,
                     const std::vector<QueueKey>& changed);
  // Runs Filter .. Bind for one job, in queue order.
  void Consider(const QueueEntry& entry);
  // Jobs Consider skipped by their memo so far.
  int64_t skipped() const { return skipped_; }
  // Of those, jobs behind strict order's head skipped without being read (StrictTail).
  int64_t skipped_unread() const { return skipped_unread_; }
  // Jobs told the reason they had without reading it (QueuedRef::told).
  int64_t told_known() const { return told_known_; }
  // Jobs this pass moved to defragment (SchedulerStats::defrag_moves) and what they lost.
  int64_t defrag_moves() const { return defrag_moves_; }
  double defrag_lost_core_seconds() const { return defrag_lost_core_seconds_; }

  // The steps, in the order Consider runs them (public for their own tests).
  // Why the job cannot be considered in this pass (backoff, quota, shape), nullopt if it can.
  std::optional<std::string> Filter(const QueueEntry& entry);
  // Where the job would start now, without delaying the backfill head.
  std::optional<pod::FleetPlacement> Score(const QueueEntry& entry);
  // `candidates` with the pods of the zone of `job`'s checkpoint store first (in their order),
  // when it has a checkpoint to read there (JobRecord::checkpoint_zone): the policy's ties then
  // go to a placement that reads it without crossing zones. Valid until the next call.
  const std::vector<int>& HomeFirst(const JobRecord& job, const std::vector<int>& candidates);
  // True when the job holds a reservation whose victims have not released it yet (its reason
  // says which); drops a reservation that a failed host spoilt.
  bool AwaitReservation(JobRecord& job);
  // Starts the preemption of victims for the queued job; true when it did (the job then waits).
  // Otherwise sets the job's reason to why it cannot start, and `lasting` (if given) to whether
  // that stays true while the hosts, leases, reservations and backfill head do not change (false
  // when victims only wait for their minimum runtime).
  bool Preempt(QueuedRef& ref, const pod::AcceleratorType& type, bool* lasting = nullptr);
  // Permit: the job could not start; strict order or EASY head. Behind a blocked multislice job
  // nothing starts (EASY's one kept rectangle would not hold it).
  void Block(const pod::AcceleratorType& type, bool multislice = false);

 private:
  void Take(const pod::FleetPlacement& p);  // excludes `p` from every view of this pass
  // Binds `job` to `slices` (Binder::Bind) and takes each from this pass's views.
  void BindAndTake(JobRecord& job, const std::vector<pod::FleetPlacement>& slices);
  // Whether the job of `job` must keep off the backfill head's rectangle (protect_).
  void SetProtect(const JobRecord& job);
  // Whether a job expected to run `estimate` (0: unknown) must keep off it.
  bool Protects(Duration estimate) const;
  // failed_preemption_'s key for a job of `type`, class and priority in the current scope.
  using VictimKey = std::tuple<int, int, int, int, bool, int, bool>;
  VictimKey VictimKeyOf(const pod::AcceleratorType& type, bool preemptible, int priority) const;
  // A multislice job (JobSpec::slices > 1): placed whole, or told why not and blocking.
  void ConsiderSlices(const QueueEntry& entry);
  // Preempt for a multislice job: victims that free every slice in one zone, reserved together
  // (free rectangles among them); true when it started preemptions.
  bool PreemptForSlices(JobRecord& job, const pod::AcceleratorType& type);
  // Its slices, all in one zone (the profile's choice, one after the other), or nullopt.
  std::optional<std::vector<pod::FleetPlacement>> ChooseSlices(const QueueEntry& entry);
  // Considers queue[from, to) in order, reading ahead, and calls after(i) after each job; with
  // `until_head`, stops after the job that makes strict order's head. Returns where it stopped.
  template <typename After>
  size_t ConsiderInOrder(const std::vector<QueueEntry>& queue, size_t from, size_t to,
                         bool until_head, After after);
  // The jobs behind strict order's head queue[head] (ConsiderQueue with a tail).
  void ConsiderBehindHead(const std::vector<QueueEntry>& queue, size_t head, StrictTail& tail,
                          const std::vector<QueueKey>& changed);
  // Notes queue entry `e`, just considered behind the head, in `tail`'s lists.
  static void NoteBehind(const QueueEntry& e, StrictTail& tail);
  // `group`'s user's counts now.
  std::array<int, 3> CountsOf(const StrictTail::Group& group);
  // A user's counts of a class as Filter reads them: cores used, quota, cores reserved for the
  // user's jobs (QueuedRef::Memo's used, limit, promised).
  std::array<int, 3> Counts(const UserRecord& user, const QuotaUsage& use, bool preemptible);
  // Those counts for the user and class of `entry`'s memo, or null when the job holds a
  // reservation (its memo then says nothing). Valid until the next call. (A pointer, not an
  // optional array by value: returning that went through the stack in a way that stalled the
  // loads after it: 4% of a Philly replay in perf.)
  const std::array<int, 3>* MemoCounts(const QueueEntry& entry);
  // The counts of `entry`'s user and that class, made once per user, class and hosts' version
  // (reading the job's QueuedRef only then). The job's reservation is not looked at.
  const std::array<int, 3>& UserCountsOf(const QueueEntry& entry, bool preemptible);
  // MemoCounts' answer for one user and class, with the hosts' version it was made at: the counts
  // change only with that version (a bind holds cores; a reservation promises them). Kept per user
  // number, since a fair-share queue interleaves users' jobs (one last answer was made again for a
  // fifth of Philly's queued jobs).
  struct UserCounts {
    uint64_t version_plus_one = 0;  // 0: not made in this pass
    std::array<int, 3> counts{};
    int headroom = 0;  // the most cores Filter lets through: LetsThrough(cores) iff cores <= it
  };
  // After the job at `after` changed leases or reservations: the groups whose counts changed are
  // read again in the next pass, and their members after `after` in this one (added to `visit`).
  void Recount(StrictTail& tail, const QueueKey& after, std::vector<QueueKey>* visit);
  // Inputs::check_memos: the jobs of queue[from, to), skipped unread, would keep their reasons.
  void CheckUnread(const std::vector<QueueEntry>& queue, size_t from, size_t to);
  // Why no victims free a rectangle for a job (one per memo key of failed_preemption_).
  struct NoVictims {
    SharedText why;       // one text for every job of the kind told it
    bool lasting = true;  // Preempt's `lasting`
    uint32_t text = 0;    // why's ReasonTexts number (0: Inputs::reason_texts is null)
  };
  // `text` as kept by Inputs::reason_texts (shared by every job told it) with its number; without
  // them, a text of its own and 0.
  ReasonTexts::Numbered Interned(std::string text);
  // Sets the queued job's reason to `none.why`; without reading the job's copy when the job was
  // told that very text before (QueuedRef::told).
  void TellNoVictims(QueuedRef& ref, const NoVictims& none);
  // What Preempt would do, without doing it: the victims' pod and choice, or why there are none
  // and when a victim passes its minimum runtime (max: none waits for it).
  struct VictimSearch {
    std::optional<std::pair<int, VictimChoice>> found;
    // The victims are moved to defragment (some are inside their minimum runtime): their lost
    // work comes out of Inputs::defrag.
    bool defrag = false;
    const NoVictims* none = nullptr;  // when !found
    TimePoint wake = TimePoint::max();
  };
  VictimSearch SearchVictims(const JobRecord& job, const pod::AcceleratorType& type);
  // The running work a job of `spec`'s class and priority may evict, per pod: past its minimum
  // runtime (eligible), and all of it (later), with the earliest time one more becomes eligible.
  // The same for every shape: built once per (class, priority) while the leases and reservations
  // do not change.
  struct VictimSets {
    std::map<int, VictimCandidates> eligible, later;
    TimePoint earliest = TimePoint::max();
  };
  const VictimSets& VictimsFor(const JobSpec& spec);
  // The reason of a job no block of healthy hosts can hold (FitsHealthyPod false).
  std::string AsideReason(const pod::AcceleratorType& type);
  bool FitsHealthyPod(const pod::AcceleratorType& type);
  // Pod `index` with every allocation gone (health and draining kept), built on first need.
  const pod::Pod& HealthyView(int index);
  // Candidates(type) grouped by zone (a multislice job's slices share one), zones in fleet order.
  std::vector<std::vector<int>> CandidatesByZone(const pod::AcceleratorType& type);
  // Whether `slices` slices of `type` fit the healthy hosts of one zone (FitsHealthyPod's
  // multislice question; greedy, pod after pod).
  bool SlicesFitHealthy(const pod::AcceleratorType& type, int slices);
  // The pods that can hold `type` (its generation, a grid large enough) within the current job's
  // scope (scope_: its zone or pod, if any), in fleet order.
  const std::vector<int>& Candidates(const pod::AcceleratorType& type);
  // The scope of `spec` (its zone and pod, and its class when some pod takes one class only) as a
  // small number: 0 unscoped, then one per distinct (zone, pod, class) this pass met. Part of
  // every memo key: jobs of one shape but other scopes see other pods.
  int ScopeOf(const JobSpec& spec);
  // 0 on a fleet without class pods; 1 on-demand, 2 preemptible (JobClass), otherwise.
  int JobClass(bool preemptible) const;
  // The scope of a job of that class that names no zone or pod (ScopeOf), without its spec.
  int ClassScope(bool preemptible);
  // The number of the scope (zone, pod, class), given on first sight.
  int ScopeNumber(const std::string& zone, const std::string& pod, int job_class);
  // "the pod" (a fleet of one), "pod a" or "pods a, b and 3 more": for reasons.
  std::string PodsText(const std::vector<int>& pods) const;
  // When each lease is expected to free its hosts (the Permit's input).
  std::vector<ExpectedRelease> ExpectedReleases();
  // The cores reserved for `user`'s jobs of one class other than `except`.
  int ReservedCores(const UserRecord& user, bool preemptible, JobId except);
  // Empties reserved_ and reserved_by_record_ and sums reserved_ again when the reservations
  // changed since.
  void SyncReservedCores();
  // Whether the memo of `entry`'s job still holds: it would get the reason it has, so it is
  // skipped.
  bool MemoHolds(const QueueEntry& entry);
  // Whether `entry`'s job, blocked in an earlier pass (a kBlocked memo that no longer holds: the
  // leases or the head changed since), is blocked again with no victims: this pass has already
  // found no room and no victims for its shape, class and priority. Tells it that answer's text
  // when it was told another (the victims' count changed, or their minimum runtime), and
  // refreshes the memo, exact under Consider's rule (QueuedRef::Memo::exact).
  bool BlockedAsBefore(const QueueEntry& entry);
  // Notes in `ref` what this pass decided for it (a reason only) and on what; `exact`: whether
  // that holds while what it was decided on does not change (QueuedRef::Memo::exact).
  void Remember(QueuedRef& ref, QueuedRef::Memo::Kind kind, bool exact = true);
  // Inputs::check_memos: `entry`'s job, skipped, would get the reason it has.
  void CheckSkipped(const QueueEntry& entry);
  // Whether `entry`'s job is skipped with the rest of its stamped group (QueueGroup): the first of
  // the group this pass meets is judged by the group's memo as MemoHolds and BlockedAsBefore judge
  // one job's (only when that tells it nothing new), and while the hosts and the head stay as they
  // were then, the group's other jobs are skipped without reading them. Otherwise the group's stamp
  // ends (JobQueue::Unstamp) and its jobs are judged one by one.
  bool SkippedAsGroup(const QueueEntry& entry);
  // SkippedAsGroup's common case, reading only the entry and this pass's own arrays: the job's
  // group was decided skipped at the hosts' version and head of now, the job is not an outlier,
  // and its user's counts, made at this version, let it through.
  bool SkipsUnread(const QueueEntry& e) {
    if (e.group == 0 || e.group >= group_decisions_.size()) return false;
    const GroupDecision& d = group_decisions_[e.group];
    using Way = GroupDecision::Way;
    if ((d.way != Way::kByMemo && d.way != Way::kByAnswer) || d.version != in_.hosts.version() ||
        d.head != head_id_ || (d.outlier_bits & QueueGroup::Bit(e.id)) != 0) {
      return false;
    }
    const size_t slot = size_t{e.user_number} * 2 + (d.preemptible ? 1 : 0);
    if (slot >= user_counts_.size() ||
        user_counts_[slot].version_plus_one != in_.hosts.version() + 1 ||
        d.cores > user_counts_[slot].headroom) {
      return false;
    }
    ++skipped_;
    told_known_ += d.way == Way::kByAnswer ? 1 : 0;  // as BlockedAsBefore counts each
    return true;
  }
  // After the pass: stamps the groups it judged job by job whose jobs all ended with the same
  // blocked memo and text (JobQueue's groups; SkippedAsGroup reads them in the next pass).
  void StampGroups();
  // The answer BlockedAsBefore gives `entry`'s job, or null when it judges the job in full; with
  // `protect_as`, as if the job's expected runtime made Protects that.
  struct BlockedAnswer;
  const BlockedAnswer* BlockedAnswerOf(const QueueEntry& entry, std::optional<bool> protect_as);
  // Consider's Score (on the view `protect` gives), FitsHealthyPod and victim search for `entry`'s
  // job, for their answers only: true when it would be blocked without victims (the answers are
  // then in this pass's caches, BlockedAnswerOf).
  bool ProbeBlocked(const QueueEntry& entry, bool protect);
  // Keeps in `m` that its job was found blocked as before with `answer` (BlockedAsBefore).
  void RefreshBlocked(QueuedRef::Memo& m, const BlockedAnswer& answer);

  struct FailedShape {
    int generation, rows, cols, scope;
    bool protected_view;
    auto operator<=>(const FailedShape&) const = default;
  };
  struct RunningRef {
    AllocationId alloc;
    int pod;
    const JobRecord* job;
    int cores;
  };
  // A lease and its live owner (null: the lease lingers, its job moved on).
  struct LeaseRef {
    AllocationId alloc;
    int pod;
    const JobRecord* owner;
  };
  // Every lease, in allocation order, as of the hosts' version now: ExpectedReleases and
  // VictimsFor's running list both read it, so the pass looks each lease's job up once per
  // version (once per pass, mostly) instead of once for each (a job-table lookup per lease was
  // a twentieth of a Philly replay).
  const std::vector<LeaseRef>& Leases();
  using TypeKey = std::tuple<int, int, int, int>;  // generation, rows, cols, scope
  TypeKey KeyOf(const pod::AcceleratorType& type) const;

  Inputs in_;
  const TimePoint now_;
  std::vector<pod::Pod> own_views_;     // view_ when Inputs::views is null
  std::vector<pod::Pod>& view_;         // the pods without reserved hosts and this pass's binds
  // Also without the backfill head's rectangle (null: no head yet); in Inputs::head_views or
  // own_head_views_.
  std::vector<pod::Pod>* head_view_ = nullptr;
  std::vector<pod::Pod> own_head_views_;
  TimePoint head_start_ = TimePoint::max();
  bool protect_ = false;                // the current job scores on head_view_
  int scope_ = 0;                       // the current job's ScopeOf (set by Consider)
  // (zone, pod, class: 0 any, 1 on-demand, 2 preemptible) -> ScopeOf, and back.
  std::map<std::tuple<std::string, std::string, int>, int> scopes_;
  std::vector<std::tuple<std::string, std::string, int>> scope_names_ = {{"", "", 0}};
  std::array<int, 3> class_scopes_{};   // ClassScope's, by JobClass; 0: not numbered yet
  std::optional<SharedText> behind_;    // strict order: the reason of every job behind
  uint32_t behind_text_ = 0;            // behind_'s ReasonTexts number; 0: none
  // The shapes that found no room in this pass: a few (shapes x scopes x two views), looked up
  // for every job the pass judges, so a scan of a vector rather than a tree.
  std::vector<FailedShape> failed_;
  std::vector<int> home_first_;  // HomeFirst's answer (reused)
  bool Failed(const FailedShape& shape) const {
    return std::find(failed_.begin(), failed_.end(), shape) != failed_.end();
  }
  // Multislice: the fewest slices of a shape that found no room (ChooseSlices), and no victims
  // (PreemptForSlices, keyed like failed_preemption_), in this pass.
  std::map<FailedShape, int> failed_slices_;
  std::map<std::tuple<int, int, int, int, bool, int, bool>, int> failed_slice_preemption_;
  // By generation, rows, cols, scope, class, priority and whether behind the backfill head.
  std::map<VictimKey, NoVictims> failed_preemption_;
  // BlockedAsBefore's answers by kind of job (no zone or pod, behind the head): what a job of that
  // type, priority and class, on the view its expected runtime gives it, is told, once Score,
  // FitsHealthyPod and the victim search have answered for the kind. Those answers are kept for
  // the rest of the pass, and so is this one (a lookup instead of three, for every blocked job).
  // A kind as one word: generation, rows, cols, priority, class and view, each in its own bits
  // (BlockedKindKey), so that finding the answer is a scan comparing one word per kind.
  static uint64_t BlockedKindKey(const pod::AcceleratorType& type, int priority, bool preemptible,
                                 bool protect);
  struct BlockedAnswer {
    // none->text and none->lasting, copied: most jobs were told that text already, and checking
    // them then reads nothing further.
    uint32_t text;
    bool lasting;
    const NoVictims* none;  // in failed_preemption_ (map nodes stay put): to tell a job anew
  };
  // A few kinds per pass (types x priorities x classes x views), looked up for every blocked job
  // the pass reads: a vector scanned rather than a hash table (whose hashing and division by a
  // prime were a twelfth of a Philly replay).
  std::vector<std::pair<uint64_t, BlockedAnswer>> blocked_answers_;
  // SkippedAsGroup's decision for each group, in this pass.
  struct GroupDecision {
    enum class Way : uint8_t { kUnseen, kByMemo, kByAnswer, kOneByOne } way = Way::kUnseen;
    uint64_t version = 0;        // HostLeases::version() then
    uint64_t head = 0;           // head_id_ then
    bool outliers_seen = false;  // the group is in with_outliers_
    // The group's class and cores (its memo's) and QueueGroup::outlier_bits, for SkipsUnread.
    bool preemptible = false;
    int cores = 0;
    uint64_t outlier_bits = 0;
  };
  std::vector<GroupDecision> group_decisions_;  // by group id (QueueEntry::group)
  std::vector<uint32_t> one_by_one_;            // the groups judged job by job (StampGroups)
  std::vector<uint32_t> with_outliers_;         // stamped groups whose outliers were judged
  int64_t skipped_ = 0;
  int64_t skipped_unread_ = 0;
  int64_t told_known_ = 0;
  int64_t defrag_moves_ = 0;
  double defrag_lost_core_seconds_ = 0;
  uint64_t head_id_ = 0;                // PassHeads::IdOf this pass's head; 0: none yet
  std::vector<RunningRef> running_;     // evictable work, built on first need
  bool running_built_ = false;
  std::vector<UserCounts> user_counts_;  // MemoCounts, by user number * 2 + preemptible
  std::vector<LeaseRef> leases_;                            // Leases()
  std::optional<uint64_t> leases_version_;                  // the hosts' version leases_ describe
  std::map<std::pair<bool, int>, VictimSets> victim_sets_;  // VictimsFor
  uint64_t victim_sets_version_ = 0;
  const uint64_t start_version_;        // HostLeases::version() when the pass began
  // Each pod with every allocation gone (health and draining kept), on first need (the vector
  // too: most passes need none).
  std::vector<std::optional<pod::Pod>> healthy_view_;
  std::map<TypeKey, bool> fits_healthy_;
  std::map<std::pair<TypeKey, int>, bool> slices_fit_healthy_;
  std::map<TypeKey, std::vector<int>> candidates_;
  // Cores reserved per (user, class), summed once per HostLeases::reservations_version() (a
  // pass over 10,000 queued jobs summed every reservation for each), and the same by user
  // record for ReservedCores (a lookup without string compares), filled as users come.
  std::map<std::pair<UserName, bool>, int> reserved_;
  std::unordered_map<const UserRecord*, std::array<int, 2>> reserved_by_record_;
  std::optional<uint64_t> reserved_version_;  // of both
};

}  // namespace podsched::core
