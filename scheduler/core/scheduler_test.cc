// The scheduler through its public calls: a job's life cycle, placement, preemption and
// reservations, backfill, quotas, fair share, max_runtime and a restore. Failures, limits and
// timers are in scheduler_limits_test.cc.
#include "scheduler/core/scheduler.h"

#include <gtest/gtest.h>

#include "scheduler/core/test_util.h"

namespace podsched::core {
namespace {

using testing::At;
using testing::Only;
using testing::Spec;
using S = JobState;

// SchedulerTest: test_util.h (one fixture for scheduler_test.cc and scheduler_limits_test.cc).

TEST_F(SchedulerTest, PlacesAndRunsAJobThroughItsLifecycle) {
  Start(2, 2);
  JobId id = Submit(Spec("ada", "v2-32", false), 0);
  EXPECT_EQ(Job(id).state, S::kQueued);
  Actions actions = Tick(1);
  auto launches = Only<LaunchPlan>(actions);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].job, (JobEpoch{id, 1}));
  EXPECT_EQ(launches[0].hosts.size(), 4u);
  EXPECT_EQ(Job(id).state, S::kPlaced);
  ASSERT_TRUE(sched_->ReportStarted(Epoch(id), At(2)).has_value());
  EXPECT_EQ(Job(id).state, S::kStarting);
  Progress(id, 10, 5, 3);
  EXPECT_EQ(Job(id).state, S::kRunning);
  Exited(id, ExitKind::kSucceeded, 3601);
  EXPECT_EQ(Job(id).state, S::kSucceeded);
  EXPECT_EQ(sched_->fleet().AvailableHosts(), 4);
  EXPECT_NEAR(Job(id).usage_core_hours, 32.0, 1e-6);  // 32 cores for one hour
  auto events = repo_.EventsOf(id);
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 5u);  // submit, placed, starting, running, succeeded
  EXPECT_FALSE((*events)[0].from.has_value());
  EXPECT_EQ((*events)[1].hosts.size(), 4u);
}

// The grant's devices by class (pod::PodClass): an on-demand v2-8 goes to the on-demand device,
// a preemptible one to the preemptible device, never the other way; when its class's devices
// are full a job waits (or goes to a pod that takes any job), and preemption stays within
// the pods the preemptor may use.
TEST_F(SchedulerTest, DevicesReservedToAClassTakeOnlyItsJobs) {
  StartFleet({{"od", pod::Generation::kV2, 1, 1, "zone-b", pod::PodClass::kOnDemand},
              {"pre", pod::Generation::kV2, 1, 1, "zone-b", pod::PodClass::kPreemptible}});
  const JobId p1 = Submit(Spec("ada", "v2-8", true), 0);
  const JobId o1 = Submit(Spec("bob", "v2-8", false), 0);
  Tick(1);
  ASSERT_EQ(Job(p1).state, JobState::kPlaced);
  ASSERT_EQ(Job(o1).state, JobState::kPlaced);
  EXPECT_EQ(sched_->fleet().pod(Job(p1).placement->pod).name(), "pre");
  EXPECT_EQ(sched_->fleet().pod(Job(o1).placement->pod).name(), "od");
  // Another of each: both wait; the on-demand one may not preempt the preemptible device's job
  // (its class may not use that device), and names the one pod it may use.
  const JobId p2 = Submit(Spec("ada", "v2-8", true), 2);
  const JobId o2 = Submit(Spec("bob", "v2-8", false), 2);
  EXPECT_TRUE(Only<PreemptAction>(Tick(3)).empty());
  EXPECT_EQ(Job(p2).state, JobState::kQueued);
  EXPECT_EQ(Job(o2).state, JobState::kQueued);
  EXPECT_NE(Job(o2).reason.str().find("pod od"), std::string::npos) << Job(o2).reason;
  // The on-demand device frees: the on-demand job takes it, the preemptible one keeps waiting.
  Exited(o1, ExitKind::kSucceeded, 4);
  Tick(5);
  EXPECT_EQ(Job(o2).state, JobState::kPlaced);
  EXPECT_EQ(Job(p2).state, JobState::kQueued);
}

// A program that never reports progress is RUNNING once its ranks are up (issue: a PyTorch job
// stayed STARTING through training, a preemption and its success).
TEST_F(SchedulerTest, OnAFleetATypeNoPodCanHoldIsRefusedSayingWhereTypesRun) {
  StartFleet({{"big", pod::Generation::kV2, 4, 4, "zone-a"},
              {"dev-0", pod::Generation::kV2, 1, 1, "zone-b"},
              {"dev-1", pod::Generation::kV2, 1, 1, "zone-b"}});
  auto refused = sched_->Submit(Spec("ada", "v2-256", false), At(0));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message(),
            "no pod of this fleet can hold a v2-256; types it can run: v2-8, v2-32, v2-128 on "
            "pod big (v2 4x4); v2-8 on 2 v2 1x1 pods dev-0, dev-1");
  EXPECT_EQ(sched_->ActiveJobs(), 0);
  // A job on a device gets that device's fleet-wide host (big has hosts 0..15).
  JobId id = Submit(Spec("ada", "v2-8", false), 0);
  ASSERT_TRUE(sched_->Submit(Spec("bob", "v2-32", false), At(0)).has_value());
  bool launched = false;
  for (const Action& a : Tick(1)) {
    if (const auto* l = std::get_if<LaunchPlan>(&a); l && l->job.job == id) {
      EXPECT_EQ(l->pod, "dev-0");  // best fit: the device, not a corner of big
      EXPECT_EQ(l->hosts, std::vector<HostId>{HostId(16)});
      launched = true;
    }
  }
  EXPECT_TRUE(launched);
  ASSERT_EQ(sched_->fleet().HostName(HostId(16)), "host 0 of pod dev-0");
  // A device's failure requeues the job on it, naming the host by its pod.
  ASSERT_TRUE(sched_->HostDown(HostId(16), At(2)).has_value());
  EXPECT_EQ(Job(id).state, JobState::kQueued);
  EXPECT_EQ(Job(id).reason, "requeued: host 0 of pod dev-0 failed");
}

