// Removing a job's trees inside the agent, on a real file system: never through a symlink, and
// as root with the owner's rights only.
#include "worker/agent/owner_removal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

namespace podsched::agent {
namespace {

namespace fs = std::filesystem;

class OwnerRemovalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/podsched-removal-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }
  // a/b/c/... `levels` directories deep below `top`, a file in the deepest.
  static fs::path Chain(const fs::path& top, int levels) {
    fs::path p = top;
    for (int i = 0; i < levels; ++i) p /= "d" + std::to_string(i);
    fs::create_directories(p);
    std::ofstream(p / "deepest") << "x";
    return p;
  }
  fs::path root_;
};

// Everything below the tree goes, but a symlink is removed, never what it names.
TEST_F(OwnerRemovalTest, ATreeGoesButNotWhatItsSymlinksName) {
  const fs::path tree = root_ / "tree", outside = root_ / "outside";
  fs::create_directories(tree / "sub" / "subsub");
  fs::create_directories(outside);
  std::ofstream(tree / "file") << "x";
  std::ofstream(tree / "sub" / "subsub" / "file") << "x";
  std::ofstream(outside / "target") << "keep";
  fs::create_directory_symlink(outside, tree / "to_dir");
  fs::create_symlink(outside / "target", tree / "sub" / "to_file");
  EXPECT_TRUE(RemoveTreeBounded(tree.string()));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree)));
  EXPECT_TRUE(fs::exists(outside / "target"));
  // A path that is itself a symlink: the link goes, the directory it names stays.
  fs::create_directory_symlink(outside, root_ / "link");
  EXPECT_TRUE(RemoveTreeBounded((root_ / "link").string()));
  EXPECT_FALSE(fs::exists(fs::symlink_status(root_ / "link")));
  EXPECT_TRUE(fs::exists(outside / "target"));
  EXPECT_TRUE(RemoveTreeBounded((root_ / "missing").string()));
}

// Deeper than the bound: what is within it goes, the deeper part stays, and the caller is told
// (the agent hands it to `rm`).
TEST_F(OwnerRemovalTest, ATreeDeeperThanTheBoundIsLeftToSomeoneElse) {
  const fs::path tree = root_ / "tree";
  Chain(tree, 6);
  std::ofstream(tree / "shallow") << "x";
  EXPECT_FALSE(RemoveTreeBounded(tree.string(), 3));
  EXPECT_FALSE(fs::exists(tree / "shallow"));
  EXPECT_TRUE(fs::exists(tree / "d0" / "d1" / "d2" / "d3" / "d4" / "d5" / "deepest"));
  EXPECT_TRUE(RemoveTreeBounded(tree.string(), 6));
  EXPECT_FALSE(fs::exists(tree));
}

// As root, the removal thread has the owner's rights and no more: a root-owned directory in the
// owner's tree keeps its file (root's rights would have removed it), a link to root's file goes
// alone; a tree too deep for the thread goes in an `rm` as the owner; and the thread is root
// again for the next removal.
TEST_F(OwnerRemovalTest, AsRootARemovalHasTheOwnersRightsAndNoMore) {
  if (::geteuid() != 0) GTEST_SKIP() << "another account's rights need root";
  JobAccount nobody;
  nobody.name = "nobody";
  nobody.uid = nobody.gid = 65534;
  nobody.groups = {65534};
  fs::permissions(root_, fs::perms(0755));
  // The owner's own directory holds the trees (as <scratch>/<account>/ does): it may unlink
  // them from it.
  const fs::path home = root_ / "home";
  fs::create_directory(home);
  ASSERT_EQ(::lchown(home.c_str(), nobody.uid, nobody.gid), 0);
  const fs::path tree = home / "tree", outside = root_ / "outside";
  fs::create_directories(tree / "sub");
  fs::create_directories(tree / "roots");
  fs::create_directories(outside);
  std::ofstream(tree / "file") << "x";
  std::ofstream(tree / "sub" / "file") << "x";
  std::ofstream(tree / "roots" / "keep") << "root's";
  std::ofstream(outside / "target") << "root's";
  fs::create_symlink(outside / "target", tree / "link");
  for (const fs::path& p : {tree, tree / "file", tree / "sub", tree / "sub" / "file"}) {
    ASSERT_EQ(::lchown(p.c_str(), nobody.uid, nobody.gid), 0) << p;
  }
  ASSERT_EQ(::lchown((tree / "link").c_str(), nobody.uid, nobody.gid), 0);
  fs::permissions(tree / "roots", fs::perms(0755));  // root's, which the owner may not change

  const fs::path deep = home / "deep";
  const fs::path deepest = Chain(deep, kMaxInProcessDepth + 4);
  for (fs::path p = deepest / "deepest"; p != home; p = p.parent_path()) {
    ASSERT_EQ(::lchown(p.c_str(), nobody.uid, nobody.gid), 0) << p;
  }

  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  OwnerRemovals::Get().Remove({tree.string(), deep.string()}, nobody);
  OwnerRemovals::Get().WaitIdle();
  int rm_processes = 0;
  while (::waitpid(-1, nullptr, 0) > 0) ++rm_processes;
  EXPECT_EQ(rm_processes, 1) << "the deep tree's rm";
  EXPECT_FALSE(fs::exists(tree / "file"));
  EXPECT_FALSE(fs::exists(tree / "sub"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree / "link")));
  EXPECT_TRUE(fs::exists(outside / "target"));
  EXPECT_TRUE(fs::exists(tree / "roots" / "keep")) << "removed with root's rights";
  EXPECT_FALSE(fs::exists(deep)) << "the tree deeper than the thread goes";

  // Root again: root's own removal takes the root-owned directory too.
  JobAccount root;
  root.name = "root";
  OwnerRemovals::Get().Remove({tree.string()}, root);
  OwnerRemovals::Get().WaitIdle();
  EXPECT_FALSE(fs::exists(tree));
}

}  // namespace
}  // namespace podsched::agent
