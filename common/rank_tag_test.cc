#include "common/rank_tag.h"

#include <gtest/gtest.h>

namespace podsched {
namespace {

using Lines = std::vector<std::string>;

TEST(RankTagTest, ParsesMpirunTags) {
  RankTag t = ParseRankTag("[1,12]<stderr>:oops");
  EXPECT_EQ(t.length, 15u);
  EXPECT_EQ(t.rank, 12);
  EXPECT_TRUE(t.stderr_stream);
  EXPECT_EQ(ParseRankTag(FormatRankTag(3, false) + "x").rank, 3);
  for (const char* bad : {"", "[1,0]", "[1,0]<stdin>:", "[,0]<stdout>:", "[1,-2]<stdout>:",
                          "[a,0]<stdout>:", "1,0]<stdout>:", "[1 0]<stdout>:"}) {
    EXPECT_EQ(ParseRankTag(bad).length, 0u) << bad;
  }
}

// The defect seen with a PyTorch job: a line of rank 0 that ended inside a chunk had the next
// chunk's tag glued to it.
TEST(RankTagTest, JoinsAChunkThatEndedInsideALine) {
  RankLineJoiner j;
  EXPECT_EQ(j.Line("[1,0]<stdout>:preempted at step 102, checkpointed[1,1]<stdout>:step 5"),
            Lines{"[1,1]<stdout>:step 5"});
  EXPECT_EQ(j.Line("[1,0]<stdout>: ckpt-1-102"),
            Lines{"[1,0]<stdout>:preempted at step 102, checkpointed ckpt-1-102"});
  EXPECT_TRUE(j.Flush().empty());
}

TEST(RankTagTest, SameRankContinuedAndStreamsKeptApart) {
  RankLineJoiner j;
  EXPECT_EQ(j.Line("[1,0]<stdout>:abc[1,0]<stderr>:err[1,0]<stdout>:def"),
            Lines{"[1,0]<stdout>:abcdef"});
  EXPECT_EQ(j.Line("[1,0]<stderr>:or"), Lines{"[1,0]<stderr>:error"});
}

TEST(RankTagTest, UntaggedTextPassesThroughAndFlushEndsPartials) {
  RankLineJoiner j;
  EXPECT_EQ(j.Line("mpirun noticed that process rank 1 exited"),
            Lines{"mpirun noticed that process rank 1 exited"});
  EXPECT_EQ(j.Line(""), Lines{""});
  EXPECT_EQ(j.Line("[1,2]<stdout>:"), Lines{"[1,2]<stdout>:"});  // an empty line of rank 2
  EXPECT_TRUE(j.Line("[1,3]<stdout>:half[1,4]<stdout>:[1,5]<stdout>:x").size() == 1);
  EXPECT_EQ(j.Flush(), Lines{"[1,3]<stdout>:half"});
  EXPECT_TRUE(j.Flush().empty());
  // Brackets that are not tags are text.
  EXPECT_EQ(j.Line("[1,0]<stdout>:a[b] [1,x] [2,3]<out>"), Lines{"[1,0]<stdout>:a[b] [1,x] [2,3]<out>"});
}

TEST(RankTagTest, AnUnfinishedLineIsBounded) {
  RankLineJoiner j;
  const std::string big(RankLineJoiner::kMaxPartial + 1, 'x');
  EXPECT_EQ(j.Line("[1,0]<stdout>:" + big + "[1,1]<stdout>:y").size(), 2u);
}

}  // namespace
}  // namespace podsched