TEST_F(SchedulerTest, RunningWhenEveryRankIsUpWithoutProgress) {
  Start(2, 2);
  JobId id = Submit(Spec("ada", "v2-32", false), 0);
  Tick(1);
  ASSERT_TRUE(sched_->ReportRunning(JobEpoch{id, Job(id).epoch + 1}, At(2)).has_value());
  EXPECT_EQ(Job(id).state, S::kPlaced);  // another epoch's report changes nothing
  ASSERT_TRUE(sched_->ReportRunning(Epoch(id), At(2)).has_value());
  EXPECT_EQ(Job(id).state, S::kRunning);
  EXPECT_EQ(Job(id).reason, "every rank is running");
  ASSERT_TRUE(sched_->ReportRunning(Epoch(id), At(3)).has_value());  // repeated: no new event
  EXPECT_EQ(repo_.EventsOf(id)->size(), 3u);  // submit, placed, running
  EXPECT_FALSE(sched_->ReportRunning(JobEpoch{JobId(999), 1}, At(3)).has_value());
}

TEST_F(SchedulerTest, HostsAreFreedOnlyWhenEveryHostReleasedThem) {
  Start(2, 2);
  JobId id = Submit(Spec("ada", "v2-32", false), 0);
  auto launches = Only<LaunchPlan>(Tick(1));
  ASSERT_EQ(launches.size(), 1u);
  const std::vector<HostId> hosts = launches[0].hosts;
  // Three non-launcher hosts report their MPI daemons gone: no verdict, hosts still held.
  for (size_t i = 1; i < hosts.size(); ++i) {
    ASSERT_TRUE(sched_->ReportHostReleased(Epoch(id), hosts[i], At(2)).has_value());
  }
  EXPECT_EQ(Job(id).state, S::kPlaced);
  EXPECT_EQ(sched_->fleet().AvailableHosts(), 0);
  // The launcher's verdict ends the job and frees the last host.
  ASSERT_TRUE(
      sched_->ReportExited(Epoch(id), hosts[0], ExitKind::kSucceeded, "", At(3)).has_value());
  EXPECT_EQ(Job(id).state, S::kSucceeded);
  EXPECT_EQ(sched_->fleet().AvailableHosts(), 4);
  EXPECT_FALSE(sched_->ReportHostReleased(JobEpoch{JobId(999), 1}, hosts[0], At(4)).has_value());
}

TEST_F(SchedulerTest, PassesRunOnlyWhenSomethingChanged) {
  Start(2, 2);
  Submit(Spec("ada", "v2-8", false), 0);
  Tick(1);
  const int64_t passes = sched_->stats().passes;
  Tick(2);
  Tick(3);
  EXPECT_EQ(sched_->stats().passes, passes);
  Submit(Spec("ada", "v2-8", false), 4);
  Tick(5);
  EXPECT_EQ(sched_->stats().passes, passes + 1);
}

TEST_F(SchedulerTest, PreemptibleEvictedExactlyWhenOnDemandNeedsItsHosts) {
  Start(2, 2);
  std::vector<JobId> cheap;
  for (int i = 0; i < 3; ++i) cheap.push_back(Submit(Spec("bob", "v2-8", true), 0));
  Tick(1);
  // One host is still free: an on-demand v2-8 takes it without preempting anyone.
  JobId first = Submit(Spec("ada", "v2-8", false), 10);
  Actions actions = Tick(11);
  EXPECT_TRUE(Only<PreemptAction>(actions).empty());
  EXPECT_EQ(Job(first).state, S::kPlaced);
  // The pod is full: the next on-demand job evicts exactly one preemptible job.
  JobId second = Submit(Spec("ada", "v2-8", false), 20);
  actions = Tick(21);
  auto preempts = Only<PreemptAction>(actions);
  ASSERT_EQ(preempts.size(), 1u);
  const JobId victim = preempts[0].job.job;
  EXPECT_EQ(Job(victim).state, S::kPreempting);
  EXPECT_EQ(preempts[0].grace, std::chrono::seconds(30));
  EXPECT_EQ(Job(second).reason, "waiting for job " + std::to_string(victim.value()) +
                                    " to checkpoint");
  // Hosts are not free until the victim reports its processes gone.
  EXPECT_TRUE(Only<LaunchPlan>(Tick(22)).empty());
  Exited(victim, ExitKind::kPreempted, 30);
  EXPECT_EQ(Job(victim).state, S::kQueued);
  EXPECT_EQ(Job(victim).preemptions, 1);
  auto launches = Only<LaunchPlan>(Tick(31));
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].job.job, second);
  EXPECT_EQ(Job(victim).reason, "no free host");
}

