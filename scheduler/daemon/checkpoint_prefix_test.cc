#include "scheduler/daemon/checkpoint_prefix.h"

#include <gtest/gtest.h>

#include "common/user_names.h"

namespace podsched::daemon {
namespace {

TEST(CheckpointPrefixTest, EveryUserHasAPrefixBelowTheStore) {
  EXPECT_EQ(UserCheckpointPrefix("file:///var/ckpt", "alice"), "file:///var/ckpt/users/alice");
  EXPECT_EQ(UserCheckpointPrefix("file:///var/ckpt/", "alice"), "file:///var/ckpt/users/alice");
  EXPECT_EQ(UserCheckpointPrefix("s3://bkt/c?endpoint=http://h:1&region=r", "bob"),
            "s3://bkt/c/users/bob?endpoint=http://h:1&region=r");
}

TEST(CheckpointPrefixTest, TheOwnPrefixAndBelowAreAccepted) {
  const std::string p = "file:///var/ckpt/users/alice";
  EXPECT_TRUE(CheckUnderPrefix(p, p).ok());
  EXPECT_TRUE(CheckUnderPrefix(p + "/", p).ok());
  EXPECT_TRUE(CheckUnderPrefix(p + "/exp1/run-2", p).ok());
  const std::string s3 = "s3://bkt/c/users/bob?endpoint=http://h:1";
  EXPECT_TRUE(CheckUnderPrefix("s3://bkt/c/users/bob/x?endpoint=http://h:1", s3).ok());
}

TEST(CheckpointPrefixTest, AnythingOutsideIsRefusedWithThePrefixInTheMessage) {
  const std::string p = "file:///var/ckpt/users/alice";
  for (const char* bad : {"file:///etc", "file:///var/ckpt/users/bob", "file:///var/ckpt",
                          "file:///var/ckpt/users/alicex", "s3://var/ckpt/users/alice",
                          "file:///var/ckpt/users/alice/../bob",
                          "file:///var/ckpt/users/alice/./x", "file:///var/ckpt/users/alice//x",
                          "file:///var/ckpt/users/alice/%2e%2e/bob",
                          "file:///var/ckpt/users/alice/..\\bob", "/var/ckpt/users/alice",
                          "file:///var/ckpt/users/alice?endpoint=http://evil"}) {
    Status s = CheckUnderPrefix(bad, p);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find(p), std::string::npos) << s.message();
  }
  // The user's own credentials may be added; options may come in another order.
  EXPECT_TRUE(CheckUnderPrefix("s3://bkt/c/users/bob?region=r&access_key=a&endpoint=http://h:1&"
                               "secret_key=s",
                               "s3://bkt/c/users/bob?endpoint=http://h:1&region=r")
                  .ok());
  // Another endpoint would send the agents' credentials elsewhere.
  EXPECT_FALSE(CheckUnderPrefix("s3://bkt/c/users/bob?endpoint=http://evil",
                                "s3://bkt/c/users/bob?endpoint=http://h:1")
                   .ok());
}

TEST(CheckpointPrefixTest, FileUrlDirectoryAndUserNames) {
  EXPECT_EQ(FileUrlDirectory("file:///var/ckpt/users/alice/"), "/var/ckpt/users/alice");
  EXPECT_EQ(FileUrlDirectory("s3://b/k"), "");
  EXPECT_TRUE(IsPathSafeUserName("alice.b-c_1"));
  for (const char* bad : {"", ".", "..", "a/b", "a b", "ä"}) EXPECT_FALSE(IsPathSafeUserName(bad));
  EXPECT_FALSE(IsPathSafeUserName(std::string(65, 'a')));
  EXPECT_TRUE(IsUnixUserName("alice_2-x"));
  for (const char* bad : {"", "Alice", "2x", "-x", "a.b", "a/b", "root "}) {
    EXPECT_FALSE(IsUnixUserName(bad)) << bad;
  }
}

}  // namespace
}  // namespace podsched::daemon
