// JobDirectories on a real file system, as the account this test runs as: what an epoch gets,
// what its end removes or keeps, and what the sweep removes later.
#include "worker/agent/job_directories.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "worker/agent/owner_removal.h"

namespace podsched::agent {
namespace {

namespace fs = std::filesystem;

JobAccount Me() {
  const passwd* pw = getpwuid(geteuid());
  JobAccount a;
  a.name = pw != nullptr ? pw->pw_name : "me";
  a.uid = geteuid();
  a.gid = getegid();
  a.groups = {a.gid};
  a.home = pw != nullptr ? pw->pw_dir : "/";
  return a;
}

// Removals as the owner run on the agent's removal thread (a deep tree's in an `rm` it starts):
// wait for them, then the path must be gone.
bool GoneAfterRemovals(const fs::path& p) {
  OwnerRemovals::Get().WaitIdle();
  while (::waitpid(-1, nullptr, 0) > 0) {
  }
  return !fs::exists(p);
}

class JobDirectoriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/podsched-jobdirs-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    state_ = std::make_unique<StateDir>((root_ / "state").string());
    ASSERT_TRUE(state_->Open().ok());
  }
  void TearDown() override {
    while (::waitpid(-1, nullptr, 0) > 0) {
    }
    fs::remove_all(root_);
  }
  fs::path root_;
  std::unique_ptr<StateDir> state_;
};

TEST_F(JobDirectoriesTest, AnEpochGetsItsDirectoriesAndAFailedOneKeepsItsScratchUntilTheSweep) {
  JobDirectories dirs(*state_, "", 3600);
  EXPECT_EQ(dirs.scratch_root(), (root_ / "state" / "scratch").string());
  const JobEpoch je{JobId(5), 2};
  const std::string ckpt = (root_ / "ckpt" / "alice").string();
  fs::create_directories(root_ / "ckpt");
  auto scratch = dirs.Prepare(je, {0, 1}, Me(), ckpt);
  ASSERT_EQ(scratch.size(), 2u);
  for (const auto& [host, dir] : scratch) {
    EXPECT_TRUE(fs::is_directory(dir)) << dir;
    EXPECT_TRUE(fs::is_directory(state_->HostDir(je, host)));
  }
  EXPECT_NE(scratch.at(0), scratch.at(1));
  EXPECT_TRUE(fs::is_directory(ckpt)) << "the user's checkpoint prefix";

  dirs.Remove(je, nullptr, scratch, /*failed=*/true);
  for (const auto& [host, dir] : scratch) EXPECT_TRUE(fs::is_directory(dir)) << "kept: " << dir;
  const int64_t now = ::time(nullptr);
  EXPECT_EQ(dirs.Sweep({}, now), 0) << "not yet past the keep period";
  EXPECT_EQ(dirs.Sweep({}, now + 2 * 3600), 2);
  for (const auto& [host, dir] : scratch) EXPECT_TRUE(GoneAfterRemovals(dir)) << dir;
}

TEST_F(JobDirectoriesTest, ASucceededEpochLeavesNoScratchAndTheSweepSparesLiveJobs) {
  JobDirectories dirs(*state_, (root_ / "scratch").string(), 3600);
  const JobEpoch done{JobId(6), 1}, live{JobId(7), 1}, failed{JobId(8), 1};
  auto done_scratch = dirs.Prepare(done, {3}, Me(), "");
  auto live_scratch = dirs.Prepare(live, {3}, Me(), "");
  auto failed_scratch = dirs.Prepare(failed, {3}, Me(), "");
  ASSERT_EQ(done_scratch.size(), 1u);
  ASSERT_EQ(live_scratch.size(), 1u);
  EXPECT_EQ(fs::path(done_scratch.at(3)).parent_path().parent_path(), root_ / "scratch");

  dirs.Remove(done, nullptr, done_scratch, /*failed=*/false);
  EXPECT_TRUE(GoneAfterRemovals(done_scratch.at(3)));
  dirs.Remove(failed, nullptr, failed_scratch, /*failed=*/true);
  // Both old enough; only the job that no longer runs here loses its scratch.
  EXPECT_EQ(dirs.Sweep({live_scratch.at(3) + "/"}, ::time(nullptr) + 2 * 3600), 1);
  EXPECT_TRUE(GoneAfterRemovals(failed_scratch.at(3)));
  EXPECT_TRUE(fs::is_directory(live_scratch.at(3)));
}

TEST_F(JobDirectoriesTest, WithoutAKeepPeriodAFailedEpochsScratchGoesAtOnce) {
  JobDirectories dirs(*state_, "", 0);
  const JobEpoch je{JobId(9), 1};
  auto scratch = dirs.Prepare(je, {0}, Me(), "");
  ASSERT_EQ(scratch.size(), 1u);
  dirs.Remove(je, nullptr, scratch, /*failed=*/true);
  EXPECT_TRUE(GoneAfterRemovals(scratch.at(0)));
}

// As root, an epoch's end removes its host directories and its scratch with the account's rights
// in one removal, on the agent's removal thread: no child process (each `rm` cost a host more
// CPU than a trivial job).
TEST_F(JobDirectoriesTest, AsRootOneRemovalAsTheOwnerTakesTheEpochsDirectoriesAndScratch) {
  if (::geteuid() != 0) GTEST_SKIP() << "switching to another account needs root";
  JobAccount nobody;
  nobody.name = "nobody";
  nobody.uid = nobody.gid = 65534;
  nobody.groups = {65534};
  fs::permissions(root_, fs::perms(0711));  // as the agent's state dir: the owner reaches hH
  JobDirectories dirs(*state_, (root_ / "scratch").string(), 0);
  const JobEpoch je{JobId(11), 1};
  auto scratch = dirs.Prepare(je, {0, 1}, nobody, "");
  ASSERT_EQ(scratch.size(), 2u);
  for (int32_t host : {0, 1}) {
    std::ofstream(state_->HostDir(je, host) + "/out") << "x";
    std::ofstream(scratch.at(host) + "/tmp") << "y";
  }
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  dirs.Remove(je, &nobody, scratch, /*failed=*/false);
  OwnerRemovals::Get().WaitIdle();
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "a child process removed them";
  for (int32_t host : {0, 1}) {
    EXPECT_FALSE(fs::exists(scratch.at(host))) << scratch.at(host);
    EXPECT_FALSE(fs::exists(state_->HostDir(je, host) + "/out"));
  }
  state_->RmdirEmptied();
  EXPECT_FALSE(fs::exists(fs::path(state_->HostDir(je, 0)).parent_path()))
      << "the emptied epoch directory goes at the next RmdirEmptied";
}

// POD_PREEMPT_FILE of each of the epoch's hosts holds the deadline, in the root-owned epoch
// directory (StateDir::PreemptFile), whole or not at all.
TEST_F(JobDirectoriesTest, APreemptionWritesEachHostsNoticeWithTheDeadline) {
  JobDirectories dirs(*state_, "", 0);
  const JobEpoch je{JobId(5), 2};
  dirs.Prepare(je, {0, 1}, Me(), "");
  dirs.WritePreemptNotices(je, {0, 1}, 1767225600);
  for (int32_t host : {0, 1}) {
    std::ifstream in(state_->PreemptFile(je, host));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "1767225600\n") << "host " << host;
  }
}

}  // namespace
}  // namespace podsched::agent
