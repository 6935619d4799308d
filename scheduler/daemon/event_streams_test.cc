// The live stream: EventStreams alone, and through the engine (auth, visibility, frame ids).
#include "scheduler/daemon/event_streams.h"

#include <gtest/gtest.h>

#include "api.pb.h"
#include "scheduler/daemon/engine_test_util.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {
namespace {

using EventStreamsApiTest = testing::ApiFixture;

TEST_F(EventStreamsApiTest, CancelQueuedJobAndStreamItsTransitions) {
  std::vector<std::string> alice_frames, bob_frames;
  auto a = engine_->OpenStream({"GET", "/api/v1/events/stream", "Bearer t-alice", "", ""}, now_,
                               [&](std::string f) { alice_frames.push_back(f); });
  auto b = engine_->OpenStream({"GET", "/api/v1/events/stream", "Bearer t-bob", "", ""}, now_,
                               [&](std::string f) { bob_frames.push_back(f); });
  ASSERT_TRUE(std::holds_alternative<int64_t>(a));
  ASSERT_TRUE(std::holds_alternative<int64_t>(b));
  SubmitAs("t-bob");  // placed: uses all of bob's on-demand quota
  engine_->Tick(now_);
  int64_t id = SubmitAs("t-bob");  // waits on quota
  engine_->Tick(now_);
  auto queued = Call("GET", "/api/v1/jobs/" + std::to_string(id), "t-bob");
  EXPECT_NE(queued.body.find("quota"), std::string::npos) << queued.body;
  EXPECT_EQ(Call("POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel", "t-bob").status, 200);
  EXPECT_TRUE(alice_frames.empty());  // not her job
  // The first job's QUEUED and PLACED, then the second's QUEUED and CANCELLED.
  ASSERT_EQ(bob_frames.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NE(bob_frames[i].find("id: " + std::to_string(i + 1) + "\n"), std::string::npos);
  }
  EXPECT_NE(bob_frames[1].find(R"("to":"PLACED")"), std::string::npos);
  EXPECT_NE(bob_frames[2].find(R"("to":"QUEUED")"), std::string::npos);
  EXPECT_NE(bob_frames[3].find(R"("to":"CANCELLED")"), std::string::npos);
  EXPECT_NE(bob_frames[3].find(R"("job_id":")" + std::to_string(id) + "\""), std::string::npos);
  EXPECT_EQ(Call("POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel", "t-bob").status, 409);
  auto unauth =
      engine_->OpenStream({"GET", "/api/v1/events/stream", "", "", ""}, now_, [](std::string) {});
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(unauth));
  EXPECT_EQ(std::get<HttpResponse>(unauth).status, 401);
  // A token in the URL would end up in logs and browser history (audit L5): refused, and saying
  // what to send instead.
  auto by_query = engine_->OpenStream(
      {"GET", "/api/v1/events/stream?access_token=t-alice", "", "", ""}, now_, [](std::string) {});
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(by_query));
  EXPECT_EQ(std::get<HttpResponse>(by_query).status, 400);
  EXPECT_NE(std::get<HttpResponse>(by_query).body.find("Authorization: Bearer"), std::string::npos);
}

// Audit L5: the stream limit was global only, so one user could hold every stream.
TEST_F(EventStreamsApiTest, OneUserCannotHoldEveryStream) {
  auto open = [&](const char* token) {
    return engine_->OpenStream({"GET", "/api/v1/events/stream", token, "", ""}, now_,
                               [](std::string) {});
  };
  std::vector<int64_t> alice;
  for (size_t i = 0; i < EventStreams::kMaxPerUser; ++i) {
    auto s = open("Bearer t-alice");
    ASSERT_TRUE(std::holds_alternative<int64_t>(s)) << i;
    alice.push_back(std::get<int64_t>(s));
  }
  auto over = open("Bearer t-alice");
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(over));
  EXPECT_EQ(std::get<HttpResponse>(over).status, 429);
  EXPECT_NE(std::get<HttpResponse>(over).body.find("close one first"), std::string::npos);
  EXPECT_TRUE(std::holds_alternative<int64_t>(open("Bearer t-bob")));
  engine_->CloseStream(alice.front());
  EXPECT_TRUE(std::holds_alternative<int64_t>(open("Bearer t-alice")));
}

