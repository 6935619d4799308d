// JobProcesses against real child processes and a real state dir: which job a tagged process is
// counted for, which it is killed for, and what the record keeps.
#include "worker/agent/job_processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "worker/agent/tagged_child_for_test.h"

namespace podsched::agent {
namespace {

class JobProcessesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("job_processes_test." + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    ASSERT_TRUE(state_.Open().ok());
  }
  void TearDown() override {
    for (pid_t p : children_) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
    std::filesystem::remove_all(dir_);
  }
  pid_t Start(const std::string& tag) {
    const pid_t p = SpawnTagged(tag, {"/bin/sleep", "60"});
    children_.push_back(p);
    WaitForExec(p);
    return p;
  }
  std::string Recorded() const {
    std::ifstream in(dir_ / "processes");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static bool Contains(const std::vector<pid_t>& pids, pid_t p) {
    return std::find(pids.begin(), pids.end(), p) != pids.end();
  }

  std::filesystem::path dir_;
  StateDir state_{(std::filesystem::temp_directory_path() /
                   ("job_processes_test." + std::to_string(getpid())))
                      .string()};
  std::vector<pid_t> children_;
};

// The tag "JOB:EPOCH:HOST:RANK" puts a rank under its job, counted on its host, and recorded.
TEST_F(JobProcessesTest, ATaggedRankIsItsJobsOnItsHostAndRecorded) {
  const pid_t rank0 = Start("7:3:1:0");
  const pid_t rank1 = Start("7:3:2:1");
  JobProcesses processes(state_);
  JobProcesses::Found found =
      processes.Scan({{JobId(7), {.epoch = 3, .uid = std::nullopt}}, {JobId(8), {.epoch = 1, .uid = std::nullopt}}});
  ASSERT_TRUE(found.pids.contains(JobId(7)));
  EXPECT_TRUE(Contains(found.pids[JobId(7)], rank0));
  EXPECT_TRUE(Contains(found.pids[JobId(7)], rank1));
  EXPECT_TRUE(found.pids[JobId(8)].empty()) << "a running job with no process is listed empty";
  EXPECT_EQ((found.ranks_up[{JobId(7), 1}]), 1);
  EXPECT_EQ((found.ranks_up[{JobId(7), 2}]), 1);
  EXPECT_EQ(processes.RanksAmong({rank0, rank1, getpid()}), (std::vector<pid_t>{rank0, rank1}));
  EXPECT_NE(Recorded().find(std::to_string(rank0) + " "), std::string::npos) << Recorded();
  processes.ClearRecord();
  EXPECT_EQ(Recorded().find(std::to_string(rank0) + " "), std::string::npos) << Recorded();
}

// Never two epochs of one job: a process of an epoch that does not run here is killed at once,
// as is one of a job that does not run here at all.
TEST_F(JobProcessesTest, AProcessOfAnEpochNotRunningHereIsKilled) {
  const pid_t stale = Start("7:2:1:0");
  const pid_t other = Start("9:1:1:0");
  const pid_t current = Start("7:3:1:0");
  JobProcesses processes(state_);
  JobProcesses::Found found = processes.Scan({{JobId(7), {.epoch = 3, .uid = std::nullopt}}});
  EXPECT_EQ(found.pids[JobId(7)], std::vector<pid_t>{current});
  for (pid_t p : {stale, other}) {
    int status = 0;
    ASSERT_EQ(waitpid(p, &status, 0), p);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "pid " << p;
  }
  EXPECT_EQ(kill(current, 0), 0) << "the running epoch's process lives";
}

// Audit M1: a tag holds only for the account its job runs as. A process of another uid with the
// job's tag is not the job's (not counted, not a rank of it), and not killed for it either.
TEST_F(JobProcessesTest, ATagOfAnotherAccountsJobIsNotTaken) {
  const pid_t p = Start("7:3:1:0");
  JobProcesses processes(state_);
  JobProcesses::Found theirs = processes.Scan({{JobId(7), {.epoch = 3, .uid = getuid() + 1}}});
  EXPECT_TRUE(theirs.pids[JobId(7)].empty());
  EXPECT_FALSE(theirs.ranks_up.contains({JobId(7), 1}));
  EXPECT_EQ(kill(p, 0), 0);
  JobProcesses::Found mine = processes.Scan({{JobId(7), {.epoch = 3, .uid = getuid()}}});
  EXPECT_EQ(mine.pids[JobId(7)], std::vector<pid_t>{p});
}

// An rsh client gone: every process of that job's host, the session's (tagged JOB:EPOCH:HOST)
// and its ranks (JOB:EPOCH:HOST:RANK, in process groups of their own under orted), and nothing
// of another host.
TEST_F(JobProcessesTest, KillTaggedKillsOneHostsProcessesRanksIncluded) {
  const pid_t session = Start("7:3:1");
  const pid_t rank = Start("7:3:1:0");
  const pid_t host2 = Start("7:3:2:1");
  JobProcesses processes(state_);
  processes.Scan({{JobId(7), {.epoch = 3, .uid = std::nullopt}}});
  processes.KillTagged({JobId(7), 3}, 1);
  for (pid_t p : {session, rank}) {
    int status = 0;
    ASSERT_EQ(waitpid(p, &status, 0), p);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "pid " << p;
  }
  EXPECT_EQ(kill(host2, 0), 0);
}

}  // namespace
}  // namespace podsched::agent
