#include "scheduler/daemon/job_snapshot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>

namespace podsched::daemon {
namespace {

pod::Fleet TestFleet() {
  auto pod = pod::Pod::Create("pod0", pod::Generation::kV2, 4, 4);
  EXPECT_TRUE(pod.has_value());
  return pod::Fleet::Of(std::move(*pod));
}

core::JobRecord Job(int64_t id, std::string user, core::JobState state, bool preemptible,
                    int64_t array = 0) {
  core::JobRecord job;
  job.id = JobId(id);
  job.spec.user = UserName(std::move(user));
  job.spec.accelerator = "v2-8";
  job.spec.preemptible = preemptible;
  job.state = state;
  if (array != 0) {
    job.spec.array = core::ArrayTask{JobId(array), static_cast<int>(id - array), 0, "0-9999"};
  }
  return job;
}

std::vector<int64_t> Ids(const JobSnapshot::Page& page) {
  std::vector<int64_t> ids;
  for (const auto* e : page.jobs) ids.push_back(e->job.id.value());
  return ids;
}

TEST(JobSnapshotTest, APublishedSnapshotKeepsItsJobsWhileTheBuilderChanges) {
  JobSnapshotBuilder builder(TestFleet());
  for (int64_t id = 1; id <= 1000; ++id) {
    builder.Upsert(Job(id, "alice", core::JobState::kQueued, false), std::nullopt);
  }
  auto before = builder.Publish();
  EXPECT_EQ(builder.Publish(), before) << "nothing changed: the same snapshot";
  builder.Upsert(Job(500, "alice", core::JobState::kRunning, false), std::nullopt);
  builder.Erase(JobId(7));
  builder.Upsert(Job(1001, "bob", core::JobState::kQueued, true), std::nullopt);
  auto after = builder.Publish();

  ASSERT_EQ(before->size(), 1000u);
  EXPECT_EQ(before->Find(JobId(500))->job.state, core::JobState::kQueued);
  EXPECT_NE(before->Find(JobId(7)), nullptr);
  EXPECT_EQ(before->Find(JobId(1001)), nullptr);
  EXPECT_EQ(after->size(), 1000u);
  EXPECT_EQ(after->Find(JobId(500))->job.state, core::JobState::kRunning);
  EXPECT_EQ(after->Find(JobId(7)), nullptr);
  EXPECT_EQ(after->Find(JobId(1001))->job.spec.user.value(), "bob");
  EXPECT_EQ(after->version(), before->version() + 1);
  // Unchanged rows are shared, not copied.
  EXPECT_EQ(after->Find(JobId(1)), before->Find(JobId(1)));
}

TEST(JobSnapshotTest, AReasonUpdateReplacesTheReasonAndKeepsTheRestAndThePublishedEntry) {
  JobSnapshotBuilder builder(TestFleet());
  core::JobRecord job = Job(3, "alice", core::JobState::kQueued, true);
  job.reason = "submitted";
  job.step = 12;
  builder.Upsert(job, std::nullopt);
  auto before = builder.Publish();
  builder.SetReason(JobId(3), SharedText("no free host"));
  builder.SetReason(JobId(99), SharedText("no free host"));  // not there: nothing
  auto after = builder.Publish();
  ASSERT_NE(after, before);
  EXPECT_EQ(before->Find(JobId(3))->job.reason, "submitted");
  job.reason = "no free host";
  EXPECT_EQ(after->Find(JobId(3))->job, job);
  EXPECT_EQ(after->Find(JobId(99)), nullptr);
  EXPECT_EQ(after->size(), 1u);
}

TEST(JobSnapshotTest, ListsPageByIdAndCountEveryMatch) {
  JobSnapshotBuilder builder(TestFleet());
  for (int64_t id = 1; id <= 600; ++id) {
    builder.Upsert(Job(id, id % 3 == 0 ? "bob" : "alice",
                       id % 2 == 0 ? core::JobState::kRunning : core::JobState::kQueued,
                       id % 5 == 0),
                   std::nullopt);
  }
  auto snap = builder.Publish();
  JobSnapshot::Filter bobs;
  bobs.user = "bob";
  auto first = snap->List(bobs, JobId(0), 3);
  EXPECT_EQ(Ids(first), (std::vector<int64_t>{3, 6, 9}));
  EXPECT_EQ(first.total, 200);
  EXPECT_TRUE(first.more);
  auto last = snap->List(bobs, JobId(597), 3);
  EXPECT_EQ(Ids(last), (std::vector<int64_t>{600}));
  EXPECT_EQ(last.total, 200);
  EXPECT_FALSE(last.more);
  JobSnapshot::Filter nobody;
  nobody.user = "carol";
  EXPECT_EQ(snap->List(nobody, JobId(0), 10).total, 0);
}

// Random upserts, erasures and publications against a std::map: every snapshot lists and finds
// exactly what the map held when it was published, also after later changes.
TEST(JobSnapshotTest, RandomChangesMatchAPlainMapAtEveryPublication) {
  std::mt19937_64 rng(29);
  JobSnapshotBuilder builder(TestFleet());
  std::map<int64_t, core::JobRecord> model;
  std::vector<std::pair<std::shared_ptr<const JobSnapshot>, std::map<int64_t, core::JobRecord>>>
      kept;
  const std::vector<std::string> users = {"alice", "bob", "carol"};
  const core::JobState states[] = {core::JobState::kQueued, core::JobState::kRunning,
                                   core::JobState::kSucceeded, core::JobState::kCancelled};
  auto check = [&](const JobSnapshot& snap, const std::map<int64_t, core::JobRecord>& want) {
    ASSERT_EQ(snap.size(), want.size());
    for (int round = 0; round < 20; ++round) {
      JobSnapshot::Filter f;
      if (rng() % 2) f.user = users[rng() % users.size()];
      if (rng() % 2) f.state = states[rng() % 4];
      if (rng() % 3 == 0) f.preemptible = rng() % 2 == 0;
      if (rng() % 4 == 0) f.array = JobId(5000);
      const int64_t after = static_cast<int64_t>(rng() % 3000);
      const int page_size = 1 + static_cast<int>(rng() % 50);
      std::vector<int64_t> ids;
      int total = 0;
      bool more = false;
      for (const auto& [id, job] : want) {
        if (!f.Matches(job)) continue;  // the record-based rule the keys must agree with
        ++total;
        if (id <= after) continue;
        if (static_cast<int>(ids.size()) < page_size) {
          ids.push_back(id);
        } else {
          more = true;
        }
      }
      auto page = snap.List(f, JobId(after), page_size);
      ASSERT_EQ(Ids(page), ids);
      ASSERT_EQ(page.total, total);
      ASSERT_EQ(page.more, more);
    }
    for (int i = 0; i < 50; ++i) {
      const int64_t id = static_cast<int64_t>(rng() % 3000);
      auto it = want.find(id);
      const auto* e = snap.Find(JobId(id));
      ASSERT_EQ(e != nullptr, it != want.end()) << id;
      if (e != nullptr) {
        ASSERT_EQ(e->job, it->second);
      }
    }
  };
  for (int step = 0; step < 6000; ++step) {
    const int64_t id = static_cast<int64_t>(rng() % 3000) + 1;
    const int op = static_cast<int>(rng() % 10);
    if (op < 7) {
      auto job = Job(id, users[rng() % users.size()], states[rng() % 4], rng() % 2 == 0);
      if (rng() % 6 == 0) job.spec.array = core::ArrayTask{JobId(5000), 1, 0, "0-9"};
      job.step = static_cast<int64_t>(step);
      builder.Upsert(job, std::nullopt);
      model[id] = job;
    } else if (op < 9) {
      builder.Erase(JobId(id));
      model.erase(id);
    } else {
      const int64_t mod = 2 + static_cast<int64_t>(rng() % 7);
      builder.EraseUnless([&](JobId j) { return j.value() % mod != 0; });
      std::erase_if(model, [&](const auto& kv) { return kv.first % mod == 0; });
    }
    ASSERT_EQ(builder.size(), model.size());
    if (step % 500 == 499) {
      kept.emplace_back(builder.Publish(), model);
      check(*kept.back().first, kept.back().second);
    }
  }
  for (const auto& [snap, want] : kept) check(*snap, want);  // unchanged by what came after
}

TEST(JobSnapshotTest, AnEntryRendersItsJsonOnceForEveryReader) {
  JobSnapshotBuilder builder(TestFleet());
  builder.Upsert(Job(1, "alice", core::JobState::kQueued, false), std::nullopt);
  auto snap = builder.Publish();
  std::atomic<int> renders = 0;
  std::vector<std::thread> readers;
  std::vector<std::string> seen(8);
  for (int t = 0; t < 8; ++t) {
    readers.emplace_back([&, t] {
      seen[static_cast<size_t>(t)] = snap->Find(JobId(1))->Json([&](const JobSnapshot::Entry& e) {
        ++renders;
        return "job " + std::to_string(e.job.id.value());
      });
    });
  }
  for (auto& r : readers) r.join();
  EXPECT_EQ(renders.load(), 1);
  for (const auto& s : seen) EXPECT_EQ(s, "job 1");
}

}  // namespace
}  // namespace podsched::daemon