TEST_F(SchedulerTest, FreedHostsAreReservedForTheWaitingJob) {
  Start(1, 2);
  Submit(Spec("bob", "v2-8", true), 0);
  Submit(Spec("bob", "v2-8", true), 0);
  Tick(1);
  JobId od = Submit(Spec("ada", "v2-8", false), 10);
  auto preempts = Only<PreemptAction>(Tick(10));
  ASSERT_EQ(preempts.size(), 1u);
  const JobId victim = preempts[0].job.job;
  const HostId freed = preempts[0].hosts[0];
  // A job that sorts first (higher priority) arrives while the victim checkpoints.
  JobId eager = Submit(Spec("carl", "v2-8", false, 5), 11);
  Exited(victim, ExitKind::kPreempted, 12);
  auto launches = Only<LaunchPlan>(Tick(12));
  ASSERT_FALSE(launches.empty());
  EXPECT_EQ(launches[0].job.job, od);
  EXPECT_EQ(launches[0].hosts[0], freed);
  EXPECT_EQ(Job(od).state, S::kPlaced);
  EXPECT_NE(Job(eager).state, S::kPlaced);
}

TEST_F(SchedulerTest, NeverPreemptsOnDemandForPreemptible) {
  Start(1, 1);
  JobId od = Submit(Spec("ada", "v2-8", false), 0);
  Tick(1);
  JobId cheap = Submit(Spec("bob", "v2-8", true, /*priority=*/100), 2);
  Actions actions = Tick(3);
  EXPECT_TRUE(Only<PreemptAction>(actions).empty());
  EXPECT_EQ(Job(od).state, S::kPlaced);
  EXPECT_EQ(Job(cheap).reason, "no free host");
}

TEST_F(SchedulerTest, HigherPriorityPreemptsLowerPriorityPreemptibleWork) {
  Start(1, 1);
  JobId low = Submit(Spec("ada", "v2-8", true, 1), 0);
  Tick(1);
  Submit(Spec("bob", "v2-8", true, 5), 2);
  auto preempts = Only<PreemptAction>(Tick(3));
  ASSERT_EQ(preempts.size(), 1u);
  EXPECT_EQ(preempts[0].job.job, low);
}

// docs/jobspec.md: priority may preempt lower-priority *preemptible* work. An on-demand job is
// never preempted, so one user's priority cannot stop another user's on-demand job.
TEST_F(SchedulerTest, PriorityNeverPreemptsOnDemandWork) {
  Start(1, 1);
  JobId low = Submit(Spec("ada", "v2-8", false, 1), 0);
  Tick(1);
  JobId high = Submit(Spec("bob", "v2-8", false, 1000), 2);
  EXPECT_TRUE(Only<PreemptAction>(Tick(3)).empty());
  EXPECT_EQ(Job(low).state, S::kPlaced);
  EXPECT_EQ(Job(high).state, S::kQueued);
  JobId high_preemptible = Submit(Spec("bob", "v2-8", true, 1000), 4);
  EXPECT_TRUE(Only<PreemptAction>(Tick(5)).empty());
  EXPECT_EQ(Job(high_preemptible).state, S::kQueued);
}

TEST_F(SchedulerTest, VictimsChosenByLeastLostWork) {
  Start(2, 2);
  std::vector<JobId> cheap;
  for (int i = 0; i < 4; ++i) cheap.push_back(Submit(Spec("bob", "v2-8", true), 0));
  Tick(1);
  // Last checkpoints: job 0 at t=100, job 1 at t=50, job 2 at t=150, job 3 at t=120.
  const double ckpt_time[] = {100, 50, 150, 120};
  for (int i = 0; i < 4; ++i) Progress(cheap[i], 10, 10, ckpt_time[i]);
  Submit(Spec("ada", "v2-8", false), 200);
  auto preempts = Only<PreemptAction>(Tick(200));
  ASSERT_EQ(preempts.size(), 1u);
  EXPECT_EQ(preempts[0].job.job, cheap[2]);  // 50 s lost, the least
}

TEST_F(SchedulerTest, BackfillStartsOnlyJobsThatCannotDelayTheHead) {
  Start(2, 2);
  JobSpec running = Spec("ada", "v2-8", false);
  running.expected_runtime = std::chrono::seconds(100);
  JobId a = Submit(running, 0);
  Tick(0);
  JobId head = Submit(Spec("bob", "v2-32", false), 1);
  JobSpec short_job = Spec("carl", "v2-8", false);
  short_job.expected_runtime = std::chrono::seconds(50);
  JobSpec long_job = Spec("dora", "v2-8", false);
  long_job.expected_runtime = std::chrono::seconds(1000);
  JobId long_id = Submit(long_job, 2);
  JobId short_id = Submit(short_job, 3);
  Tick(4);
  EXPECT_EQ(Job(head).state, S::kQueued);
  EXPECT_EQ(Job(head).reason, "no free 2x2 block of hosts");
  EXPECT_EQ(Job(short_id).state, S::kPlaced);  // ends at 54, before the head's start at 100
  EXPECT_EQ(Job(long_id).state, S::kQueued);   // would still run at 100
  Exited(short_id, ExitKind::kSucceeded, 54);
  Tick(54);
  EXPECT_EQ(Job(long_id).state, S::kQueued);
  Exited(a, ExitKind::kSucceeded, 100);
  Tick(100);
  EXPECT_EQ(Job(head).state, S::kPlaced);
}

