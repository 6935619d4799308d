#include "worker/progress/progress_wire.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace podsched::progress {
namespace {

Progress Sample() {
  Progress p;
  p.job = "j1";
  p.epoch = 2;
  p.step = 40;
  p.steps = 200;
  p.loss = 0.61234;
  p.accuracy = 0.78125;
  p.examples_per_s = 51234.4;
  p.checkpoint = "ckpt-2-40";
  p.scalars["checkpoint_bytes"] = 123456789;
  return p;
}

TEST(ProgressTest, LineCarriesEveryField) {
  EXPECT_EQ(ProgressLine(Sample()),
            "step=40/200 loss=0.6123 accuracy=0.7812 examples_per_s=51234 checkpoint=ckpt-2-40");
  Progress none = Sample();
  none.checkpoint.clear();
  EXPECT_NE(ProgressLine(none).find("checkpoint=none"), std::string::npos);
}

TEST(ProgressTest, ParseIsTheInverseOfJson) {
  auto p = ParseProgressJson(ProgressJson(Sample()));
  ASSERT_TRUE(p.has_value()) << p.error().ToString();
  EXPECT_EQ(p->job, "j1");
  EXPECT_EQ(p->epoch, 2);
  EXPECT_EQ(p->step, 40);
  EXPECT_EQ(p->steps, 200);
  EXPECT_DOUBLE_EQ(p->loss, 0.61234);
  EXPECT_EQ(p->checkpoint, "ckpt-2-40");
  EXPECT_EQ(p->scalars, Sample().scalars);  // podtrain's checkpoint size among them
  for (const char* bad : {"", "[]", "{", "{\"job\":1,\"epoch\":1,\"step\":1}",
                          "{\"job\":\"j\",\"epoch\":\"1\",\"step\":1}", "\xff\xfe"}) {
    EXPECT_FALSE(ParseProgressJson(bad).has_value()) << bad;
  }
}

// Seen while fixing the manifest's fuzz finding (the same nlohmann conversion): an epoch above
// INT64_MAX wrapped to a negative one instead of being refused.
TEST(ProgressTest, IntegersBeyondInt64AreRefused) {
  EXPECT_FALSE(ParseProgressJson(R"({"job":"j","epoch":18446744073709551615,"step":1})"));
  EXPECT_FALSE(ParseProgressJson(R"({"job":"j","epoch":1,"step":9223372036854775808})"));
  auto p = ParseProgressJson(R"({"job":"j","epoch":1,"step":2,"steps":18446744073709551615})");
  ASSERT_TRUE(p.has_value()) << p.error().ToString();
  EXPECT_EQ(p->steps, 0);
}

TEST(ProgressTest, TheKeyTravelsInTheDatagramAndIsBounded) {
  EXPECT_EQ(nlohmann::json::parse(ProgressJson(Sample())).count("key"), 0u);  // none: not sent
  Progress keyed = Sample();
  keyed.key = "0123456789abcdef";
  auto p = ParseProgressJson(ProgressJson(keyed));
  ASSERT_TRUE(p.has_value()) << p.error().ToString();
  EXPECT_EQ(p->key, "0123456789abcdef");
  EXPECT_EQ(ParseProgressJson(R"({"job":"j","epoch":1,"step":2})")->key, "");
  auto number = ParseProgressJson(R"({"job":"j","epoch":1,"step":2,"key":7})");
  ASSERT_FALSE(number.has_value());
  EXPECT_NE(number.error().message().find("key"), std::string::npos);
  const std::string longer = R"({"job":"j","epoch":1,"step":2,"key":")" +
                             std::string(kMaxProgressKey + 1, 'a') + "\"}";
  EXPECT_FALSE(ParseProgressJson(longer).has_value());
}

TEST(ProgressTest, CheckpointStepOfName) {
  EXPECT_EQ(CheckpointStep("ckpt-2-40"), 40);
  EXPECT_EQ(CheckpointStep("ckpt-12-0"), 0);
  EXPECT_EQ(CheckpointStep(""), 0);
  EXPECT_EQ(CheckpointStep("ckpt-2-"), 0);
  EXPECT_EQ(CheckpointStep("ckpt-2-4x"), 0);
  EXPECT_EQ(CheckpointStep("other-2-40"), 0);
}

