// ProcessTable against real processes: what a scan keeps when the walk of /proc misses one.
#include "worker/agent/process_tree.h"

#include <sys/resource.h>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "worker/agent/child.h"
#include "worker/agent/tagged_child_for_test.h"

namespace podsched::agent {
namespace {

// Scans until a `sleep` child of `parent` shows (at most 5 s); its pid, 0 when it never did.
pid_t ScanUntilSleepUnder(ProcessTable& table, pid_t parent) {
  for (int i = 0; i < 5000; ++i) {
    usleep(1000);
    table.Scan();
    for (const auto& [pid, p] : table.processes()) {
      if (p.info.ppid == parent && p.info.comm == "sleep") return pid;
    }
  }
  return 0;
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

// Audit M12: a scan reads only the head of an environment. A tag behind a large variable is
// not seen there; SpawnChild puts it first, so the agent's own children are always found.
TEST_F(ProcessTableTest, OnlyTheHeadOfAnEnvironmentIsReadAndSpawnChildPutsTheTagThere) {
  const std::string big = "AAAA_BIG=" + std::string(kMaxEnvironRead + 1024, 'x');
  const std::string tag = std::string(kTagVariable) + "=7:3:1:0";
  const pid_t behind = fork();
  if (behind == 0) {
    char* const argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("60"), nullptr};
    char* const envp[] = {const_cast<char*>(big.c_str()), const_cast<char*>(tag.c_str()), nullptr};
    execve(argv[0], argv, envp);
    _exit(127);
  }
  children_.push_back(behind);
  WaitForExec(behind);
  auto child = SpawnChild({"/bin/sleep", "60"}, {big, tag});  // in this order, as given
  ASSERT_TRUE(child.has_value()) << child.error().ToString();
  children_.push_back(child->pid);
  close(child->stdout_fd);
  close(child->stderr_fd);
  WaitForExec(child->pid);
  ProcessTable table;
  table.Scan();
  ASSERT_TRUE(table.processes().contains(behind));
  EXPECT_EQ(table.processes().at(behind).tag, "") << "a tag 65 KiB down is not read";
  ASSERT_TRUE(table.processes().contains(child->pid));
  EXPECT_EQ(table.processes().at(child->pid).tag, "7:3:1:0");
  EXPECT_EQ(table.processes().at(child->pid).rank, 0);
}

// Audit M12: the agent protects itself from the OOM killer; its children go back to the
// default score. (Raising a score needs no privilege, so this runs anywhere: the agent at +500
// stands for the agent at -900.)
TEST_F(ProcessTableTest, SpawnedChildrenGetTheDefaultOomScore) {
  auto read_oom = [](pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/oom_score_adj");
    int score = -1;
    in >> score;
    return score;
  };
  const pid_t self = getpid();
  const int saved = read_oom(self);
  std::ofstream("/proc/self/oom_score_adj") << 500 << std::flush;
  ASSERT_EQ(read_oom(self), 500);
  auto child = SpawnChild({"/bin/sleep", "60"}, {"PATH=/bin"});
  ASSERT_TRUE(child.has_value()) << child.error().ToString();
  children_.push_back(child->pid);
  close(child->stdout_fd);
  close(child->stderr_fd);
  WaitForExec(child->pid);
  EXPECT_EQ(read_oom(child->pid), 0);
  std::ofstream("/proc/self/oom_score_adj") << saved << std::flush;  // may stay 500 unprivileged
}

// The old unit's LimitMEMLOCK=infinity reached every job; now a child's is at most 64 MiB.
TEST_F(ProcessTableTest, SpawnedChildrenGetABoundedMemlock) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &saved), 0);
  const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
  if (setrlimit(RLIMIT_MEMLOCK, &unlimited) != 0) {
    GTEST_SKIP() << "raising RLIMIT_MEMLOCK needs CAP_SYS_RESOURCE";
  }
  auto child = SpawnChild({"/bin/sleep", "60"}, {"PATH=/bin"});
  setrlimit(RLIMIT_MEMLOCK, &saved);
  ASSERT_TRUE(child.has_value()) << child.error().ToString();
  children_.push_back(child->pid);
  close(child->stdout_fd);
  close(child->stderr_fd);
  WaitForExec(child->pid);
  std::ifstream limits("/proc/" + std::to_string(child->pid) + "/limits");
  std::string line, memlock;
  while (std::getline(limits, line)) {
    if (line.starts_with("Max locked memory")) memlock = line;
  }
  EXPECT_EQ(memlock.find("unlimited"), std::string::npos) << memlock;
  EXPECT_NE(memlock.find(std::to_string(kChildMemlockBytes) + " "), std::string::npos) << memlock;
}

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
  const pid_t child = ScanUntilSleepUnder(table, rank);
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

// Audit M1: the tag is a process's own claim. A child that sets another job's tag is, when the
// trust rule refuses it (the agent's: that job runs as another uid), no rank of that job but a
// process of its parent's, and dies with it.
TEST_F(ProcessTableTest, ATagTheTrustRuleRefusesIsTheParentsNotARank) {
  const pid_t rank = SpawnTagged(
      "7:3:1:0", {"/bin/sh", "-c", "env PODWORKER_TAG=9:1:4:0 /bin/sleep 60 & wait"});
  children_.push_back(rank);
  ProcessTable table;
  std::map<pid_t, std::pair<std::string, uint32_t>> asked;  // by pid: the tag and real uid
  table.set_tag_trust([&](pid_t pid, std::string_view tag, uint32_t uid) {
    asked[pid] = {std::string(tag), uid};
    return tag.starts_with("7:");  // job 9 "runs as another account"
  });
  const pid_t decoy = ScanUntilSleepUnder(table, rank);
  ASSERT_NE(decoy, 0) << "the decoy never showed";
  // Inside execve the new name shows before the new environment (and before that the pid was
  // `env`, with the shell's tag): scan until the decoy's own tag has been read, and so judged
  // (a CI run caught it in between).
  auto judged = [&] { return asked.contains(decoy) && asked.at(decoy).first == "9:1:4:0"; };
  for (int i = 0; i < 5000 && !judged(); ++i) {
    usleep(1000);
    table.Scan();
  }
  ASSERT_TRUE(judged()) << "the rule was never asked about the decoy's own tag";
  EXPECT_EQ(asked.at(decoy).second, ::getuid()) << "the rule is asked with the real uid";
  table.Scan();
  EXPECT_EQ(table.processes().at(rank).tag, "7:3:1:0");
  EXPECT_TRUE(table.IsRank(rank));
  EXPECT_EQ(table.processes().at(decoy).tag, "7:3:1:0") << "its parent's job, not job 9";
  EXPECT_FALSE(table.IsRank(decoy));
  kill(decoy, SIGKILL);
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