TEST_F(SchedulerTest, FifoWithoutBackfillBlocksBehindTheHead) {
  SchedulerConfig config = DefaultConfig();
  config.profile = "fifo-first-fit";
  Start(2, 2, config);
  Submit(Spec("ada", "v2-8", false), 0);
  Tick(0);
  JobId head = Submit(Spec("bob", "v2-32", false), 1);
  JobSpec short_job = Spec("carl", "v2-8", false);
  short_job.expected_runtime = std::chrono::seconds(5);
  JobId short_id = Submit(short_job, 2);
  Tick(3);
  EXPECT_EQ(Job(short_id).state, S::kQueued);
  EXPECT_EQ(Job(short_id).reason, "waiting for earlier jobs to start (FIFO order)");
  EXPECT_EQ(Job(head).reason, "no free 2x2 block of hosts");
}

// A pass skips a queued job that found no room and no victims behind the same backfill head, while
// the hosts, leases and reservations stay as they were: a pass over thousands of such jobs does
// only what changed (issue 29). Every skip is checked against a full evaluation
// (DefaultConfig: check_pass_memos), and a change of leases or of the head brings the jobs back.
TEST_F(SchedulerTest, BlockedJobsAreSkippedUntilHostsLeasesOrTheHeadChange) {
  SchedulerConfig config = DefaultConfig();
  config.default_quota = Quota{1000, 1000};
  Start(4, 4, config);
  std::vector<JobId> ada;  // on-demand: never a victim; expected runtime unknown
  for (int i = 0; i < 16; ++i) ada.push_back(Submit(Spec("ada", "v2-8", false), 0));
  Tick(0);
  const JobId head = Submit(Spec("bob", "v2-128", false), 1);
  std::vector<JobId> carl;
  for (int i = 0; i < 3; ++i) carl.push_back(Submit(Spec("carl", "v2-32", false), 1.1 + i * 0.1));
  Tick(1.5);
  const auto skipped = [&] { return sched_->stats().skipped_by_memo; };
  EXPECT_EQ(skipped(), 0) << "the first pass judges every job";
  for (JobId c : carl) EXPECT_EQ(Job(c).reason, "no free 2x2 block of hosts");

  // A submission makes a pass: the head is judged again, the jobs behind it are skipped.
  const JobId dave = Submit(Spec("dave", "v2-8", false), 2);
  Tick(2);
  EXPECT_EQ(skipped(), 3);
  EXPECT_EQ(Job(dave).reason, "no free host");
  Submit(Spec("erin", "v2-8", false), 3);
  Tick(3);
  EXPECT_EQ(skipped(), 3 + 4);

  // Released leases: no memo holds. A 2x2 block is free, and kept for the head. The blocked jobs
  // of one shape, class and priority are a group (QueueGroup): the first of each is judged by its
  // kind (Score, the healthy fit and the victim search, Pass::ProbeBlocked), and all of the group
  // (carl's three, dave's and erin's) get that answer, which they were told already, and are
  // skipped without being judged one by one (Pass::SkippedAsGroup).
  for (JobId a : ada) {
    const pod::HostCoord at = Job(a).placement->rect.origin;
    if (at.row < 2 && at.col < 2) Exited(a, ExitKind::kSucceeded, 5);
  }
  Tick(5);
  EXPECT_EQ(skipped(), 7 + 5);
  for (JobId c : carl) EXPECT_EQ(Job(c).state, S::kQueued);
  Submit(Spec("frank", "v2-8", false), 5.5);
  Tick(5.5);
  EXPECT_EQ(skipped(), 12 + 5) << "carl's, dave's and erin's jobs, behind the same head";
  // The head leaves the queue: the next job is judged again, fits and starts; the one after it
  // is the new head. carl's last v2-32 and the three v2-8s get their kind's answer.
  ASSERT_TRUE(sched_->Cancel(head, At(6)).has_value());
  Tick(6);
  EXPECT_EQ(skipped(), 17 + 4);
  EXPECT_EQ(Job(carl[0]).state, S::kPlaced);
  EXPECT_EQ(Job(carl[1]).state, S::kQueued);
}

