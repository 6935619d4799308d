#include "store/jobdb/sqlite_job_repository.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "store/jobdb/schema.h"
#include "store/jobdb/test_util.h"

// The queries below name only the fields they set (designated initializers); g++ 12 warns about
// every member left to its default.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace podsched::jobdb {
namespace {

using core::JobEvent;
using core::JobRecord;
using core::JobState;
using core::StoreBatch;
using testing::FullJob;
using testing::FullUser;
using testing::SubmitEvent;
using testing::TempDir;

std::unique_ptr<SqliteJobRepository> OpenOrDie(const std::string& path) {
  auto repo = SqliteJobRepository::Open(path);
  EXPECT_TRUE(repo.has_value()) << repo.error().ToString();
  return repo ? std::move(*repo) : nullptr;
}

// Retention (audit H1): the scheduler loads active jobs and those that ended recently, and reads
// a forgotten one back by id; ids are never reused.
TEST(SqliteJobRepositoryTest, LoadEndedSinceLeavesOldEndedJobsOutAndJobsInRangeReadsThem) {
  TempDir dir;
  auto repo = OpenOrDie(dir.File("jobs.db"));
  ASSERT_NE(repo, nullptr);
  const TimePoint cutoff = TimePoint(std::chrono::hours(100));
  auto job = [&](int64_t id, JobState state, TimePoint end) {
    JobRecord j = FullJob(id);
    j.state = state;
    j.end_time = end;
    if (!core::HoldsHosts(state)) j.placement.reset();
    return j;
  };
  const std::vector<JobRecord> jobs = {
      job(1, JobState::kSucceeded, cutoff - std::chrono::seconds(1)),  // old: left out
      job(2, JobState::kCancelled, cutoff),                             // recent: loaded
      job(3, JobState::kQueued, TimePoint{}),                           // active: always
      job(4, JobState::kFailed, TimePoint{}),                           // old: left out
      job(9, JobState::kFailed, cutoff - std::chrono::hours(50)),       // the newest id, old
  };
  ASSERT_TRUE(repo->Commit(StoreBatch{jobs, {}, {}, {}}).ok());

  auto state = repo->LoadEndedSince(cutoff);
  ASSERT_TRUE(state.has_value()) << state.error().ToString();
  std::vector<int64_t> loaded;
  for (const JobRecord& j : state->jobs) loaded.push_back(j.id.value());
  EXPECT_EQ(loaded, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(state->next_job_id, 10) << "ids of jobs left out are not given again";
  EXPECT_EQ(repo->Load()->jobs.size(), 5u);

  auto range = repo->JobsInRange(JobId(2), 7);  // ids 2..8
  ASSERT_TRUE(range.has_value());
  ASSERT_EQ(range->size(), 3u);
  EXPECT_EQ(range->at(0), jobs[1]);
  EXPECT_EQ(range->at(2), jobs[3]);
  auto one = repo->JobsInRange(JobId(1), 1);
  ASSERT_TRUE(one.has_value());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ(one->front(), jobs[0]);
  EXPECT_TRUE(repo->JobsInRange(JobId(5), 4)->empty());
  EXPECT_EQ(repo->JobsInRange(JobId(9), std::numeric_limits<int64_t>::max())->size(), 1u);

  // The history query: ended jobs only, filtered in SQL, paged by id.
  auto ended = [&](core::EndedJobQuery q) {
    auto page = repo->EndedJobs(q);
    EXPECT_TRUE(page.has_value()) << page.error().ToString();
    std::vector<int64_t> ids;
    for (const JobRecord& j : page->jobs) ids.push_back(j.id.value());
    return std::make_pair(ids, *page);
  };
  EXPECT_EQ(ended({}).first, (std::vector<int64_t>{1, 2, 4, 9}));
  auto [first_two, page] = ended({.limit = 2});
  EXPECT_EQ(first_two, (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(page.more);
  EXPECT_EQ(page.last_read, JobId(2));
  EXPECT_EQ(ended({.after = JobId(2), .limit = 2}).first, (std::vector<int64_t>{4, 9}));
  EXPECT_EQ(ended({.before = JobId(4)}).first, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ended({.state = JobState::kFailed}).first, (std::vector<int64_t>{4, 9}));
  EXPECT_EQ(ended({.user = UserName("ada")}).first, (std::vector<int64_t>{1, 9}));  // FullJob
  EXPECT_TRUE(ended({.user = UserName("nobody-here")}).first.empty());
  EXPECT_EQ(ended({.preemptible = true}).first, (std::vector<int64_t>{9}));
  EXPECT_EQ(ended({.preemptible = false}).first, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_FALSE(ended({}).second.more);
}

TEST(SqliteJobRepositoryTest, RoundTripsEveryField) {
  TempDir dir;
  auto repo = OpenOrDie(dir.File("jobs.db"));
  ASSERT_NE(repo, nullptr);
  JobRecord full = FullJob(7);
  JobRecord bare;  // every optional unset, every default
  bare.id = JobId(3);
  JobEvent placed{2,
                  TimePoint(Duration(99)),
                  full.id,
                  3,
                  JobState::kQueued,
                  JobState::kPlaced,
                  "placed \xfe",
                  {HostId(20), HostId(28)},
                  ""};
  ASSERT_TRUE(repo->Commit(StoreBatch{{full, bare},
                                      {SubmitEvent(full, 1), placed},
                                      {FullUser("ada"), core::UserRecord{}},
                                      {}})
                  .ok());

  auto state = repo->Load();
  ASSERT_TRUE(state.has_value()) << state.error().ToString();
  ASSERT_EQ(state->jobs.size(), 2u);
  EXPECT_EQ(state->jobs[0], bare);  // ordered by id
  EXPECT_EQ(state->jobs[1], full);
  ASSERT_EQ(state->users.size(), 2u);
  EXPECT_EQ(state->users[0], core::UserRecord{});  // "" sorts first
  EXPECT_EQ(state->users[1], FullUser("ada"));
  EXPECT_EQ(state->next_job_id, 8);
  EXPECT_EQ(state->next_event_seq, 3);
  auto events = repo->EventsOf(full.id);
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0], SubmitEvent(full, 1));
  EXPECT_EQ((*events)[1], placed);
}

TEST(SqliteJobRepositoryTest, LoadAfterReopenEqualsLatestRowsAndEventsStayOrdered) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  std::vector<JobRecord> latest;
  {
    auto repo = OpenOrDie(path);
    ASSERT_NE(repo, nullptr);
    int64_t seq = 1;
    for (int64_t id = 1; id <= 20; ++id) {
      JobRecord job = FullJob(id);
      ASSERT_TRUE(repo->PersistTransition(job, SubmitEvent(job, seq++)).ok());
      latest.push_back(job);
    }
    // Later transitions upsert the rows; events of different jobs interleave.
    for (int round = 0; round < 3; ++round) {
      for (JobRecord& job : latest) {
        job.state = static_cast<JobState>((job.id.value() + round) % 8);
        job.step += 100;
        job.reason = "round " + std::to_string(round);
        JobEvent event = SubmitEvent(job, seq++);
        event.from = JobState::kQueued;
        event.to = job.state;
        event.reason = job.reason;
        ASSERT_TRUE(repo->PersistTransition(job, event).ok());
      }
    }
  }
  auto repo = OpenOrDie(path);
  ASSERT_NE(repo, nullptr);
  auto state = repo->Load();
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->jobs, latest);
  EXPECT_EQ(state->next_event_seq, 81);
  auto events = repo->EventsOf(JobId(5));
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 4u);
  for (size_t i = 1; i < events->size(); ++i) EXPECT_LT((*events)[i - 1].seq, (*events)[i].seq);
  EXPECT_EQ(events->back().reason, "round 2");
  auto none = repo->EventsOf(JobId(999));
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

TEST(SqliteJobRepositoryTest, FailedCommitStoresNothingOfTheBatch) {
  TempDir dir;
  auto repo = OpenOrDie(dir.File("jobs.db"));
  ASSERT_NE(repo, nullptr);
  JobRecord a = FullJob(1);
  ASSERT_TRUE(repo->PersistTransition(a, SubmitEvent(a, 1)).ok());
  // Job 2's row and user come first in the batch; the duplicate event seq fails the commit.
  JobRecord b = FullJob(2);
  Status failed = repo->Commit(StoreBatch{{b}, {SubmitEvent(b, 1)}, {FullUser("carl")}, {}});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("nothing of it was stored"), std::string::npos)
      << failed.ToString();
  auto state = repo->Load();
  ASSERT_TRUE(state.has_value());
  ASSERT_EQ(state->jobs.size(), 1u);
  EXPECT_EQ(state->jobs[0], a);
  EXPECT_TRUE(state->users.empty());
  // The connection is usable afterwards.
  EXPECT_TRUE(repo->PersistTransition(b, SubmitEvent(b, 2)).ok());
}

