#include "scheduler/core/accounting.h"

#include <cmath>
#include <utility>

#include "common/check.h"

namespace podsched::core {

void Accounting::Load(std::vector<UserRecord> users) {
  for (UserRecord& user : users) {
    const UserName name = user.name;
    users_[name] = std::move(user);
  }
}

UserRecord& Accounting::User(const UserName& name, TimePoint now) {
  auto [it, inserted] = users_.try_emplace(name);
  if (inserted) {
    it->second.name = name;
    it->second.quota = rules_.default_quota;
    it->second.usage_as_of = now;
    changed_.insert(name);
  }
  return it->second;
}

uint32_t Accounting::UserNumber(const UserName& name) {
  return numbers_.try_emplace(name, static_cast<uint32_t>(numbers_.size())).first->second;
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
  holding_of_user_[user].insert(job);
  in_use_[user].Of(preemptible) += cores;
  cores_held_.Of(preemptible) += cores;
}

double Accounting::StopHolding(JobId job, TimePoint now) {
  auto it = holding_.find(job);
  if (it == holding_.end()) return 0;
  const Holding held = std::move(it->second);
  holding_.erase(it);
  auto mine = holding_of_user_.find(held.user);
  mine->second.erase(job);
  if (mine->second.empty()) holding_of_user_.erase(mine);
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
  auto user = users_.find(name);
  double usage = user == users_.end() ? 0 : DecayedUsage(user->second, now);
  if (auto mine = holding_of_user_.find(name); mine != holding_of_user_.end()) {
    for (JobId job : mine->second) {
      const Holding& held = holding_.at(job);
      usage += held.cores * (ToSeconds(now - held.start) / 3600.0);
    }
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
