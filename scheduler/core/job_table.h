// JobTable: the jobs the scheduler holds in memory, with what is kept beside them so that no
// question about them re-reads or re-parses a spec (issue 27).
//
// Holds
//   - every job record in memory, by id (active jobs, and ended ones until retention forgets
//     them);
//   - each job's accelerator type, parsed once when the job came in (submitted or loaded);
//   - the active set (not terminal), with jobs and spec bytes counted per user;
//   - how many jobs are in each state;
//   - the next job id.
//
// Promises
//   - TypeOf(id) is the type the job was validated with, for as long as the job is here.
//   - The counts (per state, active per user) always match the records: every change of a job's
//     state goes through Move, every job in through Add, every job out through Erase.
//   - Ids are never reused: Add and TakeIdsBelow keep next_id() above every id seen.
//
// Who calls it: Scheduler::Impl, the coordinator. It may change a record's other fields (reason,
// epoch, placement...) through Find; the state only through Move (Impl::Transition). The queue
// stays in Impl: its entries point into Accounting's users as well.
//
// Pure (no I/O); single-threaded, like the Scheduler that owns it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>

#include "common/ids.h"
#include "pod/accelerator.h"
#include "scheduler/core/job.h"

namespace podsched::core {

class JobTable {
 public:
  struct ActiveUse {
    int jobs = 0;
    int64_t spec_bytes = 0;  // SpecBytes of those jobs
  };

  // A job new or loaded, in its current state, with the type its spec was validated with. Its
  // id must not be here.
  JobRecord& Add(JobRecord job, const pod::AcceleratorType& type);
  // `job` (here) goes to state `to`: the counts follow, then the record's state.
  void Move(JobRecord& job, JobState to);
  // Forgets the job (retention): its record, type and counts.
  void Erase(JobId id);

  JobRecord* Find(JobId id);
  const JobRecord* Find(JobId id) const;
  // The job must be here.
  JobRecord& at(JobId id) { return *index_.at(id).job; }
  const JobRecord& at(JobId id) const { return *index_.at(id).job; }
  // Its parsed accelerator type; nullptr when the job is not here.
  const pod::AcceleratorType* TypeOf(JobId id) const;
  // The cores it holds when placed (JobCores: every slice). The job must be here. One lookup: a
  // pass asks for every running job.
  int CoresOf(JobId id) const {
    const Slot& slot = index_.at(id);
    return JobCores(slot.job->spec, slot.type);
  }

  const std::map<JobId, JobRecord>& all() const { return jobs_; }
  const std::set<JobId>& active() const { return active_; }
  ActiveUse ActiveOf(const UserName& user) const;
  int64_t CountIn(JobState state) const { return in_state_[static_cast<int>(state)]; }

  // A new id (Submit); ids from `next_id()` on are free.
  JobId NewId() { return JobId(next_id_++); }
  int64_t next_id() const { return next_id_; }
  // Ids below `next` are taken (the store's next id, at load).
  void TakeIdsBelow(int64_t next) { next_id_ = std::max(next_id_, next); }

 private:
  void AddActive(const JobRecord& job);
  void RemoveActive(const JobRecord& job);

  std::map<JobId, JobRecord> jobs_;  // ordered, for listing; nodes never move
  // Each job's record and type by id in a hash table: a pass looks jobs up by id for every lease
  // (LiveOwner, Cores), and podsim keeps tens of thousands of ended jobs, where a lookup in
  // the tree was a dozen cache misses (perf: 20 % of a Philly replay in LiveOwner and TypeOf).
  struct Slot {
    JobRecord* job;
    pod::AcceleratorType type;
  };
  std::unordered_map<JobId, Slot> index_;  // element references survive a rehash
  std::set<JobId> active_;
  std::map<UserName, ActiveUse> active_per_user_;
  std::array<int64_t, kJobStateCount> in_state_{};
  int64_t next_id_ = 1;
};

}  // namespace podsched::core