TEST(ProgressTest, JsonIsOneObjectWithTheDocumentedKeys) {
  const auto j = nlohmann::json::parse(ProgressJson(Sample()));
  EXPECT_EQ(j["job"], "j1");
  EXPECT_EQ(j["epoch"], 2);
  EXPECT_EQ(j["step"], 40);
  EXPECT_EQ(j["steps"], 200);
  EXPECT_DOUBLE_EQ(j["accuracy"].get<double>(), 0.78125);
  EXPECT_EQ(j["checkpoint"], "ckpt-2-40");
  EXPECT_EQ(ProgressJson(Sample()).find('\n'), std::string::npos);  // one datagram, one line
}

// The line any program can print (docs/jobspec.md, "Progress").
TEST(ProgressTest, LineFormatForAnyProgram) {
  auto p = ParseProgressLine(
      "POD_PROGRESS step=120 total_steps=1000 loss=0.31 accuracy=0.9 checkpoint_step=100 "
      "examples_per_second=512.5 lr=0.001 grad_norm=3e2");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->step, 120);
  EXPECT_EQ(p->steps, 1000);
  EXPECT_DOUBLE_EQ(p->loss, 0.31);
  EXPECT_DOUBLE_EQ(p->accuracy, 0.9);
  EXPECT_DOUBLE_EQ(p->examples_per_s, 512.5);
  EXPECT_EQ(ReportedCheckpointStep(*p), 100);
  EXPECT_EQ(p->scalars, (std::map<std::string, double>{{"lr", 0.001}, {"grad_norm", 300}}));
  EXPECT_EQ(ParseProgressLine("POD_PROGRESS  step=7\r")->step, 7);
}

TEST(ProgressTest, BadProgressLinesNameTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"POD_PROGRESS loss=1", "step=N is required"},
      {"POD_PROGRESS step=-1", "step=-1 is not a non-negative integer"},
      {"POD_PROGRESS step=1 loss=abc", "loss=abc is not a number"},
      {"POD_PROGRESS step=1 loss=nan", "loss=nan is not a number"},
      {"POD_PROGRESS step=1 junk", "'junk' is not KEY=NUMBER"},
      {"POD_PROGRESS step=1 b@d=1", "names are 1..32"},
      {"progress step=1", "not a POD_PROGRESS line"},
  };
  for (const auto& [line, error] : cases) {
    auto p = ParseProgressLine(line);
    ASSERT_FALSE(p.has_value()) << line;
    EXPECT_NE(p.error().message().find(error), std::string::npos) << p.error().message();
  }
  std::string many = "POD_PROGRESS step=1";
  for (int i = 0; i < 17; ++i) many += " s" + std::to_string(i) + "=1";
  EXPECT_FALSE(ParseProgressLine(many).has_value());
}

TEST(ProgressTest, JsonMayCarryCheckpointStepAndScalars) {
  auto p = ParseProgressJson(
      R"({"job":"4","epoch":1,"step":9,"checkpoint_step":8,"scalars":{"lr":0.5,"x":"text"}})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(ReportedCheckpointStep(*p), 8);
  EXPECT_EQ(p->scalars, (std::map<std::string, double>{{"lr", 0.5}}));
}

TEST(ProgressTest, EndpointMustBeUdpIpv4AndPort) {
  auto ep = ParseProgressEndpoint("udp://127.0.0.1:9000");
  ASSERT_TRUE(ep);
  EXPECT_EQ(ep->ip, "127.0.0.1");
  EXPECT_EQ(ep->port, 9000);
  for (auto bad : {"http://127.0.0.1:9000", "udp://localhost:9000", "udp://127.0.0.1",
                   "udp://127.0.0.1:0", "udp://127.0.0.1:70000", "udp://127.0.0.1:9x"}) {
    EXPECT_FALSE(ParseProgressEndpoint(bad)) << bad;
  }
}

}  // namespace
}  // namespace podsched::progress
