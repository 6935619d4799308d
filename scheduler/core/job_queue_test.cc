// JobQueue alone: the submission order it keeps against a plain sorted set, through random adds
// (new jobs last, requeued jobs in the middle), removals, adds again and reads at any moment.
#include "scheduler/core/job_queue.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <utility>
#include <vector>

namespace podsched::core {
namespace {

TimePoint At(int64_t s) { return TimePoint{} + std::chrono::seconds(s); }

const pod::AcceleratorType kType = *pod::AcceleratorType::Parse("v2-8");

std::vector<int64_t> Ids(const std::vector<QueueEntry>& entries) {
  std::vector<int64_t> out;
  for (const QueueEntry& e : entries) out.push_back(e.id.value());
  return out;
}

TEST(JobQueueTest, KeepsSubmitThenIdOrderWhateverTheOrderOfAdds) {
  JobRecord jobs[4];
  JobQueue q;
  q.Add(JobId(3), At(10), QueuedRef{&jobs[3], kType, nullptr, nullptr, 0});
  q.Add(JobId(1), At(20), QueuedRef{&jobs[1], kType, nullptr, nullptr, 0});
  EXPECT_EQ(Ids(q.InSubmitOrder()), (std::vector<int64_t>{3, 1}));
  // A requeued job keeps its old submit time: it goes before the others, and a tie goes by id.
  q.Add(JobId(2), At(10), QueuedRef{&jobs[2], kType, nullptr, nullptr, 0});
  q.Add(JobId(0), At(5), QueuedRef{&jobs[0], kType, nullptr, nullptr, 0});
  const std::vector<QueueEntry>& order = q.InSubmitOrder();
  EXPECT_EQ(Ids(order), (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_EQ(order[1].ref->job, &jobs[2]);
  EXPECT_EQ(order[1].submit, At(10));
  q.Remove(JobId(3));
  q.Remove(JobId(7));  // not queued: nothing
  EXPECT_EQ(q.size(), 3u);
  EXPECT_FALSE(q.contains(JobId(3)));
  EXPECT_EQ(Ids(q.InSubmitOrder()), (std::vector<int64_t>{0, 2, 1}));
}

TEST(JobQueueTest, AddingAQueuedJobAgainReplacesItsReferencesInPlace) {
  JobRecord a, b;
  JobQueue q;
  q.Add(JobId(1), At(1), QueuedRef{&a, kType, nullptr, nullptr, 0});
  (void)q.InSubmitOrder();
  q.Add(JobId(1), At(1), QueuedRef{&b, kType, nullptr, nullptr, 0});
  ASSERT_EQ(q.InSubmitOrder().size(), 1u);
  EXPECT_EQ(q.InSubmitOrder()[0].ref->job, &b);
  q.Add(JobId(1), At(0), QueuedRef{&a, kType, nullptr, nullptr, 0});  // another submit time
  ASSERT_EQ(q.InSubmitOrder().size(), 1u);
  EXPECT_EQ(q.InSubmitOrder()[0].submit, At(0));
}

// What a pass that skips jobs in bulk must read again (StrictTail): every job added, requeued or
// whose references were replaced since the last call, by its place in the order.
TEST(JobQueueTest, TakeChangedNamesEveryAddSinceTheLastCall) {
  JobRecord jobs[3];
  JobQueue q;
  q.Add(JobId(1), At(10), QueuedRef{&jobs[1], kType, nullptr, nullptr, 0});
  q.Add(JobId(2), At(20), QueuedRef{&jobs[2], kType, nullptr, nullptr, 0});
  q.InSubmitOrder();
  EXPECT_EQ(q.TakeChanged(), (std::vector<QueueKey>{{At(10), JobId(1)}, {At(20), JobId(2)}}));
  EXPECT_TRUE(q.TakeChanged().empty());
  q.Add(JobId(1), At(10), QueuedRef{&jobs[1], kType, nullptr, nullptr, 0});  // replaced in place
  q.Remove(JobId(2));
  q.Add(JobId(0), At(5), QueuedRef{&jobs[0], kType, nullptr, nullptr, 0});
  EXPECT_EQ(q.TakeChanged(), (std::vector<QueueKey>{{At(10), JobId(1)}, {At(5), JobId(0)}}));
}

TEST(JobQueueTest, AJobLeavingWhileAPassWalksTheOrderIsNulledInPlace) {
  JobRecord jobs[4];
  JobQueue q;
  for (int i = 1; i <= 3; ++i) {
    q.Add(JobId(i), At(i), QueuedRef{&jobs[i], kType, nullptr, nullptr, 0});
  }
  const std::vector<QueueEntry>& order = q.InSubmitOrder();
  const QueueEntry* walked = order.data();
  q.Remove(JobId(2));                                                  // started by the pass
  q.Add(JobId(9), At(0), QueuedRef{&jobs[0], kType, nullptr, nullptr, 0});  // waits for the next
  EXPECT_EQ(order.data(), walked) << "the vector a pass walks must not move";
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[1].ref, nullptr);
  EXPECT_EQ(order[2].ref->job, &jobs[3]);
  EXPECT_EQ(Ids(q.InSubmitOrder()), (std::vector<int64_t>{9, 1, 3}));
}

TEST(JobQueueTest, MatchesASortedSetThroughRandomChanges) {
  std::mt19937_64 rng(29);
  JobRecord record;
  JobQueue q;
  std::set<std::pair<int64_t, int64_t>> want;  // (submit, id)
  std::vector<int64_t> submit_of(4000, -1);
  int64_t next_id = 0, clock = 0;
  for (int step = 0; step < 20000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 4 && next_id < 4000) {  // a new job, submitted now
      const int64_t id = next_id++;
      clock += static_cast<int64_t>(rng() % 3);  // ties in submit time happen
      submit_of[id] = clock;
      q.Add(JobId(id), At(clock), QueuedRef{&record, kType, nullptr, nullptr, 0});
      want.insert({clock, id});
    } else if (op < 7 && next_id > 0) {  // a job leaves the queue (started, cancelled)
      const int64_t id = static_cast<int64_t>(rng() % next_id);
      q.Remove(JobId(id));
      if (submit_of[id] >= 0) want.erase({submit_of[id], id});
    } else if (op < 9 && next_id > 0) {  // a job comes back with its old submit time (requeued)
      const int64_t id = static_cast<int64_t>(rng() % next_id);
      const int64_t submit = submit_of[id] >= 0 ? submit_of[id] : 0;
      q.Remove(JobId(id));
      if (submit_of[id] >= 0) want.erase({submit_of[id], id});
      q.Add(JobId(id), At(submit), QueuedRef{&record, kType, nullptr, nullptr, 0});
      submit_of[id] = submit;
      want.insert({submit, id});
    } else {  // a pass reads it
      std::vector<int64_t> ids;
      for (const auto& [s, id] : want) ids.push_back(id);
      ASSERT_EQ(Ids(q.InSubmitOrder()), ids) << "step " << step;
    }
    ASSERT_EQ(q.size(), want.size());
  }
  std::vector<int64_t> ids;
  for (const auto& [s, id] : want) ids.push_back(id);
  EXPECT_EQ(Ids(q.InSubmitOrder()), ids);
}

// Jobs a pass judges alike share a group (QueueGroup): one type, priority, class and number of
// cores, whoever submitted them; a job that names a zone is judged on its own (no group). A group
// left empty is freed and its id given to the next.
TEST(JobQueueTest, GroupsTheJobsOfOneKindWhoeverSubmittedThem) {
  JobRecord jobs[5];
  jobs[2].spec.preemptible = true;
  jobs[4].spec.zone = "zone-a";
  const pod::AcceleratorType v2_32 = *pod::AcceleratorType::Parse("v2-32");
  JobQueue q;
  q.Add(JobId(0), At(1), QueuedRef{&jobs[0], kType, nullptr, nullptr, /*user=*/0});
  q.Add(JobId(1), At(2), QueuedRef{&jobs[1], kType, nullptr, nullptr, /*user=*/1});
  q.Add(JobId(2), At(3), QueuedRef{&jobs[2], kType, nullptr, nullptr, 0});
  q.Add(JobId(3), At(4), QueuedRef{&jobs[3], v2_32, nullptr, nullptr, 0});
  q.Add(JobId(4), At(5), QueuedRef{&jobs[4], kType, nullptr, nullptr, 0});
  const std::vector<QueueEntry>& order = q.InSubmitOrder();
  ASSERT_EQ(order.size(), 5u);
  const uint32_t v2_8s = order[0].group;
  EXPECT_NE(v2_8s, 0u);
  EXPECT_EQ(order[1].group, v2_8s) << "another user's job of the same kind";
  EXPECT_NE(order[2].group, v2_8s) << "preemptible";
  EXPECT_NE(order[3].group, v2_8s) << "another type";
  EXPECT_NE(order[2].group, 0u);
  EXPECT_NE(order[3].group, 0u);
  EXPECT_EQ(order[4].group, 0u) << "it names a zone";
  EXPECT_EQ(q.group(v2_8s).members.size(), 2u);
  for (uint32_t g = 1; g < q.group_ids(); ++g) {
    for (const QueuedRef* member : q.group(g).members) {
      EXPECT_TRUE(member == order[0].ref || member == order[1].ref || member == order[2].ref ||
                  member == order[3].ref);
    }
  }
  q.Remove(JobId(3));
  const uint32_t freed = order[3].group;
  EXPECT_TRUE(q.group(freed).members.empty());
  q.Add(JobId(5), At(6), QueuedRef{&jobs[3], v2_32, nullptr, nullptr, 0});
  EXPECT_EQ(q.InSubmitOrder().back().group, freed) << "the empty group's id is used again";
}

// A stamped group's members' own memos are stale: ending the stamp writes the group's into each,
// but each keeps its own expected runtime, and the outliers (judged on their own) keep theirs. A
// job joining a stamped group, or whose reason changes, becomes an outlier; more outliers than
// QueueGroup::kMaxOutliers end the stamp.
TEST(JobQueueTest, EndingAStampGivesEachMemberTheGroupsMemoButItsOwnEstimate) {
  std::vector<JobRecord> jobs(4 + QueueGroup::kMaxOutliers);  // 3 and one too many
  JobQueue q;
  q.Add(JobId(0), At(0), QueuedRef{&jobs[0], kType, nullptr, nullptr, 0});
  q.Add(JobId(1), At(1), QueuedRef{&jobs[1], kType, nullptr, nullptr, 1});
  const uint32_t id = q.InSubmitOrder()[0].group;
  QueueGroup& group = q.group(id);
  for (QueuedRef* member : group.members) {
    member->memo.valid = true;
    member->memo.estimate = std::chrono::seconds(member->user_number == 0 ? 60 : 600);
  }
  group.stamped = true;
  group.memo.valid = true;
  group.memo.kind = QueuedRef::Memo::Kind::kBlocked;
  group.memo.head = 7;
  group.memo.estimate = std::chrono::seconds(1);
  group.told = 5;

  q.Add(JobId(2), At(2), QueuedRef{&jobs[2], kType, nullptr, nullptr, 2});  // joins: an outlier
  EXPECT_TRUE(group.stamped);
  EXPECT_TRUE(group.IsOutlier(JobId(2)));
  EXPECT_FALSE(group.IsOutlier(JobId(0)));
  q.ForgetTold(JobId(1));  // its reason changed: an outlier, with what the group told it
  EXPECT_TRUE(group.IsOutlier(JobId(1)));
  const auto ref_of = [&](int64_t job) {
    for (const QueueEntry& e : q.InSubmitOrder()) {
      if (e.id == JobId(job)) return e.ref;
    }
    return static_cast<QueuedRef*>(nullptr);
  };
  EXPECT_EQ(ref_of(1)->memo.head, 7u);
  EXPECT_EQ(ref_of(1)->told, 0u);
  EXPECT_EQ(ref_of(1)->memo.estimate, std::chrono::seconds(600));

  q.Unstamp(id);
  EXPECT_FALSE(group.stamped);
  EXPECT_FALSE(group.HasOutliers());
  EXPECT_EQ(ref_of(0)->memo.head, 7u);
  EXPECT_EQ(ref_of(0)->told, 5u);
  EXPECT_EQ(ref_of(0)->memo.estimate, std::chrono::seconds(60)) << "its own";
  EXPECT_FALSE(ref_of(2)->memo.valid) << "an outlier keeps its own memo";
  EXPECT_EQ(ref_of(1)->told, 0u);

  // Stamped again: kMaxOutliers jobs join as outliers, one more ends the stamp.
  group.stamped = true;
  for (size_t i = 3; i < jobs.size(); ++i) {
    EXPECT_TRUE(group.stamped) << i;
    q.Add(JobId(static_cast<int64_t>(i)), At(static_cast<int64_t>(i)),
          QueuedRef{&jobs[i], kType, nullptr, nullptr, 0});
  }
  EXPECT_FALSE(group.stamped);
  EXPECT_EQ(ref_of(0)->told, 5u);
}

}  // namespace
}  // namespace podsched::core
