// Outbox alone: event numbering and one batch per Take.
#include "scheduler/core/outbox.h"

#include <gtest/gtest.h>

namespace podsched::core {
namespace {

TEST(OutboxTest, EventsAreNumberedInOrderAndEachBatchIsTakenOnce) {
  Outbox outbox;
  outbox.SetNextEventSeq(41);
  JobEvent placed;
  placed.job = JobId(7);
  placed.to = JobState::kPlaced;
  outbox.Record(placed);
  JobEvent queued;
  queued.job = JobId(3);
  queued.to = JobState::kQueued;
  outbox.Record(queued);
  outbox.Changed(JobId(9));
  outbox.Send(KillAction{JobEpoch{JobId(7), 1}, {HostId(0)}, "grace period expired"});

  Outbox::Batch batch = outbox.Take();
  ASSERT_EQ(batch.events.size(), 2u);
  EXPECT_EQ(batch.events[0].seq, 41);
  EXPECT_EQ(batch.events[0].job, JobId(7));
  EXPECT_EQ(batch.events[1].seq, 42);
  EXPECT_EQ(batch.changed_jobs, (std::set<JobId>{JobId(3), JobId(7), JobId(9)}));
  ASSERT_EQ(batch.actions.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<KillAction>(batch.actions[0]));

  Outbox::Batch empty = outbox.Take();
  EXPECT_TRUE(empty.events.empty() && empty.changed_jobs.empty() && empty.actions.empty());
  outbox.Record(queued);
  EXPECT_EQ(outbox.Take().events.at(0).seq, 43) << "numbering goes on across batches";
}

TEST(OutboxTest, AJobWhoseReasonAloneChangedIsTakenOnceAsRetold) {
  Outbox outbox;
  outbox.Retold(JobId(5), SharedText("no free host"));
  outbox.Retold(JobId(2), SharedText("no free 2x2 block of hosts"));
  outbox.Retold(JobId(5), SharedText("throttled"));  // the last text told is the one kept
  outbox.Retold(JobId(3), SharedText("no free host"));
  outbox.Changed(JobId(3));  // its record changed too: stored whole
  Outbox::Batch batch = outbox.Take();
  EXPECT_EQ(batch.retold,
            (std::vector<ReasonUpdate>{{JobId(2), SharedText("no free 2x2 block of hosts")},
                                       {JobId(5), SharedText("throttled")}}));
  EXPECT_EQ(batch.changed_jobs, (std::set<JobId>{JobId(3)}));
  EXPECT_TRUE(outbox.Take().retold.empty());
}

}  // namespace
}  // namespace podsched::core
