// The scheduler through its public calls: failures and retries, exits 75, per-user limits,
// cancellation, the timers (minimum runtime, preemptible lifetime, reclaims, stale reports).
// Placement, preemption, order and restore are in scheduler_test.cc.
#include "scheduler/core/scheduler.h"

#include <gtest/gtest.h>

#include "scheduler/core/scheduler_impl.h"  // kFreeUnaskedExits
#include "scheduler/core/test_util.h"

namespace podsched::core {
namespace {

using testing::At;
using testing::Only;
using testing::Spec;
using S = JobState;

TEST_F(SchedulerTest, HostFailureRequeuesAndJobResumesElsewhere) {
  Start(1, 2);
  JobId id = Submit(Spec("ada", "v2-8", false), 0);
  auto launches = Only<LaunchPlan>(Tick(0));
  ASSERT_EQ(launches.size(), 1u);
  const HostId host = launches[0].hosts[0];
  auto down = sched_->HostDown(host, At(10));
  ASSERT_TRUE(down.has_value());
  EXPECT_EQ(Only<KillAction>(*down).size(), 1u);
  EXPECT_EQ(Job(id).state, S::kQueued);
  EXPECT_EQ(Job(id).reason, "requeued: host " + std::to_string(host.value()) + " failed");
  launches = Only<LaunchPlan>(Tick(11));
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_NE(launches[0].hosts[0], host);
  EXPECT_EQ(launches[0].job.epoch, 2);
  EXPECT_EQ(Job(id).restarts, 0);  // not the job's fault
  ASSERT_TRUE(sched_->HostUp(host, At(12)).has_value());
  EXPECT_EQ(sched_->fleet().AvailableHosts(), 1);
}

TEST_F(SchedulerTest, RetriesWithExponentialBackoffThenFails) {
  Start(1, 1);
  JobSpec spec = Spec("ada", "v2-8", false);
  spec.max_restarts = 2;
  JobId id = Submit(spec, 0);
  Tick(0);
  Exited(id, ExitKind::kFailed, 10, "exit code 3");
  EXPECT_EQ(Job(id).state, S::kQueued);
  EXPECT_EQ(Job(id).reason, "retry 1/2 in 30 s after: exit code 3");
  Tick(20);
  EXPECT_EQ(Job(id).state, S::kQueued);  // backoff until 40
  Tick(40);
  EXPECT_EQ(Job(id).state, S::kPlaced);
  Exited(id, ExitKind::kFailed, 50, "exit code 3");
  EXPECT_EQ(Job(id).reason, "retry 2/2 in 60 s after: exit code 3");
  Tick(100);
  EXPECT_EQ(Job(id).state, S::kQueued);
  Tick(110);
  EXPECT_EQ(Job(id).state, S::kPlaced);
  Exited(id, ExitKind::kFailed, 120, "exit code 3");
  EXPECT_EQ(Job(id).state, S::kFailed);
  EXPECT_EQ(Job(id).reason, "failed after 2 restarts: exit code 3");
}

TEST_F(SchedulerTest, CancelDuringPreemptingEndsCancelled) {
  Start(1, 1);
  JobId id = Submit(Spec("ada", "v2-8", true), 0);
  Tick(0);
  auto preempt = sched_->Preempt(id, "", At(5));
  ASSERT_TRUE(preempt.has_value());
  EXPECT_EQ(Only<PreemptAction>(*preempt).size(), 1u);
  auto cancel = sched_->Cancel(id, At(6));
  ASSERT_TRUE(cancel.has_value());
  EXPECT_TRUE(cancel->empty());  // already stopping
  EXPECT_EQ(Job(id).state, S::kPreempting);
  // The grace period expires: Kill.
  EXPECT_EQ(Only<KillAction>(Tick(36)).size(), 1u);
  Exited(id, ExitKind::kKilled, 37);
  EXPECT_EQ(Job(id).state, S::kCancelled);
  EXPECT_EQ(sched_->fleet().AvailableHosts(), 1);
  EXPECT_FALSE(sched_->Cancel(id, At(38)).has_value());
}

// A job that checkpointed and exited 75 on its own (its host's agent was stopped) is requeued as
// a preemption: no restart counted, no backoff.
TEST_F(SchedulerTest, ExitSeventyFiveWithoutAPreemptIsAPreemption) {
  Start(1, 1);
  JobId id = Submit(Spec("ada", "v2-8", true), 0);
  Tick(0);
  Exited(id, ExitKind::kPreempted, 5);
  EXPECT_EQ(Job(id).state, S::kQueued);
  EXPECT_EQ(Job(id).preemptions, 1);
  EXPECT_EQ(Job(id).restarts, 0);
  EXPECT_EQ(Only<LaunchPlan>(Tick(6)).size(), 1u);  // placed again at once
}

// The audit's M3: a program that exits 75 on its own again and again looped place, launch,
// requeue forever. Past three such exits within an hour it waits, doubling from the retry
// backoff base (30 s), and says why; no restart is counted (it is no failure).
TEST_F(SchedulerTest, RepeatedExitsSeventyFiveWithoutAPreemptBackOff) {
  Start(1, 1);
  JobId id = Submit(Spec("ada", "v2-8", true), 0);
  double t = 0;
  Tick(t);
  for (int i = 0; i < 3; ++i) {
    Exited(id, ExitKind::kPreempted, t += 1);
    ASSERT_EQ(Only<LaunchPlan>(Tick(t += 1)).size(), 1u) << "exit " << i + 1;
  }
  Exited(id, ExitKind::kPreempted, t += 1);  // the fourth within the hour
  EXPECT_EQ(Job(id).state, S::kQueued);
  EXPECT_NE(Job(id).reason.str().find("4 exits 75 without a preemption within an hour, waits 30 s"),
            std::string::npos)
      << Job(id).reason;
  EXPECT_TRUE(Only<LaunchPlan>(Tick(t + 10)).empty());
  EXPECT_EQ(Job(id).reason.str().substr(0, 9),
            "preempted");  // the pending reason says why it waits
  ASSERT_EQ(Only<LaunchPlan>(Tick(t += 31)).size(), 1u);
  Exited(id, ExitKind::kPreempted, t += 1);  // the fifth: twice as long
  EXPECT_NE(Job(id).reason.str().find("waits 60 s"), std::string::npos) << Job(id).reason;
  EXPECT_EQ(Job(id).restarts, 0);
  EXPECT_EQ(Job(id).preemptions, 5);
  // An hour later the count starts again.
  ASSERT_EQ(Only<LaunchPlan>(Tick(t += 3700)).size(), 1u);
  Exited(id, ExitKind::kPreempted, t += 1);
  EXPECT_EQ(Job(id).reason, "preempted (exit 75)");
  // Cancelled while QUEUED after such an exit: its count goes with it (it used to stay).
  EXPECT_EQ(sched_->JobsWithUnaskedExits(), 1u);
  ASSERT_TRUE(sched_->Cancel(id, At(t += 1)).has_value());
  EXPECT_EQ(Job(id).state, S::kCancelled);
  EXPECT_EQ(sched_->JobsWithUnaskedExits(), 0u);
}

// Audit L11: a lost launch is requeued at once and charged no restart; lost again and again
// within an hour (an agent that dies at every launch), it backs off as exits 75 do.
TEST_F(SchedulerTest, ALostLaunchIsRequeuedWithoutARestartButNotForeverForFree) {
  Start(1, 1);
  JobSpec spec = Spec("ada", "v2-8", false);
  spec.max_restarts = 0;
  JobId id = Submit(spec, 0);
  double t = 0;
  for (int lost = 1; lost <= kFreeUnaskedExits; ++lost) {
    Tick(t += 1);
    ASSERT_EQ(Job(id).state, S::kPlaced) << lost;
    auto r = sched_->ReportExited(Epoch(id), std::nullopt, ExitKind::kNeverStarted,
                                  "not running after a restart", At(t));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(Job(id).state, S::kQueued) << Job(id).reason;
    EXPECT_EQ(Job(id).restarts, 0);
    EXPECT_LE(Job(id).not_before, At(t));
  }
  Tick(t += 1);
  ASSERT_EQ(Job(id).state, S::kPlaced);
  ASSERT_TRUE(sched_->ReportExited(Epoch(id), std::nullopt, ExitKind::kNeverStarted, "lost",
                                   At(t)).has_value());
  EXPECT_EQ(Job(id).state, S::kQueued);
  EXPECT_GT(Job(id).not_before, At(t)) << Job(id).reason;
  EXPECT_NE(Job(id).reason.str().find("launches lost or exits 75 within an hour"),
            std::string::npos)
      << Job(id).reason;
  // A job that had started is not "never started": with max_restarts 0 it fails.
  Tick(t += 3600);
  ASSERT_EQ(Job(id).state, S::kPlaced);
  ASSERT_TRUE(sched_->ReportStarted(Epoch(id), At(t)).has_value());
  ASSERT_TRUE(sched_->ReportExited(Epoch(id), std::nullopt, ExitKind::kNeverStarted, "gone",
                                   At(t)).has_value());
  EXPECT_EQ(Job(id).state, S::kFailed);
}

// One user cannot make podsched keep (and sort) an unbounded number of jobs; the count comes
// back as jobs end and is rebuilt from the store after a restart.
TEST_F(SchedulerTest, ActiveJobsPerUserAreBounded) {
  SchedulerConfig config = DefaultConfig();
  config.max_active_jobs_per_user = 3;
  Start(1, 1, config);
  JobId first = Submit(Spec("ada", "v2-8", true), 0);
  Submit(Spec("ada", "v2-8", true), 0);
  Submit(Spec("ada", "v2-8", true), 0);
  auto refused = sched_->Submit(Spec("ada", "v2-8", true), At(1));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.error().message().find("max_active_jobs_per_user"), std::string::npos);
  EXPECT_TRUE(sched_->Submit(Spec("bob", "v2-8", true), At(1)).has_value());  // per user
  ASSERT_TRUE(sched_->Cancel(first, At(2)).has_value());
  // After a restart, the count is what the store holds: still 2 of ada's jobs have not ended.
  sched_.reset();
  Start(1, 1, config);
  EXPECT_TRUE(sched_->Submit(Spec("ada", "v2-8", true), At(3)).has_value());
  EXPECT_FALSE(sched_->Submit(Spec("ada", "v2-8", true), At(3)).has_value());
}

// Submitting and cancelling keeps the active count low, so the number of jobs a user creates
// is bounded on its own: a budget per hour, array tasks counted one by one (audit H1).
TEST_F(SchedulerTest, JobsCreatedPerUserAreBoundedPerHour) {
  SchedulerConfig config = DefaultConfig();
  config.max_jobs_created_per_user_per_hour = 10;
  Start(1, 1, config);
  // An array beyond the whole budget can never be created: said so, nothing queued.
  auto too_big = sched_->SubmitArray(Spec("ada", "v2-8", true), *ParseArraySpec("0-10"), At(0));
  ASSERT_FALSE(too_big.has_value());
  EXPECT_EQ(too_big.error().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(too_big.error().message().find("split the array"), std::string::npos)
      << too_big.error().message();
  EXPECT_EQ(sched_->ActiveJobs(), 0);
  // 8 tasks and a job, cancelled at once: the active count is 0 again, the budget is not.
  auto array = sched_->SubmitArray(Spec("ada", "v2-8", true), *ParseArraySpec("0-7"), At(0));
  ASSERT_TRUE(array.has_value());
  JobId single = Submit(Spec("ada", "v2-8", true), 0);
  ASSERT_TRUE(sched_->CancelArray(array->front(), At(0)).has_value());
  ASSERT_TRUE(sched_->Cancel(single, At(0)).has_value());
  EXPECT_EQ(sched_->ActiveJobs(), 0);
  auto two = sched_->SubmitArray(Spec("ada", "v2-8", true), *ParseArraySpec("0-1"), At(0));
  ASSERT_FALSE(two.has_value());  // 1 left; all or nothing
  EXPECT_EQ(two.error().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(two.error().message().find("max_jobs_created_per_user_per_hour"), std::string::npos);
  EXPECT_NE(two.error().message().find("1 left now; 2 more fit in 360 s"), std::string::npos)
      << two.error().message();
  EXPECT_EQ(sched_->ActiveJobs(), 0);
  EXPECT_TRUE(sched_->Submit(Spec("bob", "v2-8", true), At(1)).has_value());  // per user
  EXPECT_TRUE(sched_->Submit(Spec("ada", "v2-8", true), At(1)).has_value());  // the last one
  EXPECT_FALSE(sched_->Submit(Spec("ada", "v2-8", true), At(2)).has_value());
  // Refilled at 10 an hour: one more every 6 minutes.
  EXPECT_TRUE(sched_->Submit(Spec("ada", "v2-8", true), At(1 + 360)).has_value());
  EXPECT_FALSE(sched_->Submit(Spec("ada", "v2-8", true), At(1 + 360)).has_value());
}

// The same for the bytes of their specs: a few jobs with huge env values are bounded too.
TEST_F(SchedulerTest, ActiveSpecBytesPerUserAreBounded) {
  SchedulerConfig config = DefaultConfig();
  config.max_active_spec_bytes_per_user = 100 << 10;
  Start(1, 1, config);
  JobSpec big = Spec("ada", "v2-8", true);
  big.env["DATA"] = std::string(40 << 10, 'x');
  JobId first = Submit(big, 0);
  Submit(big, 0);
  auto refused = sched_->Submit(big, At(1));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.error().message().find("max_active_spec_bytes_per_user"), std::string::npos);
  EXPECT_TRUE(sched_->Submit(Spec("ada", "v2-8", true), At(1)).has_value());  // small fits
  ASSERT_TRUE(sched_->Cancel(first, At(2)).has_value());
  EXPECT_TRUE(sched_->Submit(big, At(3)).has_value());  // room again once one ended
  // Rebuilt from the store: ada holds 2 big + 1 small now.
  sched_.reset();
  Start(1, 1, config);
  EXPECT_FALSE(sched_->Submit(big, At(4)).has_value());
}

TEST_F(SchedulerTest, CancelQueuedAndRunning) {
  Start(1, 1);
  JobId running = Submit(Spec("ada", "v2-8", false), 0);
  Tick(0);
  JobId queued = Submit(Spec("ada", "v2-8", false), 1);
  ASSERT_TRUE(sched_->Cancel(queued, At(2)).has_value());
  EXPECT_EQ(Job(queued).state, S::kCancelled);
  auto cancel = sched_->Cancel(running, At(3));
  ASSERT_TRUE(cancel.has_value());
  EXPECT_EQ(Only<PreemptAction>(*cancel).size(), 1u);
  Exited(running, ExitKind::kPreempted, 4);
  EXPECT_EQ(Job(running).state, S::kCancelled);
}

TEST_F(SchedulerTest, AntiThrashMinimumRuntimeBeforePreemption) {
  SchedulerConfig config = DefaultConfig();
  config.min_runtime_before_preemption = std::chrono::minutes(10);
  Start(1, 1, config);
  JobId cheap = Submit(Spec("bob", "v2-8", true), 0);
  Tick(0);
  JobId od = Submit(Spec("ada", "v2-8", false), 60);
  EXPECT_TRUE(Only<PreemptAction>(Tick(60)).empty());
  EXPECT_EQ(Job(od).reason,
            "no free host; 1 running jobs would have to go, after their minimum runtime");
  EXPECT_TRUE(Only<PreemptAction>(Tick(599)).empty());
  auto preempts = Only<PreemptAction>(Tick(600));  // a timer wakes the pass
  ASSERT_EQ(preempts.size(), 1u);
  EXPECT_EQ(preempts[0].job.job, cheap);
}

TEST_F(SchedulerTest, PreemptibleLifetimeOf24Hours) {
  Start(1, 1);
  JobId id = Submit(Spec("bob", "v2-8", true), 0);
  Tick(0);
  EXPECT_TRUE(Only<PreemptAction>(Tick(24 * 3600 - 1)).empty());
  auto preempts = Only<PreemptAction>(Tick(24 * 3600));
  ASSERT_EQ(preempts.size(), 1u);
  EXPECT_EQ(preempts[0].reason, "24-hour preemptible lifetime reached");
  Exited(id, ExitKind::kPreempted, 24 * 3600 + 10);
  EXPECT_EQ(Job(id).state, S::kQueued);
  EXPECT_EQ(Job(id).state, S::kQueued);
  Tick(24 * 3600 + 11);
  EXPECT_EQ(Job(id).state, S::kPlaced);  // resumes on a new allocation
  EXPECT_EQ(Job(id).epoch, 2);
}

TEST_F(SchedulerTest, ProviderReclaimIsSeededAndDeterministic) {
  auto reclaim_time = [this](uint64_t seed) {
    SchedulerConfig config = DefaultConfig();
    config.reclaim_rate_per_hour = 1.0;
    config.seed = seed;
    repo_ = InMemoryJobRepository();
    Start(1, 1, config);
    Submit(Spec("bob", "v2-8", true), 0);
    Tick(0);
    for (int minute = 1; minute < 24 * 60; ++minute) {
      auto preempts = Only<PreemptAction>(Tick(minute * 60.0));
      if (!preempts.empty()) {
        EXPECT_EQ(preempts[0].reason, "provider reclaim of a preemptible allocation");
        return minute;
      }
    }
    return -1;
  };
  const int first = reclaim_time(7);
  EXPECT_GT(first, 0);
  EXPECT_EQ(reclaim_time(7), first);
}

TEST_F(SchedulerTest, StaleEpochReportsAreIgnoredAndCounted) {
  Start(1, 2);
  JobId id = Submit(Spec("ada", "v2-8", false), 0);
  auto launches = Only<LaunchPlan>(Tick(0));
  ASSERT_EQ(launches.size(), 1u);
  const JobEpoch old = launches[0].job;
  ASSERT_TRUE(sched_->HostDown(launches[0].hosts[0], At(1)).has_value());
  Tick(2);
  ASSERT_EQ(Job(id).epoch, 2);
  ASSERT_TRUE(sched_->ReportProgress(old, 99, 99, At(3)).has_value());
  ASSERT_TRUE(sched_->ReportExited(old, std::nullopt, ExitKind::kFailed, "zombie", At(4)));
  EXPECT_EQ(sched_->stats().stale_reports, 2);
  EXPECT_EQ(Job(id).state, S::kPlaced);
  EXPECT_EQ(Job(id).step, 0);
}

TEST_F(SchedulerTest, IllegalCallsAreRejected) {
  Start(1, 1);
  JobId id = Submit(Spec("ada", "v2-8", false), 0);
  auto preempt = sched_->Preempt(id, "", At(1));
  ASSERT_FALSE(preempt.has_value());
  EXPECT_EQ(preempt.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(sched_->Cancel(JobId(999), At(1)).has_value());
  EXPECT_FALSE(sched_->ReportProgress(Epoch(id), 5, 7, At(1)).has_value());
}

// A store that returns one job twice (a damaged or hand-edited store): the scheduler refuses to
// start and names the job, rather than count it twice or abort.
class DuplicatingRepository final : public JobRepository {
 public:
  explicit DuplicatingRepository(JobRepository& inner) : inner_(inner) {}
  Result<StoredState> Load() override {
    auto state = inner_.Load();
    if (state && !state->jobs.empty()) state->jobs.push_back(state->jobs.front());
    return state;
  }
  Status Commit(const StoreBatch& batch) override { return inner_.Commit(batch); }
  Result<std::vector<JobEvent>> EventsOf(JobId job) override { return inner_.EventsOf(job); }

 private:
  JobRepository& inner_;
};

TEST_F(SchedulerTest, AStoreWithAJobTwiceIsRefusedNamingIt) {
  Start(1, 1);
  const JobId id = Submit(Spec("ada", "v2-8", false), 0);
  DuplicatingRepository twice(repo_);
  auto pod = pod::Pod::Create("test", pod::Generation::kV2, 1, 1);
  auto restored = Scheduler::Create(std::move(*pod), DefaultConfig(), &twice, At(1));
  ASSERT_FALSE(restored.has_value());
  EXPECT_EQ(restored.error().message(),
            "job " + std::to_string(id.value()) + " appears twice in the job store");
}

// Keeps every batch the scheduler commits.
class RecordingRepository final : public JobRepository {
 public:
  explicit RecordingRepository(JobRepository& inner) : inner_(inner) {}
  Result<StoredState> Load() override { return inner_.Load(); }
  Status Commit(const StoreBatch& batch) override {
    batches.push_back(batch);
    return inner_.Commit(batch);
  }
  Result<std::vector<JobEvent>> EventsOf(JobId job) override { return inner_.EventsOf(job); }
  std::vector<StoreBatch> batches;

 private:
  JobRepository& inner_;
};

// A one-host pod whose host ada's job holds, its store's batches recorded.
class SchedulerStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pod = pod::Pod::Create("test", pod::Generation::kV2, 1, 1);
    SchedulerConfig config;
    config.check_pass_memos = true;
    auto sched = Scheduler::Create(std::move(*pod), config, &recording, At(0));
    ASSERT_TRUE(sched.has_value()) << sched.error().ToString();
    sched_ = std::move(*sched);
    ASSERT_TRUE(sched_->Submit(Spec("ada", "v2-8", false), At(0)).has_value());
    sched_->Tick(At(0));  // it takes the pod's one host
  }
  InMemoryJobRepository store;
  RecordingRepository recording{store};
  std::unique_ptr<Scheduler> sched_;
};

TEST_F(SchedulerStoreTest, AQueuedJobsNewReasonIsStoredAsAReasonUpdateNotAWholeRow) {
  Scheduler& s = *sched_;
  auto waiting = s.Submit(Spec("bob", "v2-8", false), At(1));
  ASSERT_TRUE(waiting.has_value());
  const std::string submitted = s.Find(*waiting)->reason;
  recording.batches.clear();
  s.Tick(At(2));
  const std::string told = s.Find(*waiting)->reason;
  ASSERT_NE(told, submitted);
  ASSERT_EQ(recording.batches.size(), 1u);
  const StoreBatch& pass = recording.batches[0];
  EXPECT_EQ(pass.reasons, (std::vector<ReasonUpdate>{{*waiting, SharedText(told)}}));
  for (const JobRecord& row : pass.jobs) EXPECT_NE(row.id, *waiting) << "a whole row as well";
  auto stored = store.Load();
  ASSERT_TRUE(stored.has_value());
  const auto row = std::find_if(stored->jobs.begin(), stored->jobs.end(),
                                [&](const JobRecord& j) { return j.id == *waiting; });
  ASSERT_NE(row, stored->jobs.end());
  EXPECT_EQ(*row, *s.Find(*waiting)) << "the store has the job as the scheduler has it";
}

// A pass tells every waiting job of a kind one text: the jobs' records and the store's reason
// updates share it (SharedText), so telling thousands of jobs copies no characters.
TEST_F(SchedulerStoreTest, JobsOfAKindToldOneReasonShareItsTextWithTheirStoreUpdates) {
  Scheduler& s = *sched_;
  std::vector<JobId> waiting;
  for (const char* user : {"bob", "cy", "dee"}) {
    auto id = s.Submit(Spec(user, "v2-8", false), At(1));
    ASSERT_TRUE(id.has_value());
    waiting.push_back(*id);
  }
  recording.batches.clear();
  s.Tick(At(2));
  ASSERT_EQ(recording.batches.size(), 1u);
  const std::vector<ReasonUpdate>& updates = recording.batches[0].reasons;
  ASSERT_EQ(updates.size(), waiting.size());
  for (size_t i = 0; i < updates.size(); ++i) {
    EXPECT_EQ(updates[i].job, waiting[i]) << "by id";
    const SharedText& record = s.Find(waiting[i])->reason;
    EXPECT_NE(record, "submitted");
    EXPECT_TRUE(updates[i].reason.Shares(record)) << record;
    EXPECT_TRUE(updates[i].reason.Shares(updates[0].reason)) << updates[i].reason;
  }
}

}  // namespace
}  // namespace podsched::core
