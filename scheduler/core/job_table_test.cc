// JobTable alone: the type parsed once, the counts per state and per user that follow every
// move, and ids never reused.
#include "scheduler/core/job_table.h"

#include <gtest/gtest.h>

#include "scheduler/core/spec.h"

namespace podsched::core {
namespace {

pod::AcceleratorType Type(const char* text) { return *pod::AcceleratorType::Parse(text); }

JobRecord Job(int64_t id, const char* user, JobState state = JobState::kQueued) {
  JobRecord job;
  job.id = JobId(id);
  job.spec.user = UserName(user);
  job.spec.accelerator = "v2-8";
  job.spec.command = "train";
  job.state = state;
  return job;
}

TEST(JobTableTest, TheTypeIsTheOneTheJobCameInWith) {
  JobTable table;
  table.Add(Job(1, "ada"), Type("v2-32"));
  ASSERT_NE(table.TypeOf(JobId(1)), nullptr);
  EXPECT_EQ(table.TypeOf(JobId(1))->tensor_cores(), 32)
      << "not re-parsed from the spec's text (v2-8)";
  EXPECT_EQ(table.TypeOf(JobId(2)), nullptr);
  table.Erase(JobId(1));
  EXPECT_EQ(table.TypeOf(JobId(1)), nullptr);
  EXPECT_EQ(table.Find(JobId(1)), nullptr);
}

TEST(JobTableTest, CountsFollowEveryMoveAndEveryErase) {
  JobTable table;
  JobRecord& a = table.Add(Job(1, "ada"), Type("v2-8"));
  table.Add(Job(2, "ada"), Type("v2-8"));
  table.Add(Job(3, "bob", JobState::kSucceeded), Type("v2-8"));
  EXPECT_EQ(table.CountIn(JobState::kQueued), 2);
  EXPECT_EQ(table.CountIn(JobState::kSucceeded), 1);
  EXPECT_EQ(table.active(), (std::set<JobId>{JobId(1), JobId(2)}));
  EXPECT_EQ(table.ActiveOf(UserName("ada")).jobs, 2);
  EXPECT_EQ(table.ActiveOf(UserName("ada")).spec_bytes, 2 * SpecBytes(a.spec));
  EXPECT_EQ(table.ActiveOf(UserName("bob")).jobs, 0) << "an ended job is not active";

  table.Move(a, JobState::kPlaced);
  EXPECT_EQ(a.state, JobState::kPlaced);
  EXPECT_EQ(table.CountIn(JobState::kQueued), 1);
  EXPECT_EQ(table.CountIn(JobState::kPlaced), 1);
  EXPECT_EQ(table.ActiveOf(UserName("ada")).jobs, 2);
  table.Move(a, JobState::kFailed);
  EXPECT_EQ(table.ActiveOf(UserName("ada")).jobs, 1);
  EXPECT_FALSE(table.active().contains(JobId(1)));

  table.Erase(JobId(2));  // an active job forgotten (only retention does this, for ended ones)
  table.Erase(JobId(1));
  table.Erase(JobId(9));  // not here: nothing
  EXPECT_EQ(table.CountIn(JobState::kQueued), 0);
  EXPECT_EQ(table.CountIn(JobState::kFailed), 0);
  EXPECT_EQ(table.ActiveOf(UserName("ada")).jobs, 0);
  EXPECT_EQ(table.ActiveOf(UserName("ada")).spec_bytes, 0);
  EXPECT_EQ(table.all().size(), 1u);
}

TEST(JobTableTest, IdsAreNeverReused) {
  JobTable table;
  EXPECT_EQ(table.NewId(), JobId(1));
  table.TakeIdsBelow(10);  // the store's next id
  EXPECT_EQ(table.NewId(), JobId(10));
  table.Add(Job(40, "ada"), Type("v2-8"));  // a loaded job above it
  EXPECT_EQ(table.next_id(), 41);
  table.TakeIdsBelow(5);
  EXPECT_EQ(table.NewId(), JobId(41));
}

}  // namespace
}  // namespace podsched::core