core::JobRecord JobOf(const std::string& user, int64_t id) {
  core::JobRecord job;
  job.id = JobId(id);
  job.spec.user = UserName(user);
  job.spec.name = "j";
  job.spec.accelerator = "v2-8";
  return job;
}

core::JobEvent EventOf(int64_t job, core::JobState to) {
  core::JobEvent e;
  e.job = JobId(job);
  e.to = to;
  return e;
}

class EventStreamsTest : public ::testing::Test {
 protected:
  // A transition or a progress report of alice's job 1.
  void Transition(core::JobState to) {
    streams_.PublishTransition(EventOf(1, to), JobOf("alice", 1), pod_, &v2_8_, now_);
  }
  void Progress(const ProgressSample& sample) {
    streams_.PublishProgress(sample, JobOf("alice", 1), pod_, &v2_8_, now_);
  }

  pod::Fleet pod_ = pod::Fleet::Of(*pod::Pod::Create("pod0", pod::Generation::kV2, 2, 2));
  pod::AcceleratorType v2_8_ = *pod::AcceleratorType::Parse("v2-8");
  TimePoint now_{std::chrono::seconds(1'700'000'000)};
  EventStreams streams_;
};

TEST_F(EventStreamsTest, EachViewerGetsTheSameFrameOthersNothing) {
  std::vector<std::string> admin, alice, bob;
  streams_.Open({"admin", true}, [&](std::string f) { admin.push_back(f); });
  int64_t a = streams_.Open({"alice", false}, [&](std::string f) { alice.push_back(f); });
  streams_.Open({"bob", false}, [&](std::string f) { bob.push_back(f); });
  EXPECT_EQ(streams_.size(), 3u);
  Transition(core::JobState::kQueued);
  ProgressSample sample;
  sample.step = 5;
  Progress(sample);
  ASSERT_EQ(alice.size(), 2u);
  EXPECT_EQ(admin, alice);
  EXPECT_TRUE(bob.empty());
  EXPECT_TRUE(alice[0].starts_with("id: 1\nevent: job\ndata: {")) << alice[0];
  EXPECT_TRUE(alice[0].ends_with("}\n\n"));
  EXPECT_NE(alice[0].find(R"("to":"QUEUED")"), std::string::npos) << alice[0];
  EXPECT_TRUE(alice[1].starts_with("id: 2\nevent: progress\ndata: {")) << alice[1];
  EXPECT_NE(alice[1].find(R"("step":"5")"), std::string::npos) << alice[1];
  streams_.Close(a);
  Transition(core::JobState::kPlaced);
  EXPECT_EQ(alice.size(), 2u);
  EXPECT_EQ(admin.size(), 3u);
  EXPECT_EQ(streams_.last_event_id(), 3);
}

TEST_F(EventStreamsTest, WithoutStreamsTransitionsTakeAnIdAndProgressDoesNot) {
  ProgressSample sample;
  Transition(core::JobState::kQueued);
  Progress(sample);
  EXPECT_EQ(streams_.last_event_id(), 1);
  std::vector<std::string> frames;
  streams_.Open({"alice", false}, [&](std::string f) { frames.push_back(f); });
  Transition(core::JobState::kPlaced);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_TRUE(frames[0].starts_with("id: 2\n")) << frames[0];
}

TEST_F(EventStreamsApiTest, StreamRefusalsAreCountedErrors) {
  config_.limits.max_stream_clients = 1;
  StartEngine();
  auto post = engine_->OpenStream({"POST", "/api/v1/events/stream", "Bearer t-alice", "", ""}, now_,
                                  [](std::string) {});
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(post));
  EXPECT_EQ(std::get<HttpResponse>(post).status, 405);
  auto one = engine_->OpenStream({"GET", "/api/v1/events/stream", "Bearer t-alice", "", ""}, now_,
                                 [](std::string) {});
  ASSERT_TRUE(std::holds_alternative<int64_t>(one));
  auto two = engine_->OpenStream({"GET", "/api/v1/events/stream", "Bearer t-alice", "", ""}, now_,
                                 [](std::string) {});
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(two));
  EXPECT_EQ(std::get<HttpResponse>(two).status, 503);
  engine_->CloseStream(std::get<int64_t>(one));
  std::string metrics = Call("GET", "/metrics", "").body;
  EXPECT_NE(metrics.find("podsched_stream_clients 0\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("podsched_api_requests_total{code=\"503\"} 1"), std::string::npos);
}

}  // namespace
}  // namespace podsched::daemon