TEST(SqliteJobRepositoryTest, WithoutPodNamesAPlacementOutsidePodZeroIsRefusedNotLost) {
  // A repository opened without the fleet's pod names cannot name pod 1: the job is refused,
  // and nothing of its batch is stored.
  TempDir dir;
  auto repo = OpenOrDie(dir.File("jobs.db"));
  ASSERT_NE(repo, nullptr);
  JobRecord job = FullJob(4);
  job.placement->pod = 1;
  Status refused = repo->Commit(StoreBatch{{job}, {SubmitEvent(job, 1)}, {}, {}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("job 4 is placed in pod 1 of a fleet"), std::string::npos)
      << refused.ToString();
  auto state = repo->Load();
  ASSERT_TRUE(state.has_value());
  EXPECT_TRUE(state->jobs.empty());
}

TEST(SqliteJobRepositoryTest, APlacementsPodIsStoredByNameAndFollowsItsName) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  JobRecord job = FullJob(4);
  job.placement->pod = 1;
  {
    auto repo = SqliteJobRepository::Open(path, {.pods = {"a", "b"}});
    ASSERT_TRUE(repo.has_value()) << repo.error().ToString();
    // Its event names pod b's own hosts with the pod (v7), whatever the fleet's order.
    JobEvent placed{2, TimePoint(Duration(99)), job.id, 3, JobState::kQueued, JobState::kPlaced,
                    "placed", {HostId(0), HostId(1)}, "b"};
    ASSERT_TRUE((*repo)->Commit(StoreBatch{{job}, {SubmitEvent(job, 1), placed}, {}, {}}).ok());
    auto events = (*repo)->EventsOf(job.id);
    ASSERT_TRUE(events.has_value());
    ASSERT_EQ(events->size(), 2u);
    EXPECT_EQ((*events)[1], placed);
    EXPECT_EQ((*events)[0].pod, "");
    auto state = (*repo)->Load();
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    ASSERT_EQ(state->jobs.size(), 1u);
    EXPECT_EQ(state->jobs[0], job);
    EXPECT_EQ((*repo)->SchemaVersion().value_or(0), LatestSchemaVersion());
  }
  {
    // The configuration lists the pods in another order: the job stays in pod "b".
    auto repo = SqliteJobRepository::Open(path, {.pods = {"b", "c", "a"}});
    ASSERT_TRUE(repo.has_value());
    auto state = (*repo)->Load();
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    ASSERT_EQ(state->jobs.size(), 1u);
    EXPECT_EQ(state->jobs[0].placement->pod, 0);
  }
  {
    // Pod "b" is gone from the configuration: an error naming it, not a job moved elsewhere.
    auto repo = SqliteJobRepository::Open(path, {.pods = {"a"}});
    ASSERT_TRUE(repo.has_value());
    auto state = (*repo)->Load();
    ASSERT_FALSE(state.has_value());
    EXPECT_NE(state.error().message().find(
                  "job 4 is placed in pod 'b', which the configured fleet does not have (pods: a)"),
              std::string::npos)
        << state.error().ToString();
  }
}

