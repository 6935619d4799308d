#include "scheduler/core/job_table.h"

#include <algorithm>
#include <utility>

#include "common/check.h"
#include "scheduler/core/spec.h"

namespace podsched::core {

JobRecord& JobTable::Add(JobRecord job, const pod::AcceleratorType& type) {
  const JobId id = job.id;
  TakeIdsBelow(id.value() + 1);
  ++in_state_[static_cast<int>(job.state)];
  auto [it, inserted] = jobs_.emplace(id, std::move(job));
  PODSCHED_CHECK(inserted);
  index_.insert_or_assign(id, Slot{&it->second, type});
  if (!IsTerminal(it->second.state)) AddActive(it->second);
  return it->second;
}

void JobTable::AddActive(const JobRecord& job) {
  active_.insert(job.id);
  ActiveUse& u = active_per_user_[job.spec.user];
  ++u.jobs;
  u.spec_bytes += SpecBytes(job.spec);
}

void JobTable::Move(JobRecord& job, JobState to) {
  --in_state_[static_cast<int>(job.state)];
  ++in_state_[static_cast<int>(to)];
  job.state = to;
  if (IsTerminal(to)) RemoveActive(job);
}

void JobTable::RemoveActive(const JobRecord& job) {
  if (active_.erase(job.id) == 0) return;
  auto it = active_per_user_.find(job.spec.user);
  it->second.spec_bytes -= SpecBytes(job.spec);
  if (--it->second.jobs == 0) active_per_user_.erase(it);
}

void JobTable::Erase(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  --in_state_[static_cast<int>(it->second.state)];
  RemoveActive(it->second);
  index_.erase(id);
  jobs_.erase(it);
}

JobRecord* JobTable::Find(JobId id) {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : it->second.job;
}

const JobRecord* JobTable::Find(JobId id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : it->second.job;
}

const pod::AcceleratorType* JobTable::TypeOf(JobId id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &it->second.type;
}

JobTable::ActiveUse JobTable::ActiveOf(const UserName& user) const {
  auto it = active_per_user_.find(user);
  return it == active_per_user_.end() ? ActiveUse{} : it->second;
}

}  // namespace podsched::core
