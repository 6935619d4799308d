// Where the agent finds the helper binary its jobs run (HelperPath), on a real file system.
#include "worker/agent/child.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace podsched::agent {
namespace {

namespace fs = std::filesystem;

TEST(HelperPathTest, TheHelperBesideTheAgentWhenItRunsElseTheAgentItself) {
  char tmpl[] = "/tmp/podsched-helper-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  const std::string agent = (dir / "podworker").string();
  std::ofstream(agent) << "#!/bin/sh\n";
  EXPECT_EQ(HelperPath(agent), agent) << "no helper: the agent serves rsh, launch and rank";

  const fs::path helper = dir / "podworker-helper";
  std::ofstream(helper) << "#!/bin/sh\n";
  chmod(helper.c_str(), 0644);
  EXPECT_EQ(HelperPath(agent), agent) << "a helper that cannot run is not used";
  chmod(helper.c_str(), 0755);
  EXPECT_EQ(HelperPath(agent), helper.string());

  fs::remove(helper);
  fs::create_directory(helper);
  EXPECT_EQ(HelperPath(agent), agent) << "a directory of that name is no helper";
  fs::remove_all(dir);
}

TEST(HelperPathTest, RanksRunFromPodworkerRankBesideTheAgentElseFromTheHelper) {
  char tmpl[] = "/tmp/podsched-helper-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  const std::string agent = (dir / "podworker").string();
  std::ofstream(agent) << "#!/bin/sh\n";
  EXPECT_EQ(RankBinaryPath(agent), agent) << "neither: the agent serves launch and rank";
  const fs::path helper = dir / "podworker-helper";
  std::ofstream(helper) << "#!/bin/sh\n";
  chmod(helper.c_str(), 0755);
  EXPECT_EQ(RankBinaryPath(agent), helper.string()) << "no podworker-rank: the helper";
  const fs::path rank = dir / "podworker-rank";
  std::ofstream(rank) << "#!/bin/sh\n";
  chmod(rank.c_str(), 0644);
  EXPECT_EQ(RankBinaryPath(agent), helper.string()) << "a podworker-rank that cannot run";
  chmod(rank.c_str(), 0755);
  EXPECT_EQ(RankBinaryPath(agent), rank.string());
  EXPECT_EQ(HelperPath(agent), helper.string()) << "rsh stays with the helper";
  fs::remove_all(dir);
}

TEST(HelperPathTest, SelfPathIsThisTestsBinary) {
  EXPECT_EQ(fs::path(SelfPath("ignored")).filename(), "agent_process_tree_test");
}

}  // namespace
}  // namespace podsched::agent