TEST(SqliteJobRepositoryTest, AMultisliceJobsSlicesAndCountAreStoredByPodName) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  JobRecord job = FullJob(4);
  job.spec.slices = 3;
  job.placement->pod = 1;
  job.more_slices = {pod::FleetPlacement{2, pod::Placement{{0, 2}, {2, 1}}},
                     pod::FleetPlacement{1, pod::Placement{{4, 0}, {2, 1}}}};
  {
    auto repo = SqliteJobRepository::Open(path, {.pods = {"a", "b", "c"}});
    ASSERT_TRUE(repo.has_value()) << repo.error().ToString();
    ASSERT_TRUE((*repo)->Commit(StoreBatch{{job}, {SubmitEvent(job, 1)}, {}, {}}).ok());
    auto state = (*repo)->Load();
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    ASSERT_EQ(state->jobs.size(), 1u);
    EXPECT_EQ(state->jobs[0], job);
    EXPECT_EQ(state->jobs[0].spec.slices, 3);
  }
  {
    // Its placement's event names every slice's hosts, by their pods' own ids.
    auto repo = SqliteJobRepository::Open(path, {.pods = {"a", "b", "c"}});
    ASSERT_TRUE(repo.has_value());
    JobEvent placed{2,       TimePoint(Duration(99)), job.id, 3, JobState::kQueued, JobState::kPlaced,
                    "placed", {HostId(2), HostId(6)},   "b",
                    {{"c", {HostId(2), HostId(6)}}, {"b", {HostId(0), HostId(4)}}}};
    ASSERT_TRUE((*repo)->Commit(StoreBatch{{job}, {placed}, {}, {}}).ok());
    auto events = (*repo)->EventsOf(job.id);
    ASSERT_TRUE(events.has_value()) << events.error().ToString();
    ASSERT_EQ(events->size(), 2u);
    EXPECT_EQ((*events)[1], placed);
    EXPECT_TRUE((*events)[0].more_slices.empty());
  }
  {
    // Reordered pods: every slice stays in the pod of its name.
    auto repo = SqliteJobRepository::Open(path, {.pods = {"c", "b", "a"}});
    ASSERT_TRUE(repo.has_value());
    auto state = (*repo)->Load();
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    ASSERT_EQ(state->jobs.size(), 1u);
    ASSERT_EQ(state->jobs[0].more_slices.size(), 2u);
    EXPECT_EQ(state->jobs[0].more_slices[0].pod, 0);
    EXPECT_EQ(state->jobs[0].more_slices[1].pod, 1);
    EXPECT_EQ(state->jobs[0].more_slices[0].rect, job.more_slices[0].rect);
  }
  {
    // A slice's pod gone from the configuration: an error naming it.
    auto repo = SqliteJobRepository::Open(path, {.pods = {"a", "b"}});
    ASSERT_TRUE(repo.has_value());
    auto state = (*repo)->Load();
    ASSERT_FALSE(state.has_value());
    EXPECT_NE(state.error().message().find("job 4 is placed in pod 'c'"), std::string::npos)
        << state.error().ToString();
  }
  {
    // A damaged slices column: DataLoss naming the job, not a job with fewer slices.
    auto raw = Connection::Open(path, /*create=*/false);
    ASSERT_TRUE(raw.has_value());
    ASSERT_TRUE((*raw)->Exec("UPDATE jobs SET more_slices = '[{\"pod\":\"a\",\"row\":1}]'").ok());
    auto repo = SqliteJobRepository::Open(path, {.pods = {"a", "b", "c"}});
    ASSERT_TRUE(repo.has_value());
    auto state = (*repo)->Load();
    ASSERT_FALSE(state.has_value());
    EXPECT_EQ(state.error().code(), StatusCode::kDataLoss) << state.error().ToString();
    EXPECT_NE(state.error().message().find("job 4"), std::string::npos)
        << state.error().ToString();
  }
}

