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

}  // namespace
}  // namespace podsched::core
