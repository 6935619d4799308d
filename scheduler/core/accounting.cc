#include "scheduler/core/accounting.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/check.h"

namespace podsched::core {

void Accounting::Load(std::vector<UserRecord> users) {
  for (UserRecord& user : users) {
    const UserName name = user.name;
    UserRecord& record = users_[name];
    record = std::move(user);
    Recorded(name, record);
  }
}

UserRecord& Accounting::User(const UserName& name, TimePoint now) {
  auto [it, inserted] = users_.try_emplace(name);
  if (inserted) {
    it->second.name = name;
    it->second.quota = rules_.default_quota;
    it->second.usage_as_of = now;
    changed_.insert(name);
    Recorded(name, it->second);
  }
  return it->second;
}

void Accounting::Recorded(const UserName& name, const UserRecord& record) {
  if (auto n = numbers_.find(name); n != numbers_.end()) numbered_[n->second].record = &record;
}

uint32_t Accounting::UserNumber(const UserName& name) {
  auto [it, inserted] = numbers_.try_emplace(name, static_cast<uint32_t>(numbers_.size()));
  if (inserted) {
    const auto record = users_.find(name);
    numbered_.push_back(
        NumberedUser{record == users_.end() ? nullptr : &record->second, &holding_of_user_[name]});
  }
  return it->second;
}

void Accounting::ChargeEgress(const UserName& name, double usd, TimePoint now) {
  User(name, now).egress_usd += usd;
  changed_.insert(name);
}

Quota Accounting::QuotaOf(const UserName& name) const {
  auto it = users_.find(name);
  return it == users_.end() ? rules_.default_quota : it->second.quota;
}

void Accounting::SetQuota(const UserName& name, Quota quota, TimePoint now) {
  User(name, now).quota = quota;
  changed_.insert(name);
}

std::vector<UserRecord> Accounting::TakeChanged() {
  std::vector<UserRecord> out;
  out.reserve(changed_.size());
  for (const UserName& name : changed_) out.push_back(users_.at(name));
  changed_.clear();
  return out;
}

void Accounting::StartHolding(JobId job, const UserName& user, bool preemptible, int cores,
                              TimePoint start) {
  auto [it, inserted] = holding_.try_emplace(job, Holding{user, preemptible, cores, start});
  PODSCHED_CHECK_MSG(inserted, "a job holds cores twice");
  std::vector<HeldCores>& mine = holding_of_user_[user];
  const auto at = std::lower_bound(mine.begin(), mine.end(), job,
                                   [](const HeldCores& h, JobId j) { return h.job < j; });
  mine.insert(at, HeldCores{job, cores, start});
  in_use_[user].Of(preemptible) += cores;
  cores_held_.Of(preemptible) += cores;
}

double Accounting::StopHolding(JobId job, TimePoint now) {
  auto it = holding_.find(job);
  if (it == holding_.end()) return 0;
  const Holding held = std::move(it->second);
  holding_.erase(it);
  std::vector<HeldCores>& mine = holding_of_user_.at(held.user);
  const auto at = std::lower_bound(mine.begin(), mine.end(), job,
                                   [](const HeldCores& h, JobId j) { return h.job < j; });
  PODSCHED_CHECK(at != mine.end() && at->job == job);
  mine.erase(at);
  in_use_[held.user].Of(held.preemptible) -= held.cores;
  cores_held_.Of(held.preemptible) -= held.cores;
  const double core_hours = held.cores * (ToSeconds(now - held.start) / 3600.0);
  UserRecord& user = User(held.user, now);
  user.decayed_core_hours = DecayedUsage(user, now) + core_hours;
  user.usage_as_of = now;
  changed_.insert(user.name);
  return core_hours;
}

QuotaUsage Accounting::InUseOf(const UserName& user) const {
  auto it = in_use_.find(user);
  return it == in_use_.end() ? QuotaUsage{} : it->second;
}

double Accounting::DecayedUsage(const UserRecord& user, TimePoint now) const {
  return user.decayed_core_hours *
         std::exp2(-ToSeconds(now - user.usage_as_of) / ToSeconds(rules_.fair_share_half_life));
}

double Accounting::UsageNow(const UserName& name, TimePoint now) const {
  const auto user = users_.find(name);
  const auto mine = holding_of_user_.find(name);
  return UsageOf(user == users_.end() ? nullptr : &user->second,
                 mine == holding_of_user_.end() ? nullptr : &mine->second, now);
}

double Accounting::UsageNow(uint32_t number, TimePoint now) const {
  PODSCHED_CHECK(number < numbered_.size());
  const NumberedUser& user = numbered_[number];
  return UsageOf(user.record, user.held, now);
}

double Accounting::UsageOf(const UserRecord* record, const std::vector<HeldCores>* held,
                           TimePoint now) const {
  double usage = record == nullptr ? 0 : DecayedUsage(*record, now);
  if (held != nullptr) {
    for (const HeldCores& h : *held) usage += h.cores * (ToSeconds(now - h.start) / 3600.0);
  }
  return usage;
}

double Accounting::SecondsUntilCreation(const UserName& user, int jobs, TimePoint now) const {
  auto it = creation_budget_.find(user);
  return it == creation_budget_.end() ? FullBudget().SecondsUntil(jobs, now)
                                      : it->second.SecondsUntil(jobs, now);
}

double Accounting::CreationsAvailable(const UserName& user, TimePoint now) const {
  auto it = creation_budget_.find(user);
  return it == creation_budget_.end() ? FullBudget().Available(now) : it->second.Available(now);
}

TokenBucket<TimePoint> Accounting::FullBudget() const {
  const double per_hour = rules_.max_jobs_created_per_hour;
  return TokenBucket<TimePoint>(per_hour / 3600.0, per_hour);
}

void Accounting::ChargeCreation(const UserName& user, int jobs, TimePoint now) {
  auto it = creation_budget_.try_emplace(user, FullBudget()).first;
  PODSCHED_CHECK(it->second.Take(jobs, now));  // the caller found them there
}

}  // namespace podsched::core