TEST(SqliteJobRepositoryTest, UsesWalAndRecordsEpochsAndAllocations) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  auto repo = OpenOrDie(path);
  ASSERT_NE(repo, nullptr);
  JobRecord job = FullJob(4);
  JobEvent placed{1,         job.start_time,          job.id,
                  job.epoch, JobState::kQueued,       JobState::kPlaced,
                  "",        {HostId(20), HostId(28)}, ""};
  ASSERT_TRUE(repo->PersistTransition(job, placed).ok());
  auto check = repo->IntegrityCheck();
  ASSERT_TRUE(check.has_value());
  EXPECT_EQ(*check, "ok");
  EXPECT_EQ(repo->SchemaVersion().value_or(-1), LatestSchemaVersion());

  auto raw = Connection::Open(path, /*create=*/false);
  ASSERT_TRUE(raw.has_value());
  EXPECT_EQ((*raw)->QueryText("PRAGMA journal_mode").value_or(""), "wal");
  EXPECT_EQ((*raw)
                ->QueryInt("SELECT count(*) FROM allocations WHERE job_id = 4 AND epoch = 3")
                .value_or(-1),
            2);
  EXPECT_EQ((*raw)->QueryInt("SELECT rows * 10 + cols FROM epochs WHERE job_id = 4").value_or(-1),
            21);
}

// Bytes this process has written so far (/proc/self/io "wchar": every write and pwrite).
int64_t BytesWritten() {
  std::ifstream io("/proc/self/io");
  std::string key;
  int64_t value = 0;
  while (io >> key >> value) {
    if (key == "wchar:") return value;
  }
  return -1;
}

