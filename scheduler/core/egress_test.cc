// Checkpoint stores and egress (issue 28 stage 3, SchedulerConfig::choose_checkpoint_store and
// ::egress): a job keeps the store its first launch chose, and pays for its checkpoints crossing
// zones when it runs elsewhere.
#include <gtest/gtest.h>

#include "scheduler/core/test_util.h"

namespace podsched::core {
namespace {

using testing::At;
using testing::Only;
using testing::Spec;

constexpr int64_t kGb = int64_t{1} << 30;

class EgressTest : public testing::SchedulerFixture {
 protected:
  // Two one-host pods on two continents; a store per zone, "store-<zone>", and a spec's own
  // POD_CHECKPOINT_URL in no known zone.
  void SetUp() override {
    SchedulerConfig config = DefaultConfig();
    config.profile = "fair-first-fit";
    config.choose_checkpoint_store = [](const JobSpec& spec, std::string_view zone) {
      if (auto it = spec.env.find("POD_CHECKPOINT_URL"); it != spec.env.end()) {
        return CheckpointStore{it->second, ""};
      }
      return CheckpointStore{"store-" + std::string(zone), std::string(zone)};
    };
    StartFleet({{"a", pod::Generation::kV2, 1, 1, "us-central1-b"},
                {"b", pod::Generation::kV2, 1, 1, "europe-west4-a"}},
               config);
  }
  // Puts `job` (on pod a) on pod b: an on-demand job scoped to a preempts it at `t`.
  void MoveToB(JobId job, double t) {
    JobSpec od = Spec("od", "v2-8", false);
    od.pod = "a";
    Submit(od, t);
    ASSERT_EQ(Only<PreemptAction>(Tick(t + 1)).size(), 1u);
    Exited(job, ExitKind::kPreempted, t + 2);
    launched_.clear();
    for (const LaunchPlan& l : Only<LaunchPlan>(Tick(t + 3))) launched_.push_back(l);
    ASSERT_EQ(sched_->fleet().pod(Job(job).placement->pod).name(), "b");
  }
  void ReportBytes(JobId id, int64_t step, int64_t bytes, double t) {
    auto r = sched_->ReportProgress(Epoch(id), step, step, At(t), bytes);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
  }
  std::vector<LaunchPlan> launched_;
};

TEST_F(EgressTest, AJobKeepsItsFirstStoreAndPaysForItsCheckpointCrossingZones) {
  const JobId job = Submit(Spec("ada", "v2-8", true), 0);
  const std::vector<LaunchPlan> first = Only<LaunchPlan>(Tick(1));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].pod, "a");
  EXPECT_EQ(first[0].zone, "us-central1-b");
  EXPECT_EQ(first[0].checkpoint_store, "store-us-central1-b");
  EXPECT_EQ(Job(job).checkpoint_zone, "us-central1-b");
  // Checkpoints at home cost nothing.
  ReportBytes(job, 10, 2 * kGb, 2);
  EXPECT_EQ(Job(job).checkpoint_bytes, 2 * kGb);
  EXPECT_EQ(Job(job).egress_bytes, 0);

  // Resumed on the other continent: it reads its 2 GB checkpoint from home ($0.08/GB)...
  MoveToB(job, 3);
  ASSERT_EQ(launched_.size(), 2u);
  const LaunchPlan& resumed = launched_[0].job.job == job ? launched_[0] : launched_[1];
  EXPECT_EQ(resumed.zone, "europe-west4-a");
  EXPECT_EQ(resumed.checkpoint_store, "store-us-central1-b");  // where its checkpoints are
  EXPECT_EQ(Job(job).checkpoint_zone, "us-central1-b");
  EXPECT_EQ(Job(job).egress_bytes, 2 * kGb);
  EXPECT_DOUBLE_EQ(Job(job).egress_usd, 0.16);
  // ... and every checkpoint it commits there goes back across (a report without a size: the
  // last one known).
  Progress(job, 20, 20, 7);
  EXPECT_EQ(Job(job).egress_bytes, 4 * kGb);
  EXPECT_DOUBLE_EQ(Job(job).egress_usd, 0.32);
  // The user's sum, which outlives the job in memory (stored with the user).
  EXPECT_DOUBLE_EQ(sched_->EgressUsdOf(UserName("ada")), 0.32);
  EXPECT_EQ(sched_->EgressUsdOf(UserName("od")), 0);
  Progress(job, 25, 20, 8);  // no new checkpoint: nothing crosses
  EXPECT_EQ(Job(job).egress_bytes, 4 * kGb);
  // A negative size is refused and changes nothing.
  EXPECT_FALSE(sched_->ReportProgress(Epoch(job), 30, 30, At(9), -1).has_value());
  EXPECT_EQ(Job(job).egress_bytes, 4 * kGb);
}

TEST_F(EgressTest, AJobWithoutACheckpointYetReadsNothing) {
  const JobId fresh = Submit(Spec("ada", "v2-8", true), 0);
  Tick(1);
  MoveToB(fresh, 2);  // preempted before any checkpoint: nothing to read
  EXPECT_EQ(Job(fresh).checkpoint_store, "store-us-central1-b");
  EXPECT_EQ(Job(fresh).egress_bytes, 0);
}

