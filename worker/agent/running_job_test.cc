// RunningJob: what one epoch on this agent is, read from the Launch and what was found of it,
// with no process, pipe or socket.
#include "worker/agent/running_job.h"

#include <gtest/gtest.h>

#include <chrono>

namespace podsched::agent {
namespace {

using std::chrono::seconds;

bus::Launch LaunchOn(std::vector<int32_t> hosts, bus::Launch::Launcher launcher) {
  bus::Launch l;
  l.mutable_job()->set_job_id(7);
  l.mutable_job()->set_epoch(3);
  for (int32_t h : hosts) l.add_hosts(h);
  l.set_launcher(launcher);
  l.set_ranks_per_host(1);
  l.set_grace_seconds(30);
  l.set_rsh_token("secret");
  return l;
}

const MonotonicTime kT0{seconds(1000)};

TEST(RunningJobTest, TakesItsHostsOfTheSliceAndIsTheLauncherWithTheFirst) {
  const std::vector<int32_t> agent_hosts{2, 3, 5};
  RunningJob first(LaunchOn({5, 9, 2}, bus::Launch::MPI), agent_hosts, kT0, 0);
  EXPECT_EQ(first.je, (JobEpoch{JobId(7), 3}));
  EXPECT_EQ(first.my_hosts, (std::vector<int32_t>{2, 5}));
  EXPECT_TRUE(first.launcher);
  RunningJob remote(LaunchOn({9, 2}, bus::Launch::MPI), agent_hosts, kT0, 0);
  EXPECT_EQ(remote.my_hosts, std::vector<int32_t>{2});
  EXPECT_FALSE(remote.launcher);
}

// A multislice Launch names fleet ids: with the agent's pod at fleet id 64, its hosts 2 and 5 are
// 66 and 69; host 2 of another pod (fleet id 2) is not this agent's. Reports speak pod ids.
TEST(RunningJobTest, FleetIdsOfTheLaunchAreTheAgentsOwnFirstHostApart) {
  bus::Launch l = LaunchOn({2, 3, 66, 69}, bus::Launch::MPI);
  l.set_first_host(64);
  RunningJob job(l, {2, 3, 5}, kT0, 0);
  EXPECT_EQ(job.my_hosts, (std::vector<int32_t>{66, 69}));
  EXPECT_FALSE(job.launcher);
  EXPECT_EQ(job.Exit().hosts, (std::vector<int32_t>{2, 5}));
  job.ranks_up_hosts = {69};
  bus::RunningJob running;
  job.FillRunning(running);
  EXPECT_EQ(std::vector<int32_t>(running.hosts().begin(), running.hosts().end()),
            (std::vector<int32_t>{2, 5}));
  EXPECT_EQ(running.ranks_up_hosts(0), 5);
  EXPECT_EQ(job.Rsh().first_host, 64);
}

// The launcher ends once its process is reaped and nothing of the job is left here.
TEST(RunningJobTest, TheLauncherIsQuietOnlyOnceReapedWithNoProcessOrSession) {
  RunningJob job(LaunchOn({2}, bus::Launch::MPI), {2}, kT0, 0);
  job.pids = {1234};
  job.mpirun_reaped = true;
  EXPECT_FALSE(job.Quiet(false, kT0, seconds(10))) << "a process is left";
  job.pids.clear();
  EXPECT_FALSE(job.Quiet(true, kT0, seconds(10))) << "a session is open";
  job.mpirun_reaped = false;
  EXPECT_FALSE(job.Quiet(false, kT0, seconds(10))) << "mpirun is not reaped";
  job.mpirun_reaped = true;
  EXPECT_TRUE(job.Quiet(false, kT0, seconds(10)));
}

// A remote-only host waits for its sessions (mpirun's orted, one per host), a Kill or the start
// timeout: before any of these, "no process here" only means none came yet.
TEST(RunningJobTest, ARemoteHostIsQuietAfterItsSessionsAKillOrTheStartTimeout) {
  RunningJob job(LaunchOn({1, 2, 3}, bus::Launch::MPI), {2, 3}, kT0, 0);
  EXPECT_FALSE(job.Quiet(false, kT0 + seconds(5), seconds(10)));
  EXPECT_TRUE(job.Quiet(false, kT0 + seconds(11), seconds(10)));
  job.sessions_started = {{2, 1}};
  EXPECT_FALSE(job.Quiet(false, kT0 + seconds(5), seconds(10))) << "host 3 had none yet";
  job.sessions_started[3] = 1;
  EXPECT_TRUE(job.Quiet(false, kT0 + seconds(5), seconds(10)));

  RunningJob killed(LaunchOn({1, 2}, bus::Launch::MPI), {2}, kT0, 0);
  killed.life.Kill();
  EXPECT_TRUE(killed.Quiet(false, kT0 + seconds(5), seconds(10)));
}

TEST(RunningJobTest, TheLaunchersExitIsItsVerdictARemoteHostsARelease) {
  RunningJob launcher(LaunchOn({2, 3}, bus::Launch::MPI), {2}, kT0, 0);
  launcher.last_checkpoint_step = 40;
  launcher.mpirun_status = 3 << 8;  // exit code 3
  ExitReport failed = launcher.Exit();
  EXPECT_EQ(failed.reason, ExitReason::kFailed);
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.hosts, std::vector<int32_t>{2});
  EXPECT_EQ(failed.last_checkpoint_step, 40);
  launcher.mpirun_status = kPreemptedExitCode << 8;
  ASSERT_TRUE(launcher.life.Preempt(kT0, 30));
  EXPECT_EQ(launcher.Exit().reason, ExitReason::kPreempted);