// The same on a fleet whose pods each take one class of job (the grant's devices): a job that
// names no zone or pod is scoped by its class alone, which its memo knows, so after a release
// the blocked jobs of a kind get the answer of the first of them without being judged again.
// check_pass_memos (DefaultConfig) checks each of those skips against a full evaluation.
TEST_F(SchedulerTest, OnClassPodsBlockedJobsAreAnsweredFromTheirKindAfterARelease) {
  SchedulerConfig config = DefaultConfig();
  config.default_quota = Quota{1000, 1000};
  StartFleet({{"od", pod::Generation::kV2, 4, 4, "zone-b", pod::PodClass::kOnDemand},
              {"pre", pod::Generation::kV2, 2, 2, "zone-b", pod::PodClass::kPreemptible}},
             config);
  std::vector<JobId> ada;  // on-demand: never a victim
  for (int i = 0; i < 16; ++i) ada.push_back(Submit(Spec("ada", "v2-8", false), 0));
  Tick(0);
  const JobId head = Submit(Spec("bob", "v2-128", false), 1);
  std::vector<JobId> carl;
  for (int i = 0; i < 4; ++i) carl.push_back(Submit(Spec("carl", "v2-32", false), 1.1 + i * 0.1));
  Tick(1.5);
  const auto skipped = [&] { return sched_->stats().skipped_by_memo; };
  ASSERT_EQ(skipped(), 0);
  for (JobId c : carl) EXPECT_EQ(Job(c).reason, "no free 2x2 block of hosts in pod od");
  // One host of the on-demand pod frees: no memo holds. The head (a v2-128) is judged in full;
  // carl's four get their kind's answer (Pass::SkippedAsGroup).
  Exited(ada[5], ExitKind::kSucceeded, 5);
  Tick(5);
  EXPECT_EQ(skipped(), 4);
  EXPECT_EQ(Job(head).state, S::kQueued);
  for (JobId c : carl) {
    EXPECT_EQ(Job(c).state, S::kQueued);
    EXPECT_EQ(Job(c).reason, "no free 2x2 block of hosts in pod od");
  }
}

// A job that no other job may evict (on-demand) starting takes hosts away and offers no victim:
// the jobs blocked before it stay blocked with the same reason, and the next pass skips them
// (HostLeases::blocked_version). A preemptible job starting is a victim for some: it makes them
// judged again, as a release does. check_pass_memos (DefaultConfig) checks every skip.
TEST_F(SchedulerTest, AnOnDemandStartKeepsTheBlockedJobsMemosAndAPreemptibleOneDoesNot) {
  SchedulerConfig config = DefaultConfig();
  config.default_quota = Quota{1000, 1000};
  Start(4, 4, config);
  std::vector<JobId> ada;  // on-demand: never a victim; two hosts stay free
  for (int i = 0; i < 14; ++i) ada.push_back(Submit(Spec("ada", "v2-8", false), 0));
  Tick(0);
  std::vector<JobId> carl;
  for (int i = 0; i < 3; ++i) carl.push_back(Submit(Spec("carl", "v2-32", false), 1 + i * 0.1));
  Tick(1.5);
  const auto skipped = [&] { return sched_->stats().skipped_by_memo; };
  EXPECT_EQ(skipped(), 0);

  // dave's on-demand v2-8 takes a free host (after carl's jobs in the queue's order).
  const JobId dave = Submit(Spec("dave", "v2-8", false), 2);
  Tick(2);
  EXPECT_EQ(Job(dave).state, S::kPlaced);
  EXPECT_EQ(skipped(), 2) << "carl's jobs behind the head";
  // The next pass: the leases changed, but only by dave's start. carl's are skipped again.
  const JobId erin = Submit(Spec("erin", "v2-32", false), 3);
  Tick(3);
  EXPECT_EQ(skipped(), 4);

  // frank's preemptible v2-8 takes the last free host: a victim for carl's on-demand jobs, so
  // no memo holds in the next pass. The first v2-32 becomes the head; for the next, their kind's
  // victim search (Pass::ProbeBlocked) finds that evicting frank's job frees no 2x2 block, and
  // it and the other two are told that without being judged one by one (the same shape, class
  // and priority, told the same text: Pass::SkippedAsGroup). gus's, new, is judged on its own.
  const JobId frank = Submit(Spec("frank", "v2-8", true), 4);
  Tick(4);
  EXPECT_EQ(Job(frank).state, S::kPlaced);
  const int64_t before = skipped();
  Submit(Spec("gus", "v2-32", false), 5);
  Tick(5);
  EXPECT_EQ(skipped(), before + 3) << "frank's job could be evicted for carl's";
  EXPECT_EQ(Job(erin).state, S::kQueued);
  for (JobId c : carl) EXPECT_EQ(Job(c).state, S::kQueued);
}

