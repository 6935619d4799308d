#include "store/objects/file_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "store/objects/object_store.h"

namespace podsched::store {
namespace {

namespace fs = std::filesystem;

class FileStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "objects_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto s = OpenObjectStore("file://" + dir_ + "/root");
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    store_ = std::move(*s);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> FilesOnDisk() {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) {
      if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir_ + "/root").string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string dir_;
  std::unique_ptr<ObjectStore> store_;
};

TEST_F(FileStoreTest, OpenCreatesRootAndReportsUrl) {
  EXPECT_TRUE(fs::is_directory(dir_ + "/root"));
  EXPECT_EQ(store_->url(), "file://" + dir_ + "/root");
}

TEST_F(FileStoreTest, PutIsAPlainFileAndLeavesNoTempFiles) {
  ASSERT_TRUE(store_->Put("a/b/c", "hello").ok());
  ASSERT_TRUE(store_->Put("a/b/c", "replaced").ok());
  EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{"a/b/c"});
  EXPECT_EQ(store_->Get("a/b/c").value(), "replaced");
}

TEST_F(FileStoreTest, RangeReads) {
  ASSERT_TRUE(store_->Put("k", "0123456789").ok());
  EXPECT_EQ(store_->GetRange("k", 2, 3).value(), "234");
  EXPECT_EQ(store_->GetRange("k", 10, 0).value(), "");
  EXPECT_EQ(store_->GetRange("k", 8, 3).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->GetRange("k", 11, 0).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->GetRange("nope", 0, 1).error().code(), StatusCode::kNotFound);
}

TEST_F(FileStoreTest, ListWalksOnlyThePrefixAndSorts) {
  for (const char* k :
       {"j/ckpt-2/manifest", "j/ckpt-10/shard-0", "j/ckpt-1/shard-0", "jx", "other/x"}) {
    ASSERT_TRUE(store_->Put(k, k).ok()) << k;
  }
  auto all = store_->List("");
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 5u);
  EXPECT_EQ((*all)[0].key, "j/ckpt-1/shard-0");
  EXPECT_EQ((*all)[0].size, std::string("j/ckpt-1/shard-0").size());
  auto j = store_->List("j/ckpt-1");
  ASSERT_TRUE(j.has_value());
  ASSERT_EQ(j->size(), 2u);
  EXPECT_EQ((*j)[0].key, "j/ckpt-1/shard-0");
  EXPECT_EQ((*j)[1].key, "j/ckpt-10/shard-0");
  EXPECT_EQ(store_->List("j")->size(), 4u);
  EXPECT_EQ(store_->List("j/")->size(), 3u);
  EXPECT_TRUE(store_->List("../")->empty());
  EXPECT_TRUE(store_->List("missing/dir/")->empty());
  EXPECT_EQ(store_->List("/abs").error().code(), StatusCode::kInvalidArgument);
}

TEST_F(FileStoreTest, WriterIsInvisibleUntilCommitAndCleansUpWhenDropped) {
  {
    auto w = store_->NewWriter("big/obj");
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE((*w)->Append("part1-").ok());
    ASSERT_TRUE((*w)->Append("part2").ok());
    EXPECT_EQ(store_->Head("big/obj").error().code(), StatusCode::kNotFound);
    EXPECT_TRUE(store_->List("")->empty()) << "temp file must not be listed";
    ASSERT_TRUE((*w)->Commit().ok());
    EXPECT_EQ((*w)->Append("x").code(), StatusCode::kFailedPrecondition);
  }
  EXPECT_EQ(store_->Get("big/obj").value(), "part1-part2");
  {
    auto w = store_->NewWriter("big/abandoned");
    ASSERT_TRUE((*w)->Append("junk").ok());
  }
  EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{"big/obj"});
}

TEST_F(FileStoreTest, HeadDeleteAndMissingKeys) {
  ASSERT_TRUE(store_->Put("x/y", "abc").ok());
  EXPECT_EQ(store_->Head("x/y")->size, 3u);
  EXPECT_EQ(store_->Head("x").error().code(), StatusCode::kNotFound) << "a directory is no object";
  EXPECT_EQ(store_->Get("x").error().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->Delete("x/y").ok());
  ASSERT_TRUE(store_->Delete("x/y").ok());
  EXPECT_EQ(store_->Get("x/y").error().code(), StatusCode::kNotFound);
  EXPECT_NE(store_->Get("x/y").error().message().find("x/y"), std::string::npos);
}

TEST_F(FileStoreTest, EveryCallValidatesItsKey) {
  EXPECT_EQ(store_->Put("../escape", "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->NewWriter("/abs").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Get("a//b").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->GetRange("", 0, 0).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Head("a/.").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Delete("..").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Put("d/.podsched-tmp-1", "x").code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir_ + "/escape"));
}

TEST_F(FileStoreTest, KeyBelowAnObjectIsAClearError) {
  ASSERT_TRUE(store_->Put("a", "x").ok());
  Status s = store_->Put("a/b", "y");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("file://"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace podsched::store
