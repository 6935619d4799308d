#include "pod/session.h"

#include <gtest/gtest.h>

namespace podsched::pod {
namespace {

std::vector<std::string> Step(PlacementSession& s, std::string_view text) {
  Result<ScriptRequest> r = ParseRequest(text, s.pod());
  EXPECT_TRUE(r.has_value()) << text;
  return r ? s.Apply(*r) : std::vector<std::string>{};
}

PlacementSession Session(std::string_view pod, std::string_view policy) {
  return PlacementSession(ParsePodSpec(pod).value(), MakePlacementPolicy(policy).value());
}

TEST(SessionTest, ParsesPodSpecs) {
  EXPECT_EQ(ParsePodSpec("v2")->num_hosts(), 64);
  EXPECT_EQ(ParsePodSpec("v3")->num_hosts(), 256);
  EXPECT_EQ(ParsePodSpec("4x4")->generation(), Generation::kV2);
  EXPECT_EQ(ParsePodSpec("v3:4x8")->host_cols(), 8);
  EXPECT_FALSE(ParsePodSpec("v4").has_value());
  EXPECT_FALSE(ParsePodSpec("4x").has_value());
  EXPECT_FALSE(ParsePodSpec("v2:16x16").has_value());
  EXPECT_FALSE(ParsePodSpec("v2:-1x4").has_value());
}

TEST(SessionTest, ParsesRequests) {
  const Pod pod = Pod::Full("p", Generation::kV2);
  EXPECT_EQ(ParseRequest("v2-32", pod)->kind, ScriptRequest::Kind::kAllocate);
  EXPECT_EQ(ParseRequest("-3", pod)->allocation, AllocationId(3));
  EXPECT_EQ(ParseRequest("release:3", pod)->allocation, AllocationId(3));
  EXPECT_EQ(ParseRequest("fail:63", pod)->host, HostId(63));
  EXPECT_EQ(ParseRequest("drain:0", pod)->kind, ScriptRequest::Kind::kDrain);
  EXPECT_EQ(ParseRequest("undrain:0", pod)->kind, ScriptRequest::Kind::kUndrain);
  EXPECT_FALSE(ParseRequest("fail:64", pod).has_value());
  EXPECT_FALSE(ParseRequest("heal:x", pod).has_value());
  EXPECT_FALSE(ParseRequest("-0", pod).has_value());
  EXPECT_FALSE(ParseRequest("-", pod).has_value());
  Result<ScriptRequest> bad = ParseRequest("v2-12", pod);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("valid: v2-8, v2-32"), std::string::npos);
}

TEST(SessionTest, WaitsInFifoOrderAndPlacesFromTheQueue) {
  PlacementSession s = Session("4x4", "first-fit");
  EXPECT_EQ(Step(s, "v2-128"),
            (std::vector<std::string>{"allocation 1 (v2-128) -> 4x4 hosts at row 0 col 0"}));
  EXPECT_EQ(Step(s, "v2-32"), (std::vector<std::string>{
                                 "allocation 2 (v2-32) waits: no free 2x2 block (0 hosts free)"}));
  // FIFO: a v2-8 does not overtake the waiting v2-32.
  EXPECT_EQ(Step(s, "v2-8"),
            (std::vector<std::string>{
                "allocation 3 (v2-8) waits: behind 1 waiting request(s) (0 hosts free)"}));
  EXPECT_EQ(s.waiting(), (std::vector<AllocationId>{AllocationId(2), AllocationId(3)}));
  EXPECT_EQ(Step(s, "-1"),
            (std::vector<std::string>{
                "allocation 1 released",
                "allocation 2 (v2-32) placed from the queue -> 2x2 hosts at row 0 col 0",
                "allocation 3 (v2-8) placed from the queue -> 1x1 hosts at row 0 col 2"}));
  EXPECT_TRUE(s.waiting().empty());
  EXPECT_EQ(s.requests_waited(), 2);
  EXPECT_EQ(Step(s, "-1"), (std::vector<std::string>{"error: allocation 1 holds no hosts in this pod"}));
}

TEST(SessionTest, HostOperations) {
  PlacementSession s = Session("2x2", "best-fit");
  EXPECT_EQ(Step(s, "fail:0"), (std::vector<std::string>{"host 0 failed"}));
  EXPECT_EQ(Step(s, "drain:1"), (std::vector<std::string>{"host 1 draining"}));
  EXPECT_EQ(s.pod().AvailableHosts(), 2);
  Step(s, "v2-32");
  EXPECT_EQ(s.waiting().size(), 1u);
  Step(s, "heal:0");
  EXPECT_EQ(s.waiting().size(), 1u);
  EXPECT_EQ(Step(s, "undrain:1").back(),
            "allocation 1 (v2-32) placed from the queue -> 2x2 hosts at row 0 col 0");
}

TEST(SessionTest, WithdrawsAWaitingRequest) {
  PlacementSession s = Session("1x1", "first-fit");
  Step(s, "v2-8");
  Step(s, "v2-8");
  EXPECT_EQ(Step(s, "-2"), (std::vector<std::string>{"allocation 2 withdrawn from the queue"}));
  EXPECT_TRUE(s.waiting().empty());
}

}  // namespace
}  // namespace podsched::pod