// After a lease changes the memos fail and every blocked job is judged again, but a job told the
// text it was told before is not read (QueuedRef::told: its copy of the reason is a cache miss
// per job, issue 29). A reason changed in between (a quota, here) makes the job's text read and
// written again when it comes back. check_pass_memos (DefaultConfig) checks every such job's
// reason against the text.
TEST_F(SchedulerTest, AJobToldTheSameReasonAgainIsNotReadAndAnyOtherReasonIsForgotten) {
  SchedulerConfig config = DefaultConfig();
  config.default_quota = Quota{1000, 1000};
  Start(4, 4, config);
  std::vector<JobId> ada;  // on-demand: never a victim
  for (int i = 0; i < 16; ++i) ada.push_back(Submit(Spec("ada", "v2-8", false), 0));
  Tick(0);
  std::vector<JobId> carl;
  for (int i = 0; i < 3; ++i) carl.push_back(Submit(Spec("carl", "v2-32", false), 1 + i * 0.1));
  Tick(1.5);
  const std::string no_block = "no free 2x2 block of hosts";
  for (JobId c : carl) EXPECT_EQ(Job(c).reason, no_block);
  const auto known = [&] { return sched_->stats().told_known; };
  EXPECT_EQ(known(), 0) << "the first time, every job is told";

  // One of ada's jobs ends (no 2x2 block frees): the leases changed, so every blocked job is
  // judged again, and each is told the text it has.
  Exited(ada[0], ExitKind::kSucceeded, 2);
  Tick(2);
  EXPECT_EQ(known(), 3);
  for (JobId c : carl) EXPECT_EQ(Job(c).reason, no_block);

  // carl's quota drops below a v2-32: Filter's reason replaces the text.
  ASSERT_TRUE(sched_->SetQuota(UserName("carl"), Quota{16, 16}, At(3)).ok());
  Tick(3);
  for (JobId c : carl) EXPECT_TRUE(Job(c).reason.starts_with("quota: ")) << Job(c).reason;
  // It comes back: the text must be written again, not assumed.
  ASSERT_TRUE(sched_->SetQuota(UserName("carl"), Quota{1000, 1000}, At(4)).ok());
  Tick(4);
  for (JobId c : carl) EXPECT_EQ(Job(c).reason, no_block);
  EXPECT_EQ(known(), 3) << "their reasons were read and written again";
  Exited(ada[1], ExitKind::kSucceeded, 5);
  Tick(5);
  EXPECT_EQ(known(), 6);
  for (JobId c : carl) EXPECT_EQ(Job(c).reason, no_block);
}

// FIFO behind a large head: a pass reads only the jobs behind the head whose reason may change
// (new ones, and those of a user whose counts changed) and skips the others unread (StrictTail,
// issue 29). Every unread skip is checked against a full evaluation (check_pass_memos), and a
// head further back in the queue makes the pass read them all again.
TEST_F(SchedulerTest, FifoReadsOnlyTheJobsBehindTheHeadWhoseReasonMayChange) {
  SchedulerConfig config = DefaultConfig();
  config.profile = "fifo-first-fit";
  config.default_quota = Quota{1000, 1000};
  Start(4, 4, config);
  std::vector<JobId> ada;
  for (int i = 0; i < 15; ++i) ada.push_back(Submit(Spec("ada", "v2-8", false), 0));
  const JobId dave_running = Submit(Spec("dave", "v2-8", false), 0);
  Tick(0);
  ASSERT_TRUE(sched_->SetQuota(UserName("dave"), Quota{8, 8}, At(0.5)).ok());
  const JobId head = Submit(Spec("bob", "v2-32", false), 1);
  std::vector<JobId> carl, dave;
  for (int i = 0; i < 3; ++i) carl.push_back(Submit(Spec("carl", "v2-8", false), 1.1 + i * 0.1));
  for (int i = 0; i < 2; ++i) dave.push_back(Submit(Spec("dave", "v2-8", false), 1.5 + i * 0.1));
  Tick(2);
  const std::string behind = "waiting for earlier jobs to start (FIFO order)";
  const auto unread = [&] { return sched_->stats().skipped_unread; };
  EXPECT_EQ(unread(), 0) << "the first pass with this head reads every job behind it";
  EXPECT_EQ(Job(head).reason, "no free 2x2 block of hosts");
  for (JobId c : carl) EXPECT_EQ(Job(c).reason, behind);
  for (JobId d : dave) EXPECT_EQ(Job(d).reason, "quota: 8/8 on-demand cores in use");

  // A new job: only it is read behind the head.
  const JobId erin = Submit(Spec("erin", "v2-8", false), 3);
  Tick(3);
  EXPECT_EQ(unread(), 3 + 2);
  EXPECT_EQ(Job(erin).reason, behind);

  // dave's running job ends: his counts changed, so his queued jobs are read (and told they are
  // behind now); carl's and erin's are not. The free host is not for them: strict order.
  Exited(dave_running, ExitKind::kSucceeded, 4);
  Tick(4);
  EXPECT_EQ(unread(), 5 + 4);
  for (JobId d : dave) {
    EXPECT_EQ(Job(d).state, S::kQueued);
    EXPECT_EQ(Job(d).reason, behind);
  }

  // More quota for dave: his jobs are still behind, and not read again (his headroom grew).
  ASSERT_TRUE(sched_->SetQuota(UserName("dave"), Quota{16, 8}, At(4.5)).ok());
  Tick(4.5);
  EXPECT_EQ(unread(), 9 + 6);

  // Less quota for carl: his jobs are read, and filtered; erin's and dave's are not read.
  ASSERT_TRUE(sched_->SetQuota(UserName("carl"), Quota{0, 8}, At(5)).ok());
  Tick(5);
  EXPECT_EQ(unread(), 15 + 3);
  for (JobId c : carl) EXPECT_NE(Job(c).reason, behind) << Job(c).reason;
  EXPECT_EQ(Job(erin).reason, behind);

  // Less quota for erin, still enough for her job: her headroom shrank, but not below the cores
  // her job behind the head asks, so it is not read. Then too little: it is read, and filtered;
  // and with the quota back, read again and behind.
  ASSERT_TRUE(sched_->SetQuota(UserName("erin"), Quota{8, 8}, At(5.2)).ok());
  Tick(5.2);
  EXPECT_EQ(unread(), 18 + 6);
  EXPECT_EQ(Job(erin).reason, behind);
  ASSERT_TRUE(sched_->SetQuota(UserName("erin"), Quota{0, 8}, At(5.4)).ok());
  Tick(5.4);
  EXPECT_EQ(unread(), 24 + 5);
  EXPECT_NE(Job(erin).reason, behind) << Job(erin).reason;
  ASSERT_TRUE(sched_->SetQuota(UserName("erin"), Quota{8, 8}, At(5.6)).ok());
  Tick(5.6);
  EXPECT_EQ(unread(), 29 + 5);
  EXPECT_EQ(Job(erin).reason, behind);

  // The head leaves: dave's first job takes the free host, and his second is the new head.
  ASSERT_TRUE(sched_->Cancel(head, At(6)).has_value());
  Tick(6);
  EXPECT_EQ(Job(dave[0]).state, S::kPlaced);
  EXPECT_EQ(Job(dave[1]).reason, "no free host");
  EXPECT_EQ(Job(erin).reason, behind);
}

