// Accounting: the users, what each may use and what each has used (issue 27, the second of the
// core's owners).
//
// Holds
//   - every user seen or configured (UserRecord: quota, admin, decayed usage), the store's rows;
//   - the cores each user holds now, per class (what quotas limit), and their sum;
//   - the job epochs holding cores now, with their start: fair share counts them while they run;
//   - each user's budget of jobs to create per hour (a token bucket; absent: a full one).
//
// Promises
//   - One rule for fair-share usage (UsageNow): the user's closed usage decayed to `now`
//     (half-life scheduler.fair_share_half_life) plus the core-hours of the epochs holding cores
//     now. The queue order and Scheduler::FairShareUsage both read it.
//   - StartHolding and StopHolding pair up per job: cores in use never go below zero, and the
//     core-hours StopHolding returns are the ones it adds to the user's decayed usage.
//   - Every user record changed since the last TakeChanged is returned by it once, in name order
//     (the rows of the next commit).
//
// Who calls it: Scheduler::Impl (Transition starts and stops holding, Create loads, Submit and
// SubmitArray charge creations, SetQuota) and the pass (UsageNow in the queue order; quotas).
//
// Pure (no I/O); single-threaded, like the Scheduler that owns it.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "common/ids.h"
#include "common/token_bucket.h"
#include "scheduler/core/job.h"

namespace podsched::core {

class Accounting {
 public:
  struct Rules {
    Quota default_quota;
    Duration fair_share_half_life;   // > 0
    int max_jobs_created_per_hour;   // >= 1
  };
  explicit Accounting(Rules rules) : rules_(rules) {}

  // --- users ---
  // The stored users (Scheduler::Create); not reported as changed.
  void Load(std::vector<UserRecord> users);
  // The user, added with the default quota (and reported as changed) when new.
  UserRecord& User(const UserName& name, TimePoint now);
  Quota QuotaOf(const UserName& name) const;  // the default quota for an unknown user
  void SetQuota(const UserName& name, Quota quota, TimePoint now);
  const std::map<UserName, UserRecord>& users() const { return users_; }
  // A small number for the user, given on first sight and kept (0, 1, 2, ...): what a pass keys
  // its per-user arrays by. Every number is below UserNumbers().
  uint32_t UserNumber(const UserName& name);
  uint32_t UserNumbers() const { return static_cast<uint32_t>(numbers_.size()); }
  std::vector<UserRecord> TakeChanged();
  // Adds `usd` to the user's egress (UserRecord::egress_usd).
  void ChargeEgress(const UserName& name, double usd, TimePoint now);

  // --- cores held ---
  // `job`'s current epoch holds `cores` of its class from `start` on.
  void StartHolding(JobId job, const UserName& user, bool preemptible, int cores,
                    TimePoint start);
  // It stopped at `now`: returns the epoch's core-hours, which are now part of the user's
  // decayed usage. Nothing (0) when the job held nothing.
  double StopHolding(JobId job, TimePoint now);
  // The user's cores in use; the entry stays where it is (the queue keeps pointers to it).
  QuotaUsage& InUse(const UserName& user) { return in_use_[user]; }
  QuotaUsage InUseOf(const UserName& user) const;
  const QuotaUsage& CoresHeld() const { return cores_held_; }

  // --- fair share ---
  double UsageNow(const UserName& user, TimePoint now) const;
  // The same for the user numbered `number` (UserNumber), without a lookup by name: the queue
  // order asks it once per user with queued jobs in every pass (two string-keyed lookups and one
  // more per running epoch were a twentieth of a Philly replay).
  double UsageNow(uint32_t number, TimePoint now) const;

  // --- creation budget ---
  // Seconds until `jobs` more may be created (0: now; infinite past the hourly limit), and how
  // many may be created now.
  double SecondsUntilCreation(const UserName& user, int jobs, TimePoint now) const;
  double CreationsAvailable(const UserName& user, TimePoint now) const;
  // Takes `jobs` from the budget; the caller checked SecondsUntilCreation is 0.
  void ChargeCreation(const UserName& user, int jobs, TimePoint now);

 private:
  struct Holding {
    UserName user;
    bool preemptible = false;
    int cores = 0;
    TimePoint start{};
  };
  // An epoch holding cores, in its user's list (kept sorted by job: UsageNow sums in that order,
  // so that its result does not depend on the order the epochs started in).
  struct HeldCores {
    JobId job;
    int cores = 0;
    TimePoint start{};
  };
  // What UsageNow reads of a numbered user. The pointers are into users_ and holding_of_user_,
  // whose entries are never erased (a std::map's nodes stay where they are); `record` is null
  // until the user has a record.
  struct NumberedUser {
    const UserRecord* record = nullptr;
    const std::vector<HeldCores>* held = nullptr;
  };
  // A user's budget before any creation (absent users have this one).
  TokenBucket<TimePoint> FullBudget() const;
  // The user's closed usage decayed to `now`.
  double DecayedUsage(const UserRecord& user, TimePoint now) const;
  // UsageNow's one rule, from what the user has (either may be null: nothing of it).
  double UsageOf(const UserRecord* record, const std::vector<HeldCores>* held, TimePoint now) const;
  // The user's record was made: its numbered entry points at it.
  void Recorded(const UserName& name, const UserRecord& record);

  Rules rules_;
  std::map<UserName, UserRecord> users_;
  std::map<UserName, uint32_t> numbers_;  // UserNumber's
  std::set<UserName> changed_;
  std::map<UserName, QuotaUsage> in_use_;
  QuotaUsage cores_held_;
  std::map<JobId, Holding> holding_;
  std::map<UserName, std::vector<HeldCores>> holding_of_user_;  // entries never erased
  std::vector<NumberedUser> numbered_;                          // by UserNumber
  std::map<UserName, TokenBucket<TimePoint>> creation_budget_;
};

}  // namespace podsched::core
