#include "worker/agent/rsh_admission.h"

#include <gtest/gtest.h>

namespace podsched::agent {
namespace {

using std::chrono::milliseconds;

constexpr const char* kToken = "00112233445566778899aabbccddeeff";

bus::RshRequest Request(int64_t epoch = 2, int32_t host = 4, std::string token = kToken) {
  bus::RshRequest r;
  r.mutable_job()->set_job_id(7);
  r.mutable_job()->set_epoch(epoch);
  r.set_host(host);
  r.set_token(std::move(token));
  r.add_argv("orted");
  return r;
}

RshContext Running() {
  RshContext c;
  c.agent_hosts = {4, 5, 6};
  c.agent_id = "a0";
  c.job = RshJob{kToken, {4, 5}, false};
  c.highest_epoch = 2;
  return c;
}

TEST(RshAdmissionTest, RefusalsNameTheReason) {
  const MonotonicTime now{};
  EXPECT_EQ(AdmitRshRequest(Request(), Running(), std::nullopt, now).kind, RshDecision::kRun);
  struct Case {
    bus::RshRequest request;
    RshContext context;
    std::string reason;
  };
  RshContext killed = Running();
  killed.job->killing = true;
  RshContext old_epoch = Running();
  old_epoch.job.reset();
  bus::RshRequest empty = Request();
  empty.clear_argv();
  const Case cases[] = {
      {Request(2, 9), Running(), "job 7 epoch 2 host 9: host 9 is not served by agent a0"},
      {Request(2, 4, "ffffffffffffffffffffffffffffffff"), Running(), "bad rsh token"},
      {Request(2, 4, "0011"), Running(), "bad rsh token"},
      {Request(2, 6), Running(), "host not in the job's slice"},
      {Request(), killed, "no running launch of that job and epoch here"},
      {Request(1), old_epoch, "no running launch of that job and epoch here"},
      {empty, Running(), "empty command"},
  };
  for (const auto& c : cases) {
    const RshDecision d = AdmitRshRequest(c.request, c.context, std::nullopt, now);
    EXPECT_EQ(d.kind, RshDecision::kRefuse) << c.reason;
    EXPECT_NE(d.reason.find(c.reason), std::string::npos) << d.reason;
  }
}

TEST(RshAdmissionTest, ARequestBeforeItsLaunchWaitsTenSeconds) {
  FakeMonotonicClock clock;
  RshContext before = Running();
  before.job.reset();
  before.highest_epoch = 1;
  const RshDecision park = AdmitRshRequest(Request(), before, std::nullopt, clock.Now());
  ASSERT_EQ(park.kind, RshDecision::kPark);
  EXPECT_EQ(park.park_until, clock.Now() + kRshLaunchWait);
  clock.Advance(milliseconds(9999));
  EXPECT_EQ(AdmitRshRequest(Request(), before, park.park_until, clock.Now()).kind,
            RshDecision::kWait);
  // The Launch arrives: the parked request runs.
  EXPECT_EQ(AdmitRshRequest(Request(), Running(), park.park_until, clock.Now()).kind,
            RshDecision::kRun);
  clock.Advance(milliseconds(1));
  const RshDecision late = AdmitRshRequest(Request(), before, park.park_until, clock.Now());
  EXPECT_EQ(late.kind, RshDecision::kRefuse);
  EXPECT_NE(late.reason.find("no Launch of that job and epoch arrived within 10 s"),
            std::string::npos)
      << late.reason;
}

TEST(RshAdmissionTest, AtMost256RequestsWait) {
  RshContext before = Running();
  before.job.reset();
  before.highest_epoch = 1;
  before.parked = kMaxParkedRequests - 1;
  EXPECT_EQ(AdmitRshRequest(Request(), before, std::nullopt, {}).kind, RshDecision::kPark);
  before.parked = kMaxParkedRequests;
  const RshDecision d = AdmitRshRequest(Request(), before, std::nullopt, {});
  EXPECT_EQ(d.kind, RshDecision::kRefuse);
  EXPECT_NE(d.reason.find("too many requests waiting"), std::string::npos);
}

}  // namespace
}  // namespace podsched::agent