TEST(SqliteJobRepositoryTest, AReasonUpdateChangesTheReasonAloneAndOneOfNoRowFailsTheCommit) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  auto repo = OpenOrDie(path);
  ASSERT_NE(repo, nullptr);
  JobRecord a = FullJob(1);
  JobRecord b = FullJob(2);
  ASSERT_TRUE(
      repo->Commit(StoreBatch{{a, b}, {SubmitEvent(a, 1), SubmitEvent(b, 2)}, {}, {}}).ok());
  // In one batch with a row of another job, as the core sends them.
  b.step = 9;
  ASSERT_TRUE(
      repo->Commit(StoreBatch{{b}, {}, {}, {{a.id, SharedText("no free 2x2 block of hosts")}}})
          .ok());
  a.reason = "no free 2x2 block of hosts";
  // A job the store has no row for: the whole batch fails, the row before it too.
  JobRecord c = FullJob(3);
  Status failed = repo->Commit(StoreBatch{{c}, {}, {}, {{JobId(44), SharedText("no free host")}}});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("job 44: the job database has no row for it"), std::string::npos)
      << failed.ToString();
  EXPECT_NE(failed.message().find("nothing of it was stored"), std::string::npos);
  auto reopened = OpenOrDie(path);
  auto state = reopened->Load();
  ASSERT_TRUE(state.has_value());
  ASSERT_EQ(state->jobs.size(), 2u);
  EXPECT_EQ(state->jobs[0], a);
  EXPECT_EQ(state->jobs[1], b);
}

TEST(SqliteJobRepositoryTest, RowUpdatesDoNotRewriteTheSpec) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  auto repo = OpenOrDie(path);
  ASSERT_NE(repo, nullptr);
  JobRecord job = FullJob(1);
  job.spec.env["BIG"] = std::string(512 << 10, 'x');  // a 512 KiB spec
  ASSERT_TRUE(repo->Commit(StoreBatch{{job}, {SubmitEvent(job, 1)}, {}, {}}).ok());
  // 200 progress reports: each rewrites the job's row, never its spec. Measured: 3.3 MB written
  // with the spec in its own table, 9.2 MB when every update carried it (SQLite then rewrites
  // only the overflow pages that differ, but encodes and compares all 512 KiB each time).
  const int64_t before = BytesWritten();
  ASSERT_GE(before, 0);
  for (int i = 0; i < 200; ++i) {
    job.step = i;
    ASSERT_TRUE(repo->Commit(StoreBatch{{job}, {}, {}, {}}).ok());
  }
  const int64_t written = BytesWritten() - before;
  EXPECT_LT(written, int64_t{6} << 20) << written << " bytes written for 200 row updates";
  auto reopened = OpenOrDie(path);
  auto state = reopened->Load();
  ASSERT_TRUE(state.has_value());
  ASSERT_EQ(state->jobs.size(), 1u);
  EXPECT_EQ(state->jobs[0], job);
}

TEST(SqliteJobRepositoryTest, RefusesAFileThatIsNotSqlite) {
  TempDir dir;
  const std::string path = dir.File("notes.txt");
  std::ofstream(path) << std::string(4096, 'x');
  auto repo = SqliteJobRepository::Open(path);
  ASSERT_FALSE(repo.has_value());
  EXPECT_EQ(repo.error().code(), StatusCode::kDataLoss);
  EXPECT_NE(repo.error().message().find(path), std::string::npos) << repo.error().ToString();
  EXPECT_NE(repo.error().message().find("not a database"), std::string::npos)
      << repo.error().ToString();
}

// Pages after the first (the schema page) overwritten: the header still reads, the tables do not.
TEST(SqliteJobRepositoryTest, ReportsACorruptDatabaseAsDataLoss) {
  TempDir dir;
  const std::string path = dir.File("jobs.db");
  {
    auto repo = OpenOrDie(path);
    ASSERT_NE(repo, nullptr);
    for (int64_t id = 1; id <= 50; ++id) {
      ASSERT_TRUE(repo->PersistTransition(FullJob(id), SubmitEvent(FullJob(id), id)).ok());
    }
  }  // the last connection checkpoints the WAL into the file
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 4096u);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4096);
    file << std::string(size - 4096, '\x55');
  }
  auto repo = SqliteJobRepository::Open(path);
  ASSERT_TRUE(repo.has_value()) << repo.error().ToString();
  auto check = (*repo)->IntegrityCheck();
  EXPECT_TRUE(!check.has_value() || *check != "ok");
  auto state = (*repo)->Load();
  ASSERT_FALSE(state.has_value());
  EXPECT_EQ(state.error().code(), StatusCode::kDataLoss) << state.error().ToString();
  EXPECT_NE(state.error().message().find("malformed"), std::string::npos)
      << state.error().ToString();
}

TEST(SqliteJobRepositoryTest, RefusesAMissingDirectory) {
  auto repo = SqliteJobRepository::Open("/nonexistent-podsched-dir/jobs.db");
  ASSERT_FALSE(repo.has_value());
  EXPECT_NE(repo.error().message().find("/nonexistent-podsched-dir/jobs.db"), std::string::npos);
}

}  // namespace
}  // namespace podsched::jobdb