TEST_F(EgressTest, AStoreInNoKnownZoneIsNeverBilled) {
  JobSpec own = Spec("bob", "v2-8", true);
  own.env["POD_CHECKPOINT_URL"] = "s3://bob/ckpt";
  const JobId job = Submit(own, 10);
  Tick(11);
  ASSERT_EQ(sched_->fleet().pod(Job(job).placement->pod).name(), "a");
  EXPECT_EQ(Job(job).checkpoint_store, "s3://bob/ckpt");
  ReportBytes(job, 10, kGb, 12);
  MoveToB(job, 13);
  ReportBytes(job, 20, kGb, 17);
  EXPECT_EQ(Job(job).checkpoint_zone, "");
  EXPECT_EQ(Job(job).egress_bytes, 0);
  EXPECT_EQ(Job(job).egress_usd, 0);
}

// A job resuming from a checkpoint goes back to its store's zone when a pod there can take it,
// even when the policy would rather use another zone's pod; a job without a checkpoint does not.
class ZonePreferenceTest : public testing::SchedulerFixture {
 protected:
  // First fit (it takes the first pod of the fleet that fits), a store per zone.
  void StartFirstFit(const std::vector<pod::FleetPodSpec>& pods) {
    SchedulerConfig config = DefaultConfig();
    config.profile = "fair-first-fit";
    config.choose_checkpoint_store = [](const JobSpec&, std::string_view zone) {
      return CheckpointStore{"store-" + std::string(zone), std::string(zone)};
    };
    StartFleet(pods, config);
  }
};

TEST_F(ZonePreferenceTest, AResumingJobPrefersItsStoresZone) {
  // First fit takes pod x whenever it is free.
  StartFirstFit({{"x", pod::Generation::kV2, 1, 1, "europe-west4-a"},
                 {"a", pod::Generation::kV2, 1, 1, "us-central1-b"}});
  JobSpec on_x = Spec("od", "v2-8", false);
  on_x.pod = "x";
  const JobId blocker = Submit(on_x, 0);
  const JobId job = Submit(Spec("ada", "v2-8", true), 0);
  const JobId fresh = Submit(Spec("bob", "v2-8", true), 0);
  Tick(1);
  ASSERT_EQ(sched_->fleet().pod(Job(job).placement->pod).name(), "a");
  EXPECT_EQ(Job(fresh).state, JobState::kQueued);
  ASSERT_TRUE(sched_->ReportProgress(Epoch(job), 10, 10, At(2), kGb).has_value());
  Exited(blocker, ExitKind::kSucceeded, 3);
  Tick(4);  // the queued job takes x
  ASSERT_EQ(sched_->fleet().pod(Job(fresh).placement->pod).name(), "x");
  // Both free again; the job is preempted and comes back: to a, its store's zone, not to x.
  Exited(fresh, ExitKind::kSucceeded, 5);
  ASSERT_TRUE(sched_->Preempt(job, "test", At(6)).has_value());
  Exited(job, ExitKind::kPreempted, 7);
  Tick(8);
  ASSERT_EQ(Job(job).state, JobState::kPlaced);
  EXPECT_EQ(sched_->fleet().pod(Job(job).placement->pod).name(), "a");
  EXPECT_EQ(Job(job).egress_bytes, 0);
  // A job with no checkpoint takes the policy's choice.
  const JobId other = Submit(Spec("carl", "v2-8", true), 9);
  Tick(10);
  EXPECT_EQ(sched_->fleet().pod(Job(other).placement->pod).name(), "x");
}

// The same for a multislice job: its slices go back to its store's zone.
TEST_F(ZonePreferenceTest, AResumingMultisliceJobPrefersItsStoresZone) {
  StartFirstFit({{"x0", pod::Generation::kV2, 1, 1, "europe-west4-a"},
                 {"x1", pod::Generation::kV2, 1, 1, "europe-west4-a"},
                 {"a0", pod::Generation::kV2, 1, 1, "us-central1-b"},
                 {"a1", pod::Generation::kV2, 1, 1, "us-central1-b"}});
  JobSpec blocker = Spec("od", "v2-8", false);
  blocker.zone = "europe-west4-a";
  blocker.slices = 2;
  const JobId b = Submit(blocker, 0);
  JobSpec two = Spec("ada", "v2-8", true);
  two.slices = 2;
  const JobId job = Submit(two, 0);
  Tick(1);
  ASSERT_EQ(Job(job).checkpoint_zone, "us-central1-b");
  ASSERT_TRUE(sched_->ReportProgress(Epoch(job), 10, 10, At(2), kGb).has_value());
  Exited(b, ExitKind::kSucceeded, 3);
  ASSERT_TRUE(sched_->Preempt(job, "test", At(4)).has_value());
  Exited(job, ExitKind::kPreempted, 5);
  Tick(6);
  ASSERT_EQ(Job(job).state, JobState::kPlaced);
  for (const pod::FleetPlacement& slice : SlicesOf(Job(job))) {
    EXPECT_EQ(sched_->fleet().zone(slice.pod), "us-central1-b");
  }
  EXPECT_EQ(Job(job).egress_bytes, 0);
}

}  // namespace
}  // namespace podsched::core
