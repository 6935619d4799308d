// ProcessTable against real processes: what a scan keeps when the walk of /proc misses one.
#include "worker/agent/process_tree.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

namespace podsched::agent {
namespace {

// A child that runs `argv` with a job's tag, as `podworker rank` leaves one.
pid_t SpawnTagged(const std::string& tag, std::vector<std::string> argv) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string env = std::string(kTagVariable) + "=" + tag;
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    char* const envp[] = {const_cast<char*>(env.c_str()), nullptr};
    execve(args[0], args.data(), envp);
    _exit(127);
  }
  return pid;
}

// Whether execve is over: the new name shows first, the new environment later.
bool ExecDone(pid_t pid) {
  auto info = ReadProc(pid);
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ");
  return info && info->comm == "sleep" && in.get() != std::ifstream::traits_type::eof();
}

void WaitForExec(pid_t pid) {
  for (int i = 0; i < 5000 && !ExecDone(pid); ++i) usleep(1000);
  ASSERT_TRUE(ExecDone(pid)) << "pid " << pid << " never became sleep";
}

class ProcessTableTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (pid_t p : children_) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
  }
  pid_t Start(const std::string& tag, bool wait_for_exec = true) {
    const pid_t p = SpawnTagged(tag, {"/bin/sleep", "60"});
    children_.push_back(p);
    if (wait_for_exec) WaitForExec(p);
    return p;
  }
  std::vector<pid_t> children_;
};

TEST_F(ProcessTableTest, AWalkFindsTheDescendantsAndTheirTags) {
  const pid_t rank = Start("7:3:1:0");
  ProcessTable table;
  table.Scan();
  ASSERT_TRUE(table.processes().contains(rank));
  EXPECT_EQ(table.processes().at(rank).tag, "7:3:1:0");
  EXPECT_EQ(table.processes().at(rank).rank, 0);
  EXPECT_TRUE(table.IsRank(rank));
}

// The flake of agent_integration's KillEndsTheJobAtOnce and StaleEpochs tests: a scan inside
// the rank's execve saw its new name and an empty environ, cached it untagged, and never
// counted, killed or waited for it. Scans through an exec end with the tag, however they fall.
TEST_F(ProcessTableTest, ScansThroughAnExecEndWithTheTag) {
  for (int round = 0; round < 20; ++round) {
    const pid_t rank = Start("7:3:1:0", /*wait_for_exec=*/false);
    ProcessTable table;
    bool done = false;
    for (int i = 0; i < 100000 && !done; ++i) {
      done = ExecDone(rank);  // before the scan: the scan after it sees the finished exec
      table.ScanFrom({rank});
    }
    ASSERT_TRUE(done);
    ASSERT_TRUE(table.processes().contains(rank));
    EXPECT_EQ(table.processes().at(rank).tag, "7:3:1:0") << "round " << round;
    EXPECT_EQ(table.processes().at(rank).rank, 0);
  }
}

// A process that dropped its environment (env -i) under a rank is still the job's: it is
// found, waited for and killed with it, though it is not a rank.
TEST_F(ProcessTableTest, AnUntaggedChildBelongsToItsParentsJob) {
  const pid_t rank = SpawnTagged("7:3:1:0", {"/bin/sh", "-c", "env -i /bin/sleep 60 & wait"});
  children_.push_back(rank);
  ProcessTable table;
  pid_t child = 0;
  for (int i = 0; i < 5000 && child == 0; ++i) {
    usleep(1000);
    table.Scan();
    for (const auto& [pid, p] : table.processes()) {
      if (p.info.ppid == rank && p.info.comm == "sleep") child = pid;
    }
  }
  ASSERT_NE(child, 0) << "the shell's untagged sleep never showed";
  table.Scan();
  EXPECT_EQ(table.processes().at(rank).tag, "7:3:1:0");
  EXPECT_TRUE(table.IsRank(rank));
  EXPECT_EQ(table.processes().at(child).tag, "7:3:1:0");
  EXPECT_EQ(table.processes().at(child).rank, -1);
  EXPECT_TRUE(table.processes().at(child).inherited);
  EXPECT_FALSE(table.IsRank(child));
  kill(child, SIGKILL);
}

// A missed walk (see ScanFrom): a Kill, orted dying, its ranks reparented to the agent while
// the walk read neither list.
TEST_F(ProcessTableTest, AKnownProcessTheWalkMissedIsKeptWhileItLives) {
  const pid_t rank = Start("7:3:1:0");
  ProcessTable table;
  table.ScanFrom({rank});
  ASSERT_TRUE(table.processes().contains(rank));

  table.ScanFrom({});  // the walk missed it: it is still alive, still ours
  ASSERT_TRUE(table.processes().contains(rank));
  EXPECT_EQ(table.processes().at(rank).tag, "7:3:1:0");
  EXPECT_FALSE(table.processes().at(rank).info.zombie);

  kill(rank, SIGKILL);
  waitpid(rank, nullptr, 0);
  children_.clear();
  table.ScanFrom({});  // gone: dropped
  EXPECT_FALSE(table.processes().contains(rank));
}

TEST_F(ProcessTableTest, AProcessNeverWalkedIsNotAdopted) {
  const pid_t stranger = Start("7:3:1:0");
  ProcessTable table;
  table.ScanFrom({});
  EXPECT_FALSE(table.processes().contains(stranger));
}

// A zombie stays visible until reaped; it is not carried over once the walk drops it, and a
// zombie has no tag.
TEST_F(ProcessTableTest, AZombieIsNotKeptByTheTableAlone) {
  const pid_t rank = Start("7:3:1:0");
  ProcessTable table;
  table.ScanFrom({rank});
  kill(rank, SIGKILL);
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, rank, &info, WEXITED | WNOWAIT), 0);  // dead, not reaped
  table.ScanFrom({});
  ASSERT_TRUE(table.processes().contains(rank));
  EXPECT_TRUE(table.processes().at(rank).info.zombie);
  EXPECT_EQ(table.processes().at(rank).tag, "");
  table.ScanFrom({});
  EXPECT_FALSE(table.processes().contains(rank));
}

}  // namespace
}  // namespace podsched::agent
