#include "store/jobdb/group_committer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "store/jobdb/test_util.h"

namespace podsched::jobdb {
namespace {

using core::JobRecord;
using core::StoreBatch;
using testing::FullJob;
using testing::SubmitEvent;
using testing::TempDir;

std::unique_ptr<GroupCommitter> OpenCommitter(const std::string& path) {
  auto repo = SqliteJobRepository::Open(path);
  EXPECT_TRUE(repo.has_value()) << repo.error().ToString();
  if (!repo) return nullptr;
  return std::make_unique<GroupCommitter>(std::move(*repo));
}

StoreBatch Submission(int64_t id) {
  JobRecord job = FullJob(id);
  return StoreBatch{{job}, {SubmitEvent(job, id)}, {}, {}};
}

// True when a fresh connection (not the committer's) sees job `id`'s row and event.
bool VisibleToAFreshConnection(const std::string& path, int64_t id) {
  auto db = Connection::Open(path, /*create=*/false);
  if (!db) return false;
  // A WAL reader can meet a transient SQLITE_BUSY (e.g. while the writer resets the WAL).
  sqlite3_busy_timeout((*db)->raw(), 10'000);
  auto stmt = (*db)->Prepare(
      "SELECT (SELECT count(*) FROM jobs WHERE id = ?1) + (SELECT count(*) FROM events WHERE "
      "seq = ?1)");
  if (!stmt) return false;
  (*stmt)->Bind(1, id);
  auto row = (*stmt)->Step();
  EXPECT_TRUE(row.has_value()) << row.error().ToString();
  return row.has_value() && *row && (*stmt)->Int(0) == 2;
}

TEST(GroupCommitterTest, ConcurrentCommitsAreAllStoredAndAcknowledgedOnlyAfterCommit) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  constexpr int kThreads = 8;
  constexpr int kPerThread = 25;
  std::atomic<int> acknowledged{0};
  std::atomic<int> invisible_at_ack{0};
  std::atomic<int> failed{0};
  {
    auto committer = OpenCommitter(path);
    ASSERT_NE(committer, nullptr);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          const int64_t id = 1 + t * kPerThread + i;
          if (i % 2 == 0) {
            // Blocking path: once Commit returns, the row must be readable elsewhere.
            if (!committer->Commit(Submission(id)).ok()) ++failed;
            if (!VisibleToAFreshConnection(path, id)) ++invisible_at_ack;
            ++acknowledged;
          } else {
            // Callback path: checked from inside the acknowledgement itself.
            auto done = std::make_shared<std::promise<void>>();
            committer->CommitAsync(Submission(id), [&, id, done](const Status& s) {
              if (!s.ok()) ++failed;
              if (!VisibleToAFreshConnection(path, id)) ++invisible_at_ack;
              ++acknowledged;
              done->set_value();
            });
            done->get_future().wait();
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    const GroupCommitStats stats = committer->stats();
    EXPECT_EQ(stats.batches, kThreads * kPerThread);
    EXPECT_LE(stats.groups, stats.batches);
  }
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(invisible_at_ack.load(), 0);
  EXPECT_EQ(acknowledged.load(), kThreads * kPerThread);
  auto repo = SqliteJobRepository::Open(path);
  ASSERT_TRUE(repo.has_value());
  auto state = (*repo)->Load();
  ASSERT_TRUE(state.has_value());
  ASSERT_EQ(state->jobs.size(), static_cast<size_t>(kThreads * kPerThread));
  for (const JobRecord& job : state->jobs) EXPECT_EQ(job, FullJob(job.id.value()));
  EXPECT_EQ(state->next_event_seq, kThreads * kPerThread + 1);
}

// While another connection holds the write lock, batches pile up and then go in one group; a bad
// batch in that group fails every batch of it, and none of them is stored.
TEST(GroupCommitterTest, AnErrorFailsEveryBatchOfTheGroup) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  auto committer = OpenCommitter(path);
  ASSERT_NE(committer, nullptr);
  ASSERT_TRUE(committer->Commit(Submission(1)).ok());

  auto blocker = Connection::Open(path);
  ASSERT_TRUE(blocker.has_value());
  ASSERT_TRUE((*blocker)->Exec("BEGIN IMMEDIATE").ok());
  std::future<Status> first = committer->CommitAsync(Submission(2));
  // Bounded wait until the writer has taken `first` (it then waits on the lock).
  for (int i = 0; i < 10000 && committer->pending() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(committer->pending(), 0u);
  std::future<Status> good = committer->CommitAsync(Submission(3));
  StoreBatch bad = Submission(4);
  bad.events[0].seq = 1;  // already used by job 1: the INSERT fails
  std::future<Status> broken = committer->CommitAsync(std::move(bad));
  ASSERT_TRUE((*blocker)->Exec("COMMIT").ok());

  EXPECT_TRUE(first.get().ok());
  const Status good_status = good.get();
  const Status broken_status = broken.get();
  EXPECT_FALSE(good_status.ok());
  EXPECT_EQ(good_status, broken_status);
  auto state = committer->Load();
  ASSERT_TRUE(state.has_value());
  ASSERT_EQ(state->jobs.size(), 2u);
  EXPECT_EQ(state->jobs[1].id, JobId(2));
  EXPECT_EQ(committer->stats().largest_group, 2u);
}

TEST(GroupCommitterTest, DestructorCommitsWhatIsQueued) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  std::vector<std::future<Status>> futures;
  {
    auto committer = OpenCommitter(path);
    ASSERT_NE(committer, nullptr);
    for (int64_t id = 1; id <= 50; ++id) futures.push_back(committer->CommitAsync(Submission(id)));
  }
  for (auto& f : futures) EXPECT_TRUE(f.get().ok());
  auto repo = SqliteJobRepository::Open(path);
  ASSERT_TRUE(repo.has_value());
  EXPECT_EQ((*repo)->Load()->jobs.size(), 50u);
}

}  // namespace
}  // namespace podsched::jobdb
