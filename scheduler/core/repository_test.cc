#include "scheduler/core/repository.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace podsched::core {
namespace {

TEST(JobStateTest, NamesRoundTrip) {
  for (int i = 0; i <= 7; ++i) {
    auto state = static_cast<JobState>(i);
    auto parsed = ParseJobState(JobStateName(state));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, state);
  }
  auto bad = ParseJobState("DONE");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("valid: QUEUED"), std::string::npos);
}

TEST(InMemoryJobRepositoryTest, AReasonUpdateChangesTheReasonOfAStoredJobAndNamesAMissingOne) {
  InMemoryJobRepository repo;
  JobRecord job;
  job.id = JobId(7);
  job.spec.user = UserName("ada");
  job.reason = "submitted";
  ASSERT_TRUE(repo.Commit(StoreBatch{{job}, {}, {}, {}}).ok());
  ASSERT_TRUE(repo.Commit(StoreBatch{{}, {}, {}, {{job.id, SharedText("no free host")}}}).ok());
  job.reason = "no free host";
  auto state = repo.Load();
  ASSERT_TRUE(state.has_value());
  ASSERT_EQ(state->jobs.size(), 1u);
  EXPECT_EQ(state->jobs[0], job);
  Status missing = repo.Commit(StoreBatch{{}, {}, {}, {{JobId(8), SharedText("no free host")}}});
  EXPECT_EQ(missing.code(), StatusCode::kInternal);
  EXPECT_EQ(missing.message(), "a reason update for job 8, which is not stored");
}

// A copy is a store of its own (jobdb_recovery_test replays one copy against SQLite): a commit
// to either leaves the other as it was. Load returns the rows by id whatever the commit order.
TEST(InMemoryJobRepositoryTest, ACopyIsIndependentAndLoadIsById) {
  InMemoryJobRepository original;
  JobRecord job;
  job.id = JobId(9);
  job.reason = "submitted";
  JobRecord first;
  first.id = JobId(2);
  ASSERT_TRUE(original.Commit(StoreBatch{{job, first}, {}, {}, {}}).ok());
  InMemoryJobRepository copy = original;
  ASSERT_TRUE(copy.Commit(StoreBatch{{}, {}, {}, {{job.id, SharedText("no free host")}}}).ok());
  job.step = 5;
  ASSERT_TRUE(original.Commit(StoreBatch{{job}, {}, {}, {}}).ok());
  auto mine = original.Load();
  auto theirs = copy.Load();
  ASSERT_TRUE(mine.has_value() && theirs.has_value());
  ASSERT_EQ(mine->jobs.size(), 2u);
  EXPECT_EQ(mine->jobs[0].id, JobId(2));
  EXPECT_EQ(mine->jobs[1].reason, "submitted");
  EXPECT_EQ(mine->jobs[1].step, 5);
  ASSERT_EQ(theirs->jobs.size(), 2u);
  EXPECT_EQ(theirs->jobs[1].reason, "no free host");
  EXPECT_EQ(theirs->jobs[1].step, 0);
  EXPECT_EQ(mine->next_job_id, 10);
}

TEST(InMemoryJobRepositoryTest, LoadReturnsLatestRowsAndNextIds) {
  InMemoryJobRepository repo;
  JobRecord job;
  job.id = JobId(7);
  job.spec.user = UserName("ada");
  JobEvent submitted;
  submitted.seq = 1;
  submitted.job = job.id;
  ASSERT_TRUE(repo.PersistTransition(job, submitted).ok());
  job.state = JobState::kPlaced;
  job.epoch = 1;
  JobEvent placed;
  placed.seq = 2;
  placed.job = job.id;
  placed.epoch = 1;
  placed.from = JobState::kQueued;
  placed.to = JobState::kPlaced;
  placed.hosts = {HostId(3)};
  ASSERT_TRUE(repo.PersistTransition(job, placed).ok());
  UserRecord ada;
  ada.name = UserName("ada");
  ada.quota = Quota{8, 16};
  ASSERT_TRUE(repo.PutUser(ada).ok());

  auto state = repo.Load();
  ASSERT_TRUE(state.has_value());
  ASSERT_EQ(state->jobs.size(), 1u);
  EXPECT_EQ(state->jobs[0], job);
  EXPECT_EQ(state->next_job_id, 8);
  EXPECT_EQ(state->next_event_seq, 3);
  ASSERT_EQ(state->users.size(), 1u);
  EXPECT_EQ(state->users[0].quota.on_demand_cores, 8);
  auto events = repo.EventsOf(job.id);
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[1], placed);
}

}  // namespace
// A range of ids reads the stored jobs among them, in id order, whether the range is smaller than
// the store (each id looked up) or larger (the store walked).
TEST(InMemoryJobRepositoryTest, JobsInRangeReadsTheStoredJobsAmongTheIdsInOrder) {
  InMemoryJobRepository repo;
  StoreBatch batch;
  for (int64_t id : {9, 2, 5, 3, 12}) {
    JobRecord job;
    job.id = JobId(id);
    batch.jobs.push_back(job);
  }
  ASSERT_TRUE(repo.Commit(batch).ok());
  const auto ids = [&](JobId first, int64_t count) {
    auto range = repo.JobsInRange(first, count);
    std::vector<int64_t> out;
    for (const JobRecord& job : *range) out.push_back(job.id.value());
    return out;
  };
  EXPECT_EQ(ids(JobId(2), 4), (std::vector<int64_t>{2, 3, 5})) << "ids 2..5, fewer than stored";
  EXPECT_EQ(ids(JobId(5), 1), (std::vector<int64_t>{5}));
  EXPECT_TRUE(ids(JobId(6), 3).empty()) << "ids 6..8: none stored";
  EXPECT_EQ(ids(JobId(3), 100), (std::vector<int64_t>{3, 5, 9, 12})) << "more ids than stored";
  EXPECT_EQ(ids(JobId(12), INT64_MAX), (std::vector<int64_t>{12}));
  EXPECT_EQ(ids(JobId(INT64_MAX - 1), 3), (std::vector<int64_t>{}))
      << "no overflow past the last id";
}

}  // namespace podsched::core
