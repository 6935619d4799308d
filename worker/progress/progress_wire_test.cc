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
  for (const char* bad : {"", "[]", "{", "{\"job\":1,\"epoch\":1,\"step\":1}",
                          "{\"job\":\"j\",\"epoch\":\"1\",\"step\":1}", "\xff\xfe"}) {
    EXPECT_FALSE(ParseProgressJson(bad).has_value()) << bad;
  }
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