TEST_F(SchedulerTest, QuotaWaitsWithReasonAndUsageIsQueryable) {
  Start(4, 4);
  std::vector<JobId> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(Submit(Spec("ada", "v2-8", false), i));
  Tick(10);
  EXPECT_EQ(sched_->UsageOf(UserName("ada")).on_demand_cores, 40);
  EXPECT_EQ(Job(ids[5]).state, S::kQueued);
  EXPECT_EQ(Job(ids[5]).reason, "quota: 40/40 on-demand cores in use");
  // Preemptible quota is separate.
  JobId cheap = Submit(Spec("ada", "v2-8", true), 11);
  Tick(12);
  EXPECT_EQ(Job(cheap).state, S::kPlaced);
  // A job larger than the quota can never run: rejected at submit.
  auto big = sched_->Submit(Spec("ada", "v2-128", false), At(13));
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(big.error().message().find("quota of ada is 40"), std::string::npos);
  // Freeing a slot or raising the quota lets the waiting job run.
  ASSERT_TRUE(sched_->SetQuota(UserName("ada"), Quota{48, 800}, At(14)).ok());
  Tick(15);
  EXPECT_EQ(Job(ids[5]).state, S::kPlaced);
  EXPECT_EQ(sched_->QuotaOf(UserName("ada")).on_demand_cores, 48);
}

TEST_F(SchedulerTest, FairShareOrdersLightUsersFirst) {
  Start(1, 1);
  JobId heavy_run = Submit(Spec("heavy", "v2-8", false), 0);
  Tick(0);
  Exited(heavy_run, ExitKind::kSucceeded, 36000);  // 10 hours on 8 cores
  JobId blocker = Submit(Spec("other", "v2-8", false), 36000);
  Tick(36000);
  JobId heavy = Submit(Spec("heavy", "v2-8", false), 36001);
  JobId light = Submit(Spec("light", "v2-8", false), 36002);
  Tick(36003);
  EXPECT_GT(sched_->FairShareUsage(UserName("heavy"), At(36003)), 70.0);
  Exited(blocker, ExitKind::kSucceeded, 36004);
  Tick(36004);
  EXPECT_EQ(Job(light).state, S::kPlaced);  // submitted later, but its user used less
  EXPECT_EQ(Job(heavy).state, S::kQueued);
}

TEST_F(SchedulerTest, FifoProfileIgnoresFairShare) {
  SchedulerConfig config = DefaultConfig();
  config.profile = "fifo-first-fit";
  Start(1, 1, config);
  JobId heavy_run = Submit(Spec("heavy", "v2-8", false), 0);
  Tick(0);
  Exited(heavy_run, ExitKind::kSucceeded, 36000);
  JobId blocker = Submit(Spec("other", "v2-8", false), 36000);
  Tick(36000);
  JobId heavy = Submit(Spec("heavy", "v2-8", false), 36001);
  Submit(Spec("light", "v2-8", false), 36002);
  Exited(blocker, ExitKind::kSucceeded, 36004);
  Tick(36004);
  EXPECT_EQ(Job(heavy).state, S::kPlaced);
}

TEST_F(SchedulerTest, MaxRuntimeStopsTheJobGracefullyAndEndsItFailed) {
  Start(1, 1);
  JobSpec spec = Spec("ada", "v2-8", true);
  spec.max_runtime = std::chrono::hours(1);
  JobId id = Submit(spec, 0);
  ASSERT_EQ(Only<LaunchPlan>(Tick(0)).size(), 1u);
  // A manual preemption after 30 minutes: requeued, 30 minutes of the limit left.
  ASSERT_TRUE(sched_->Preempt(id, "manual", At(1800)).has_value());
  Exited(id, ExitKind::kPreempted, 1810);
  EXPECT_EQ(Job(id).state, S::kQueued);
  ASSERT_EQ(Only<LaunchPlan>(Tick(1900)).size(), 1u);
  EXPECT_TRUE(Only<PreemptAction>(Tick(1900 + 1779)).empty());
  // 1810 s held in epoch 1 + 1790 s in epoch 2 = the hour: SIGTERM with the grace period.
  auto preempts = Only<PreemptAction>(Tick(1900 + 1790));
  ASSERT_EQ(preempts.size(), 1u);
  EXPECT_EQ(preempts[0].reason, "max_runtime of 3600 s reached");
  Exited(id, ExitKind::kPreempted, 1900 + 1800);
  EXPECT_EQ(Job(id).state, S::kFailed);
  EXPECT_EQ(Job(id).reason, "max_runtime of 3600 s reached");
  EXPECT_EQ(sched_->fleet().AvailableHosts(), 1);
  EXPECT_TRUE(Only<LaunchPlan>(Tick(4000)).empty());  // never requeued past its limit
}

