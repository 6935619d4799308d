#include "worker/agent/rsh_admission.h"

#include <gtest/gtest.h>

namespace podsched::agent {
namespace {

using std::chrono::milliseconds;

constexpr const char* kSecret = "00112233445566778899aabbccddeeff";
constexpr const char* kChallenge = "0123456789abcdef0123456789abcdef";

// A request proving the token of (job 7, `epoch`, `token_host`) against kChallenge.
bus::RshRequest Request(int64_t epoch = 2, int32_t host = 4, std::string secret = kSecret,
                        int32_t token_host = -1, int64_t token_epoch = -1) {
  bus::RshRequest r;
  r.mutable_job()->set_job_id(7);
  r.mutable_job()->set_epoch(epoch);
  r.set_host(host);
  r.set_proof(RshProof(RshHostToken(secret, 7, token_epoch < 0 ? epoch : token_epoch,
                                    token_host < 0 ? host : token_host),
                       kChallenge));
  r.add_argv("orted");
  return r;
}

RshContext Running() {
  RshContext c;
  c.agent_hosts = {4, 5, 6};
  c.agent_id = "a0";
  c.job = RshJob{kSecret, {4, 5}, false, 1, {}};
  c.highest_epoch = 2;
  c.challenge = kChallenge;
  return c;
}

TEST(RshAdmissionTest, HostTokensDifferByHostEpochAndSecret) {
  const std::string t = RshHostToken(kSecret, 7, 2, 4);
  EXPECT_EQ(t.size(), 64u);
  EXPECT_EQ(t, RshHostToken(kSecret, 7, 2, 4));
  EXPECT_NE(t, RshHostToken(kSecret, 7, 2, 5));
  EXPECT_NE(t, RshHostToken(kSecret, 7, 3, 4));
  EXPECT_NE(t, RshHostToken(kSecret, 8, 2, 4));
  EXPECT_NE(t, RshHostToken("ffeeddccbbaa99887766554433221100", 7, 2, 4));
  EXPECT_NE(RshProof(t, kChallenge), RshProof(t, "another challenge"));
  EXPECT_EQ(RshSessionsPerHost(false, 8), 1);  // mpirun: one orted per host
  EXPECT_EQ(RshSessionsPerHost(true, 8), 8);   // exec: one per rank
}

TEST(RshAdmissionTest, ATokenServesOnlyTheSessionsTheLaunchNeeds) {
  RshContext c = Running();
  c.job->max_sessions_per_host = 2;
  EXPECT_EQ(AdmitRshRequest(Request(), c, std::nullopt, {}).kind, RshDecision::kRun);
  c.job->sessions[4] = 1;
  EXPECT_EQ(AdmitRshRequest(Request(), c, std::nullopt, {}).kind, RshDecision::kRun);
  c.job->sessions[4] = 2;
  const RshDecision d = AdmitRshRequest(Request(), c, std::nullopt, {});
  EXPECT_EQ(d.kind, RshDecision::kRefuse);
  EXPECT_NE(d.reason.find("used for its 2 session(s) already"), std::string::npos) << d.reason;
  EXPECT_EQ(AdmitRshRequest(Request(2, 5), c, std::nullopt, {}).kind, RshDecision::kRun);
}

TEST(RshAdmissionTest, AProofIsBoundToItsConnectionsChallenge) {
  RshContext other = Running();
  other.challenge = "a different challenge, another connection";
  EXPECT_EQ(AdmitRshRequest(Request(), other, std::nullopt, {}).kind, RshDecision::kRefuse);
  RshContext none = Running();
  none.challenge.clear();
  EXPECT_EQ(AdmitRshRequest(Request(), none, std::nullopt, {}).kind, RshDecision::kRefuse);
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
      {Request(2, 4, kSecret, /*token_host=*/5), Running(), "bad rsh token"},  // host 5's token
      {Request(2, 4, kSecret, 4, /*token_epoch=*/1), Running(), "bad rsh token"},
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

// A Launch names fleet ids (multislice jobs span pods that number their hosts alike): this
// agent's pod starts at fleet id 64, so its host 4 is 68, and a request for 4 (another pod's)
// is refused.
TEST(RshAdmissionTest, HostsAreFleetIdsFirstHostApartFromTheAgentsOwn) {
  RshContext c = Running();
  c.job->first_host = 64;
  c.job->hosts = {68, 69};
  EXPECT_EQ(AdmitRshRequest(Request(2, 68), c, std::nullopt, {}).kind, RshDecision::kRun);
  const RshDecision other = AdmitRshRequest(Request(2, 4), c, std::nullopt, {});
  EXPECT_EQ(other.kind, RshDecision::kRefuse);
  EXPECT_NE(other.reason.find("host 4 is not served by agent a0"), std::string::npos)
      << other.reason;
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

TEST(RshAdmissionTest, EverySessionHasStartedOnlyWhenEachHostHasAllOfItsOwn) {
  std::map<int32_t, int> started;
  EXPECT_FALSE(EverySessionStarted(started, {4, 5}, 1));
  EXPECT_TRUE(EverySessionStarted(started, {}, 1)) << "no host here: nothing to wait for";
  started[4] = 2;
  EXPECT_FALSE(EverySessionStarted(started, {4, 5}, 2)) << "host 5 has none";
  started[5] = 1;
  EXPECT_FALSE(EverySessionStarted(started, {4, 5}, 2)) << "host 5 has one of two";
  EXPECT_TRUE(EverySessionStarted(started, {4, 5}, 1));
  started[5] = 2;
  EXPECT_TRUE(EverySessionStarted(started, {4, 5}, 2));
  EXPECT_EQ(RshSessionsPerHost(/*exec_launcher=*/true, 4), 4);
  EXPECT_EQ(RshSessionsPerHost(/*exec_launcher=*/false, 4), 1) << "one orted per host";
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