  RunningJob remote(LaunchOn({2, 3}, bus::Launch::MPI), {3}, kT0, 0);
  EXPECT_EQ(remote.Exit().reason, ExitReason::kReleased);
  EXPECT_EQ(remote.Exit().message, "no process was started here");
  remote.sessions_started = {{3, 1}};
  remote.killed_for = "over --max-job-processes";
  EXPECT_EQ(remote.Exit().message, "processes gone (over --max-job-processes)");
}

// A failed epoch keeps its scratch; one the scheduler stopped did not fail.
TEST(RunningJobTest, OnlyAFailureNotAStopKeepsTheScratch) {
  RunningJob job(LaunchOn({2}, bus::Launch::EXEC), {2}, kT0, 0);
  EXPECT_FALSE(job.FailedHere());
  job.failed_here = true;  // an rsh session's command failed
  EXPECT_TRUE(job.FailedHere());
  job.failed_here = false;
  job.ended = ExitReport{};
  job.ended->reason = ExitReason::kFailed;
  EXPECT_TRUE(job.FailedHere());
  ASSERT_TRUE(job.life.Preempt(kT0, 30));
  EXPECT_FALSE(job.FailedHere());
}

TEST(RunningJobTest, TheRshServerSeesItsTokenHostsAndWhetherItTakesSessions) {
  RunningJob job(LaunchOn({2, 3}, bus::Launch::EXEC), {2, 3}, kT0, 0);
  job.sessions_started = {{2, 1}};
  RshJob rsh = job.Rsh();
  EXPECT_EQ(rsh.secret, "secret");
  EXPECT_EQ(rsh.hosts, (std::vector<int32_t>{2, 3}));
  EXPECT_FALSE(rsh.killing);
  EXPECT_EQ(rsh.sessions, job.sessions_started);
  job.ended = ExitReport{};
  EXPECT_TRUE(job.Rsh().killing) << "a job whose processes are gone takes no new session";
}

// --max-job-processes: the first scan over the limit says why, once.
TEST(RunningJobTest, OverTheProcessLimitOnceWithTheReason) {
  RunningJob job(LaunchOn({2}, bus::Launch::EXEC), {2}, kT0, 0);
  job.pids = {10, 11, 12};
  EXPECT_FALSE(job.OverProcessLimit(3));
  job.pids.push_back(13);
  EXPECT_TRUE(job.OverProcessLimit(3));
  EXPECT_EQ(job.killed_for, "podworker: the job had 4 processes on this machine, more than "
                            "--max-job-processes 3; killed");
  EXPECT_FALSE(job.OverProcessLimit(3)) << "already killed for it";
}

}  // namespace
}  // namespace podsched::agent
