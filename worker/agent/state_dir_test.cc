#include "worker/agent/state_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "worker/agent/owner_removal.h"

namespace podsched::agent {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class StateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/podsched-state-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

// Waits for the removals RemoveJobDirs queued as the owner (and any `rm` they started).
void ReapChildren() {
  OwnerRemovals::Get().WaitIdle();
  while (::waitpid(-1, nullptr, 0) > 0) {
  }
}

// The audit's L1: an owner empties its jobs/J.E/hH but cannot unlink it from the root-owned
// J.E, so every job left its directories behind. A later call rmdirs them; a live job's empty
// directories stay.
TEST_F(StateDirTest, AnEndedJobsDirectoriesAreGoneAfterTheNextRemoval) {
  if (::geteuid() != 0) GTEST_SKIP() << "switching to another account needs root";
  JobAccount owner;
  owner.name = "nobody";
  owner.uid = owner.gid = kOverflowUid;
  owner.groups = {kOverflowUid};
  fs::permissions(root_, fs::perms(0711));  // as the agent's state dir: the owner reaches hH
  StateDir state(root_.string());
  ASSERT_TRUE(state.Open().ok());
  const JobEpoch ended{JobId(1), 1}, live{JobId(2), 1}, next{JobId(3), 1};
  for (const JobEpoch& je : {ended, live, next}) {
    ASSERT_TRUE(state.CreateJobDirs(je, {0, 1}, &owner).ok());
  }
  std::ofstream(state.HostDir(ended, 0) + "/out.txt") << "written by the job\n";
  const fs::path ended_dir = fs::path(state.HostDir(ended, 0)).parent_path();
  state.RemoveJobDirs(ended, &owner);
  ReapChildren();
  EXPECT_FALSE(fs::exists(state.HostDir(ended, 0) + "/out.txt"));
  state.RemoveJobDirs(next, &owner);
  ReapChildren();
  EXPECT_FALSE(fs::exists(ended_dir)) << "jobs/1.1 (with its hH) is left behind";
  EXPECT_TRUE(fs::exists(state.HostDir(live, 0))) << "a live job's empty directory went";
  EXPECT_TRUE(fs::exists(state.HostDir(live, 1) + "/ompi"));
}

// The audit's L2: a killed agent's job directories and spool files stayed for ever. At the next
// start every jobs/J.E goes (each hH with its owner's rights: a planted link is the owner's
// own problem), and so do the spool files; the rest of the state dir stays.
TEST_F(StateDirTest, ARestartRemovesWhatAKilledRunLeftOnDisk) {
  if (::geteuid() != 0) GTEST_SKIP() << "switching to another account needs root";
  JobAccount owner;
  owner.name = "nobody";
  owner.uid = owner.gid = kOverflowUid;
  owner.groups = {kOverflowUid};
  fs::permissions(root_, fs::perms(0711));
  {
    StateDir killed(root_.string());
    ASSERT_TRUE(killed.Open().ok());
    for (int64_t job : {4, 5}) {
      ASSERT_TRUE(killed.CreateJobDirs({JobId(job), 1}, {0, 1}, &owner).ok());
    }
    ASSERT_TRUE(killed.CreateJobDirs({JobId(6), 2}, {3}, nullptr).ok());  // the agent's own
    std::ofstream(killed.HostDir({JobId(4), 1}, 0) + "/out.txt") << "the job's\n";
    ASSERT_TRUE(killed.WriteAtomically(killed.PreemptFile({JobId(5), 1}, 1), "123\n").ok());
  }
  std::ofstream(root_ / "job-4-epoch-1.log") << "spooled output\n";
  std::ofstream(root_ / "notes") << "not the agent's to judge\n";
  StateDir restarted(root_.string());
  ASSERT_TRUE(restarted.Open().ok());
  EXPECT_EQ(restarted.RemoveLeftovers(), 4);  // 3 epochs and 1 spool file
  ReapChildren();
  restarted.RmdirEmptied();
  EXPECT_FALSE(fs::exists(root_ / "job-4-epoch-1.log"));
  EXPECT_TRUE(fs::exists(root_ / "jobs"));
  EXPECT_TRUE(fs::is_empty(root_ / "jobs")) << fs::directory_iterator(root_ / "jobs")->path();
  EXPECT_EQ(Read(root_ / "notes"), "not the agent's to judge\n");
  EXPECT_EQ(restarted.RemoveLeftovers(), 0);
}

// The audit's C1: the root agent wrote the preemption notice through `<file>.tmp` in the job's
// own directory, following a symlink the job planted (root overwrote any file) or blocking on a
// FIFO. Whatever sits at the temp name now, the write neither follows nor blocks.
TEST_F(StateDirTest, WriteAtomicallyNeverFollowsALinkOrOpensAFifo) {
  StateDir state((root_ / "state").string());
  ASSERT_TRUE(state.Open().ok());
  const fs::path victim = root_ / "victim";
  std::ofstream(victim) << "precious\n";
  const fs::path file = root_ / "notice";
  fs::create_symlink(victim, root_ / "notice.tmp");
  ASSERT_TRUE(state.WriteAtomically(file.string(), "123\n").ok());
  EXPECT_EQ(Read(victim), "precious\n");
  EXPECT_EQ(Read(file), "123\n");
  EXPECT_FALSE(fs::is_symlink(file));

  ASSERT_EQ(::mkfifo((root_ / "notice.tmp").c_str(), 0600), 0);
  ASSERT_TRUE(state.WriteAtomically(file.string(), "456\n").ok());  // returns: no reader needed
  EXPECT_EQ(Read(file), "456\n");
}

// The notice lives beside the job's host directory, in the epoch directory the job cannot
// write, not inside a directory of the job's.
TEST_F(StateDirTest, ThePreemptionNoticeIsOutsideTheJobsDirectories) {
  StateDir state((root_ / "state").string());
  const JobEpoch je{JobId(7), 2};
  const fs::path notice = state.PreemptFile(je, 3);
  const fs::path host = state.HostDir(je, 3);
  EXPECT_EQ(notice.parent_path(), host.parent_path());
  EXPECT_EQ(notice.filename(), "h3.preempt");
  ASSERT_TRUE(state.CreateJobDirs(je, {3}, nullptr).ok());
  ASSERT_TRUE(state.WriteAtomically(notice.string(), "1\n").ok());
  state.RemoveJobDirs(je, nullptr);
  EXPECT_FALSE(fs::exists(notice.parent_path()));
}

TEST_F(StateDirTest, AnOwnedDirectoryIsNeverASymlink) {
  fs::create_directories(root_ / "elsewhere");
  fs::create_symlink(root_ / "elsewhere", root_ / "link");
  Status s = StateDir::CreateOwnedBelow(root_.string(), (root_ / "link").string(), nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is not a directory"), std::string::npos) << s.message();
  EXPECT_TRUE(StateDir::CreateOwnedBelow(root_.string(), (root_ / "mine").string(), nullptr).ok());
}

// The audit's H5: a running job's TMPDIR keeps its mtime while the job fills subdirectories,
// and the sweep removed it once that mtime was older than the keep period.
TEST_F(StateDirTest, TheSweepSparesTheScratchOfLiveJobs) {
  const fs::path scratch = root_ / "scratch";
  const fs::path live = scratch / "alice" / "job-1.1-h0";
  const fs::path kept = scratch / "alice" / "job-2.1-h0";
  fs::create_directories(live / "cache");
  fs::create_directories(kept);
  const int64_t later = ::time(nullptr) + 3600;  // both older than the threshold
  EXPECT_EQ(StateDir::SweepScratch(scratch.string() + "/", later, {live.string()}), 1);
  EXPECT_TRUE(fs::exists(live / "cache"));
  ReapChildren();  // the removal as the owner (the removal thread, or at once without root)
  EXPECT_FALSE(fs::exists(kept));
}

}  // namespace
}  // namespace podsched::agent