TEST_F(SchedulerTest, MaxRuntimeSurvivesARestart) {
  Start(1, 1);
  JobSpec spec = Spec("ada", "v2-8", false);
  spec.max_runtime = std::chrono::minutes(10);
  JobId id = Submit(spec, 0);
  ASSERT_EQ(Only<LaunchPlan>(Tick(0)).size(), 1u);
  auto empty = pod::Pod::Create("test", pod::Generation::kV2, 1, 1);
  auto restored = Scheduler::Create(std::move(*empty), DefaultConfig(), &repo_, At(60));
  ASSERT_TRUE(restored.has_value()) << restored.error().ToString();
  EXPECT_TRUE(Only<PreemptAction>((*restored)->Tick(At(599))).empty());
  auto preempts = Only<PreemptAction>((*restored)->Tick(At(600)));
  ASSERT_EQ(preempts.size(), 1u);
  ASSERT_TRUE((*restored)
                  ->ReportExited(JobEpoch{id, 1}, std::nullopt, ExitKind::kKilled, "", At(631))
                  .has_value());
  EXPECT_EQ((*restored)->Find(id)->state, S::kFailed);
}

TEST_F(SchedulerTest, RestoreRebuildsTheSameState) {
  Start(2, 2);
  JobId a = Submit(Spec("ada", "v2-8", false), 0);
  Submit(Spec("bob", "v2-32", false), 1);
  JobId c = Submit(Spec("bob", "v2-8", true), 2);
  Tick(3);
  Progress(a, 5, 5, 4);
  ASSERT_TRUE(sched_->Preempt(c, "", At(5)).has_value());
  auto again = Scheduler::Create(sched_->fleet(), DefaultConfig(), &repo_, At(6));
  // The copied pod already holds the allocations: rebuild on an empty pod instead.
  EXPECT_FALSE(again.has_value());
  auto empty = pod::Pod::Create("test", pod::Generation::kV2, 2, 2);
  auto restored = Scheduler::Create(std::move(*empty), DefaultConfig(), &repo_, At(6));
  ASSERT_TRUE(restored.has_value()) << restored.error().ToString();
  EXPECT_EQ((*restored)->jobs(), sched_->jobs());
  EXPECT_EQ((*restored)->fleet().AllocatedHosts(), sched_->fleet().AllocatedHosts());
  EXPECT_EQ((*restored)->UsageOf(UserName("bob")).preemptible_cores, 8);
}

// Audit M11: the pod changed under stored jobs. Ended jobs it cannot place are quarantined and
// the scheduler starts; an active one stops the start, named, for its work is still owed.
TEST_F(SchedulerTest, APodChangeQuarantinesEndedJobsAndRefusesActiveOnes) {
  Start(4, 4);
  JobId big = Submit(Spec("ada", "v2-32", false), 0);  // 2x2 hosts: only on the old pod
  JobId small = Submit(Spec("ada", "v2-8", false), 1);
  ASSERT_TRUE(sched_->Cancel(big, At(2)).has_value());
  auto smaller = pod::Pod::Create("test", pod::Generation::kV2, 1, 1);
  auto restored = Scheduler::Create(std::move(*smaller), DefaultConfig(), &repo_, At(3));
  ASSERT_TRUE(restored.has_value()) << restored.error().ToString();
  ASSERT_EQ((*restored)->quarantined().size(), 1u);
  EXPECT_EQ((*restored)->quarantined()[0].id, big);
  EXPECT_NE((*restored)->quarantined()[0].reason.find("CANCELLED"), std::string::npos);
  EXPECT_EQ((*restored)->Find(big), nullptr);
  EXPECT_EQ((*restored)->Find(small)->state, S::kQueued);
  EXPECT_EQ(*(*restored)->Submit(Spec("ada", "v2-8", false), At(4)), JobId(small.value() + 1));
}

TEST_F(SchedulerTest, APodChangeRefusesToStartUnderAnActiveJobItCannotPlace) {
  Start(4, 4);
  JobId queued_big = Submit(Spec("ada", "v2-32", false), 5);
  auto again = pod::Pod::Create("test", pod::Generation::kV2, 1, 1);
  auto refused = Scheduler::Create(std::move(*again), DefaultConfig(), &repo_, At(6));
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message().find("job " + std::to_string(queued_big.value())),
            std::string::npos)
      << refused.error().message();
}

}  // namespace
}  // namespace podsched::core
