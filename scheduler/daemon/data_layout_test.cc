#include "scheduler/daemon/data_layout.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace podsched::daemon {
namespace {

namespace fs = std::filesystem;

class DataLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/podsched-layout-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);  // as /tmp or a site's /srv: others may pass
    old_umask_ = ::umask(077);  // as podsched runs
  }
  void TearDown() override {
    ::umask(old_umask_);
    fs::remove_all(dir_);
  }
  static mode_t Mode(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  }
  static bool Mentions(const std::vector<std::string>& lines, const std::string& text) {
    for (const std::string& l : lines) {
      if (l.find(text) != std::string::npos) return true;
    }
    return false;
  }
  fs::path dir_;
  mode_t old_umask_ = 0;
};

TEST_F(DataLayoutTest, AFreshDataDirIsTraversableDownToTheUsersPrefixes) {
  const fs::path data = dir_ / "site" / "var";
  auto report = PrepareDataLayout(data.string(), "file://" + (data / "objects/checkpoints").string(),
                                  "file://" + (data / "objects/logs").string());
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->changed.empty());
  EXPECT_EQ(Mode(data / "objects/logs"), 0700u);
  for (const fs::path& p : {dir_ / "site", data, data / "objects", data / "objects/checkpoints",
                            data / "objects/checkpoints/users"}) {
    EXPECT_EQ(Mode(p), 0711u) << p;
  }
  // Idempotent: a second start changes nothing.
  auto again = PrepareDataLayout(data.string(), "file://" + (data / "objects/checkpoints").string(),
                                 "file://" + (data / "objects/logs").string());
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->changed.empty());
  EXPECT_TRUE(again->warnings.empty());
}

// The layout an earlier podsched made (everything 0700 under umask 077) and a database someone
// made readable: widened and narrowed, each said.
TEST_F(DataLayoutTest, AnEarlierPrivateLayoutIsWidenedAndPrivateFilesNarrowed) {
  const fs::path data = dir_ / "var";
  fs::create_directories(data / "objects/checkpoints/users");
  fs::create_directories(data / "objects/logs");
  ::chmod((data / "objects/logs").c_str(), 0755);  // as the root agent made it for a first log
  std::ofstream(data / "podsched.db") << "x";
  std::ofstream(data / "admin.token") << "t";
  ::chmod((data / "podsched.db").c_str(), 0644);
  ASSERT_EQ(Mode(data), 0700u);
  auto report = PrepareDataLayout(data.string(), "file://" + (data / "objects/checkpoints").string(),
                                  "file://" + (data / "objects/logs").string());
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(Mode(data), 0711u);
  EXPECT_EQ(Mode(data / "objects/checkpoints/users"), 0711u);
  EXPECT_EQ(Mode(data / "objects/logs"), 0700u);  // every user's logs: podsched's alone
  EXPECT_EQ(Mode(data / "podsched.db"), 0600u);
  EXPECT_EQ(Mode(data / "admin.token"), 0600u);
  EXPECT_TRUE(Mentions(report->changed, "widened " + data.string() + " from 0700 to 0711"));
  EXPECT_TRUE(Mentions(report->changed, "narrowed " + (data / "podsched.db").string()));
  EXPECT_TRUE(Mentions(report->changed, "narrowed " + (data / "objects/logs").string()));
}

TEST_F(DataLayoutTest, AnAdminsModeIsKeptAndAWarningSaysWhatItBlocks) {
  const fs::path data = dir_ / "var";
  fs::create_directories(data);
  ::chmod(data.c_str(), 0750);
  auto report = PrepareDataLayout(data.string(), "file://" + (data / "objects/checkpoints").string(),
                                  "");
  ASSERT_TRUE(report);
  EXPECT_EQ(Mode(data), 0750u);
  EXPECT_TRUE(Mentions(report->warnings, data.string() + " is mode 0750"));
}

// A file:// store elsewhere (a shared file system): podsched leaves it to the agents and the
// admin, and warns about an ancestor other accounts cannot pass.
TEST_F(DataLayoutTest, AStoreElsewhereIsCheckedNotMade) {
  const fs::path data = dir_ / "var";
  const fs::path closed = dir_ / "closed";
  fs::create_directories(closed / "store");
  ::chmod((closed / "store").c_str(), 0755);
  ::chmod(closed.c_str(), 0700);
  auto report = PrepareDataLayout(data.string(), "file://" + (closed / "store").string(), "");
  ASSERT_TRUE(report);
  EXPECT_FALSE(fs::exists(closed / "store/users"));
  EXPECT_TRUE(Mentions(report->warnings, closed.string() + " is mode 0700"));
  auto s3 = PrepareDataLayout(data.string(), "s3://bucket/ckpt", "s3://bucket/logs");
  ASSERT_TRUE(s3);
  EXPECT_FALSE(fs::exists(data / "objects"));
}

TEST_F(DataLayoutTest, ADataDirThatIsAFileIsAnError) {
  std::ofstream(dir_ / "file") << "x";
  auto report = PrepareDataLayout((dir_ / "file").string(), "", "");
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message().find("is not a directory"), std::string::npos);
}

}  // namespace
}  // namespace podsched::daemon
