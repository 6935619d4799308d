#include "worker/train/flags.h"

#include <gtest/gtest.h>

#include <map>

namespace podsched::train {
namespace {

Result<Command> Parse(std::vector<const char*> args, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "podtrain");
  return ParseCommandLine(static_cast<int>(args.size()), args.data(),
                          [&](const std::string& k) -> std::optional<std::string> {
                            auto it = env.find(k);
                            if (it == env.end()) return std::nullopt;
                            return it->second;
                          });
}

TEST(FlagsTest, DefaultsDescribeAStandaloneExactRun) {
  auto c = Parse({});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, Command::Kind::kTrain);
  EXPECT_EQ(c->train.job, "standalone");
  EXPECT_EQ(c->train.epoch, 0);
  EXPECT_EQ(c->train.allreduce, ReduceMode::kExact);
  EXPECT_TRUE(c->train.checkpoint_url.empty());
}

TEST(FlagsTest, EnvironmentFillsTheJobContractAndFlagsWin) {
  std::map<std::string, std::string> env{{"POD_JOB_ID", "j42"},
                                         {"POD_EPOCH", "7"},
                                         {"POD_CHECKPOINT_URL", "file:///ckpt"},
                                         {"POD_PROGRESS_ENDPOINT", "udp://127.0.0.1:9"},
                                         {"POD_PROGRESS_KEY", "k3y"}};
  auto c = Parse({"--allreduce", "float", "--batchnorm", "sync", "--optimizer", "sgd"}, env);
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->train.job, "j42");
  EXPECT_EQ(c->train.epoch, 7);
  EXPECT_EQ(c->train.checkpoint_url, "file:///ckpt");
  EXPECT_EQ(c->train.progress_endpoint, "udp://127.0.0.1:9");
  EXPECT_EQ(c->train.progress_key, "k3y");
  EXPECT_EQ(c->train.allreduce, ReduceMode::kFloat);
  EXPECT_TRUE(c->train.model.batchnorm);
  EXPECT_EQ(c->train.optimizer.kind, OptimizerKind::kSgd);
  auto f = Parse({"--epoch", "9", "--checkpoint-url", "file:///x", "--job", "mine"}, env);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->train.epoch, 9);
  EXPECT_EQ(f->train.checkpoint_url, "file:///x");
  EXPECT_EQ(f->train.job, "mine");
}

TEST(FlagsTest, BadUsageNamesTheProblem) {
  struct Case {
    std::vector<const char*> args;
    std::string expect;
  };
  for (const Case& k : std::vector<Case>{{{"--allreduce", "fast"}, "allreduce"},
                                         {{"--global-batch", "0"}, "global-batch"},
                                         {{"--classes", "1"}, "--classes"},
                                         {{"--job", "a/b"}, "must not contain '/'"},
                                         {{"--nonsense"}, "nonsense"}}) {
    auto c = Parse(k.args);
    ASSERT_FALSE(c) << k.expect;
    EXPECT_NE(c.error().message().find(k.expect), std::string::npos) << c.error().message();
  }
  auto c = Parse({}, {{"POD_EPOCH", "x"}});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message().find("POD_EPOCH"), std::string::npos);
}

TEST(FlagsTest, GlobalBatchMustDivideByWorldSize) {
  auto c = Parse({"--global-batch", "64"});
  ASSERT_TRUE(c);
  EXPECT_TRUE(CheckWorldSize(c->train, 4).ok());
  const Status s = CheckWorldSize(c->train, 3);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not divisible by the world size 3"), std::string::npos);
}

TEST(FlagsTest, GenDataAndHelp) {
  auto g = Parse({"gen-data", "--out", "file:///d", "--examples", "100", "--shards", "3"});
  ASSERT_TRUE(g) << g.error().ToString();
  EXPECT_EQ(g->kind, Command::Kind::kGenData);
  EXPECT_EQ(g->gen.out_url, "file:///d");
  EXPECT_EQ(g->gen.shards, 3);
  EXPECT_FALSE(Parse({"gen-data"}));  // --out is required
  auto h = Parse({"--help"});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->kind, Command::Kind::kHelp);
  EXPECT_NE(h->help.find("--checkpoint-every"), std::string::npos);
}

}  // namespace
}  // namespace podsched::train
