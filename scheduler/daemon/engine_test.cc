#include "scheduler/daemon/engine.h"

#include <gtest/gtest.h>

#include "api.pb.h"
#include "scheduler/daemon/engine_test_util.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {
namespace {

class EngineTest : public testing::EngineFixture {
 protected:
  void SetUp() override {
    config_.quotas["bob"] = core::Quota{8, 8};  // one v2-8 at a time: bob's further jobs wait
    config_.limits.requests_per_second = 1000;
    config_.limits.burst = 1000;
    users_.push_back({"bob", Sha256Hex("t-bob"), false});
    StartEngine();
  }

  HttpResponse Call(const std::string& method, const std::string& target, const std::string& token,
                    const std::string& body = "") {
    now_ += std::chrono::milliseconds(1);
    return engine_->Handle(
        HttpRequest{method, target, token.empty() ? "" : "Bearer " + token, body, "test"}, now_);
  }

  int64_t SubmitAs(const std::string& token, const std::string& accelerator = "v2-8") {
    auto r = Call("POST", "/api/v1/jobs", token,
                  R"({"name":"j","accelerator":")" + accelerator + R"(","command":"train"})");
    EXPECT_EQ(r.status, 201) << r.body;
    api::SubmitResponse out;
    EXPECT_TRUE(ParseJson(r.body, {}, &out).ok());
    return out.job().id();
  }

};

TEST_F(EngineTest, SubmitThenGetAndList) {
  int64_t id = SubmitAs("t-alice");
  engine_->Tick(now_);
  auto got = Call("GET", "/api/v1/jobs/" + std::to_string(id), "t-alice");
  ASSERT_EQ(got.status, 200);
  api::Job job;
  ASSERT_TRUE(ParseJson(got.body, {}, &job).ok());
  EXPECT_EQ(job.user(), "alice");
  EXPECT_EQ(job.state(), "PLACED");
  EXPECT_EQ(job.hosts_size(), 1);
  EXPECT_EQ(job.spec().command(), "train");
  auto list = Call("GET", "/api/v1/jobs?state=placed", "t-alice");
  ASSERT_EQ(list.status, 200);
  api::JobList jobs;
  ASSERT_TRUE(ParseJson(list.body, {}, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 1);
  EXPECT_EQ(jobs.jobs(0).id(), id);
}

TEST_F(EngineTest, AuthAndOwnership) {
  EXPECT_EQ(Call("GET", "/api/v1/jobs", "").status, 401);
  EXPECT_EQ(Call("GET", "/api/v1/jobs", "wrong").status, 401);
  int64_t id = SubmitAs("t-alice");
  std::string path = "/api/v1/jobs/" + std::to_string(id);
  EXPECT_EQ(Call("GET", path, "t-bob").status, 404);
  EXPECT_EQ(Call("POST", path + "/cancel", "t-bob").status, 404);
  EXPECT_EQ(Call("GET", path, "t-admin").status, 200);
  api::JobList bobs;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/jobs", "t-bob").body, {}, &bobs).ok());
  EXPECT_EQ(bobs.jobs_size(), 0);
  EXPECT_EQ(Call("GET", "/api/v1/users", "t-bob").status, 403);
  EXPECT_EQ(Call("GET", "/api/v1/users", "t-admin").status, 200);
  EXPECT_EQ(Call("PUT", "/api/v1/quotas", "t-bob", R"({"user":"bob","on_demand_cores":8})").status,
            403);
}

TEST_F(EngineTest, BadInputIsA4xxJsonError) {
  const std::vector<std::pair<std::string, int>> cases = {
      {"{", 400},
      {R"({"name":"x","accelerator":"v2-8","command":"c","color":"red"})", 400},
      {R"({"name":"x","accelerator":"v2-8","command":"c","priority":"high"})", 400},
      {R"({"name":"x","accelerator":"v2-12","command":"c"})", 400},
      {R"({"name":"x","accelerator":"v2-8","command":"c","priority":-1})", 400},
      {R"({"name":"x\u0007y","accelerator":"v2-8","command":"c"})", 400},
      {std::string(100, '[') + std::string(100, ']'), 400},
  };
  for (const auto& [body, status] : cases) {
    auto r = Call("POST", "/api/v1/jobs", "t-alice", body);
    EXPECT_EQ(r.status, status) << body << " -> " << r.body;
    api::Error e;
    EXPECT_TRUE(ParseJson(r.body, {}, &e).ok()) << r.body;
    EXPECT_FALSE(e.code().empty());
    EXPECT_FALSE(e.message().empty());
  }
  EXPECT_EQ(Call("GET", "/api/v1/nope", "t-alice").status, 404);
  EXPECT_EQ(Call("DELETE", "/api/v1/jobs", "t-alice").status, 405);
  EXPECT_EQ(Call("GET", "/api/v1/jobs/abc", "t-alice").status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/jobs?page_size=501", "t-alice").status, 400);
  EXPECT_EQ(Call("GET", "/api/v1/jobs?state=SLEEPING", "t-alice").status, 400);
  SubmitAs("t-alice");  // still serving
}

TEST_F(EngineTest, PagingVisitsEveryJobOnce) {
  std::set<int64_t> submitted, seen;
  for (int i = 0; i < 7; ++i) submitted.insert(SubmitAs("t-alice"));
  std::string token;
  int pages = 0;
  do {
    auto r = Call("GET", "/api/v1/jobs?page_size=3&page_token=" + token, "t-alice");
    ASSERT_EQ(r.status, 200);
    api::JobList page;
    ASSERT_TRUE(ParseJson(r.body, {}, &page).ok());
    EXPECT_EQ(page.total(), 7);
    for (const auto& j : page.jobs()) EXPECT_TRUE(seen.insert(j.id()).second);
    token = page.next_page_token();
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen, submitted);
}

TEST_F(EngineTest, CancelQueuedJobAndStreamItsTransitions) {
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
  auto by_query = engine_->OpenStream(
      {"GET", "/api/v1/events/stream?access_token=t-alice", "", "", ""}, now_, [](std::string) {});
  EXPECT_TRUE(std::holds_alternative<int64_t>(by_query));
}

TEST_F(EngineTest, QuotasPodsMetrics) {
  ASSERT_EQ(Call("PUT", "/api/v1/quotas", "t-admin",
                 R"({"user":"alice","on_demand_cores":8,"preemptible_cores":8})")
                .status,
            200);
  api::QuotaList quotas;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/quotas", "t-alice").body, {}, &quotas).ok());
  ASSERT_EQ(quotas.quotas_size(), 1);
  EXPECT_EQ(quotas.quotas(0).on_demand_cores(), 8);
  SubmitAs("t-alice");
  engine_->Tick(now_);
  SubmitAs("t-alice");  // 8 of 8 cores in use: waits on quota
  engine_->Tick(now_);
  api::PodList pods;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/pods", "t-alice").body, {}, &pods).ok());
  ASSERT_EQ(pods.pods_size(), 1);
  EXPECT_EQ(pods.pods(0).hosts_size(), 16);
  ASSERT_EQ(pods.pods(0).pending_size(), 1);
  EXPECT_EQ(pods.pods(0).allocations_size(), 1);
  EXPECT_EQ(pods.pods(0).largest_placeable_type(), "v2-32");
  auto metrics = Call("GET", "/metrics", "");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("podsched_queue_length 1\n"), std::string::npos);
  EXPECT_NE(metrics.body.find("podsched_api_requests_total{code=\"201\"} 2"), std::string::npos);
  EXPECT_NE(metrics.body.find("podsched_cores_in_use{class=\"on-demand\"} 8\n"), std::string::npos);
}

TEST_F(EngineTest, RateLimitGives429) {
  config_.limits.requests_per_second = 1;
  config_.limits.burst = 2;
  auto engine = Engine::Create(config_, {{"alice", Sha256Hex("t"), false}}, &repo_, now_);
  ASSERT_TRUE(engine.has_value());
  HttpRequest r{"GET", "/api/v1/jobs", "Bearer t", "", ""};
  EXPECT_EQ((*engine)->Handle(r, now_).status, 200);
  EXPECT_EQ((*engine)->Handle(r, now_).status, 200);
  EXPECT_EQ((*engine)->Handle(r, now_).status, 429);
  EXPECT_EQ((*engine)->Handle(r, now_ + std::chrono::seconds(1)).status, 200);
}

}  // namespace
}  // namespace podsched::daemon

namespace podsched::daemon {
namespace {

TEST(EngineGroupCommit, NothingIsStoredOrStreamedBeforeFlush) {
  Config config;
  config.pods = {PodConfig{"pod0", pod::Generation::kV2, 2, 2}};
  config.bus.require_agents = false;
  core::InMemoryJobRepository repo;
  int groups = 0;
  size_t batches_in_last_group = 0;
  TimePoint now{std::chrono::seconds(1'700'000'000)};
  auto engine =
      Engine::Create(config, {{"alice", Sha256Hex("t"), false}}, &repo, now, /*group_commit=*/true,
                     [&](std::span<const core::StoreBatch* const> batches) {
                       ++groups;
                       batches_in_last_group = batches.size();
                       for (const auto* b : batches) {
                         if (Status s = repo.Commit(*b); !s.ok()) return s;
                       }
                       return Status::Ok();
                     });
  ASSERT_TRUE(engine.has_value());
  std::vector<std::string> frames;
  (void)(*engine)->OpenStream({"GET", "/api/v1/events/stream", "Bearer t", "", ""}, now,
                              [&](std::string f) { frames.push_back(f); });
  const std::string body = R"({"name":"j","accelerator":"v2-8","command":"c"})";
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*engine)->Handle({"POST", "/api/v1/jobs", "Bearer t", body, ""}, now).status, 201);
  }
  auto stored = repo.Load();
  ASSERT_TRUE(stored.has_value());
  EXPECT_TRUE(stored->jobs.empty());  // not durable yet: the daemon holds the 201s
  EXPECT_TRUE(frames.empty());
  ASSERT_TRUE((*engine)->Flush(now).ok());
  EXPECT_EQ(groups, 1);
  EXPECT_EQ(batches_in_last_group, 3u);
  EXPECT_EQ(repo.Load()->jobs.size(), 3u);
  EXPECT_EQ(frames.size(), 3u);
}

}  // namespace
}  // namespace podsched::daemon

namespace podsched::daemon {
namespace {

// The bus through the engine: agents and host health in the API, Launch sent only after the
// commit (group commit), logs with offsets, progress over the API and the stream.
TEST(EngineBus, AgentsHealthLogsAndProgressThroughTheApi) {
  Config config;
  config.pods = {PodConfig{"pod0", pod::Generation::kV2, 2, 2}};
  core::InMemoryJobRepository repo;
  TimePoint now{std::chrono::seconds(1'700'000'000)};
  auto created = Engine::Create(config,
                                {{"admin", Sha256Hex("a"), true}, {"alice", Sha256Hex("t"), false}},
                                &repo, now, /*group_commit=*/true,
                                [&](std::span<const core::StoreBatch* const> batches) {
                                  for (const auto* b : batches) {
                                    if (Status s = repo.Commit(*b); !s.ok()) return s;
                                  }
                                  return Status::Ok();
                                });
  ASSERT_TRUE(created.has_value());
  Engine& engine = **created;
  std::vector<BusOutgoing> sent;
  engine.SetBusSender([&](BusOutgoing m) { sent.push_back(std::move(m)); });
  auto get = [&](const std::string& target, const std::string& token = "a") {
    return engine.Handle({"GET", target, "Bearer " + token, "", ""}, now);
  };
  api::Pod pod;
  ASSERT_TRUE(ParseJson(get("/api/v1/pods/pod0").body, {}, &pod).ok());
  EXPECT_FALSE(pod.hosts(0).healthy());
  EXPECT_EQ(pod.hosts(0).health_reason(), "no agent");

  bus::Envelope reg;
  reg.mutable_register_()->set_agent_id("w1");
  reg.mutable_register_()->set_pod("pod0");
  for (int h = 0; h < 4; ++h) reg.mutable_register_()->add_hosts(h);
  engine.OnBusMessage("w1", reg.SerializeAsString(), now);
  EXPECT_TRUE(sent.empty());  // the Welcome waits for the flush like everything else
  ASSERT_TRUE(engine.Flush(now).ok());
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(ParseJson(get("/api/v1/pods/pod0").body, {}, &pod).ok());
  EXPECT_TRUE(pod.hosts(0).healthy());
  EXPECT_EQ(pod.hosts(0).agent_id(), "w1");
  EXPECT_EQ(get("/api/v1/agents", "t").status, 403);
  api::AgentList agents;
  ASSERT_TRUE(ParseJson(get("/api/v1/agents").body, {}, &agents).ok());
  ASSERT_EQ(agents.agents_size(), 1);
  EXPECT_TRUE(agents.agents(0).connected());

  auto r = engine.Handle({"POST", "/api/v1/jobs", "Bearer t",
                          R"({"name":"j","accelerator":"v2-8","command":"c"})", ""}, now);
  ASSERT_EQ(r.status, 201);
  ASSERT_TRUE(engine.Flush(now).ok());
  engine.Tick(now);
  ASSERT_TRUE(engine.Flush(now).ok());
  ASSERT_EQ(sent.size(), 2u);
  bus::Envelope launch;
  ASSERT_TRUE(launch.ParseFromString(sent[1].bytes));
  ASSERT_TRUE(launch.has_launch());
  int64_t epoch = launch.launch().job().epoch();

  bus::Envelope log;
  log.mutable_log()->mutable_job()->set_job_id(1);
  log.mutable_log()->mutable_job()->set_epoch(epoch);
  log.mutable_log()->set_data("[1,0]<stdout>:one\n[1,0]<stdout>:two\n");
  engine.OnBusMessage("w1", log.SerializeAsString(), now);
  api::LogList logs;
  ASSERT_TRUE(ParseJson(get("/api/v1/jobs/1/logs?limit=10", "t").body, {}, &logs).ok());
  ASSERT_EQ(logs.lines_size(), 1);  // limit: one whole line
  EXPECT_EQ(logs.lines(0).text(), "one");
  ASSERT_TRUE(
      ParseJson(get("/api/v1/jobs/1/logs?since=" + std::to_string(logs.next_offset()), "t").body,
                {}, &logs)
          .ok());
  ASSERT_EQ(logs.lines_size(), 1);
  EXPECT_EQ(logs.lines(0).text(), "two");
  EXPECT_EQ(get("/api/v1/jobs/1/logs?since=-1", "t").status, 400);

  std::vector<std::string> frames;
  (void)engine.OpenStream({"GET", "/api/v1/events/stream", "Bearer t", "", ""}, now,
                          [&](std::string f) { frames.push_back(f); });
  bus::Envelope progress;
  progress.mutable_progress()->mutable_job()->set_job_id(1);
  progress.mutable_progress()->mutable_job()->set_epoch(epoch);
  progress.mutable_progress()->set_step(7);
  engine.OnBusMessage("w1", progress.SerializeAsString(), now);
  ASSERT_TRUE(engine.Flush(now).ok());
  api::ProgressList points;
  ASSERT_TRUE(ParseJson(get("/api/v1/jobs/1/progress", "t").body, {}, &points).ok());
  ASSERT_EQ(points.points_size(), 1);
  EXPECT_EQ(points.points(0).step(), 7);
  bool progress_frame = false;
  for (const auto& f : frames) progress_frame |= f.find("event: progress") != std::string::npos;
  EXPECT_TRUE(progress_frame);
  std::string metrics = get("/metrics").body;
  EXPECT_NE(metrics.find("podsched_bus_messages_total{type=\"progress\"} 1"), std::string::npos);
  EXPECT_NE(metrics.find("podsched_agents_connected 1"), std::string::npos);
}

}  // namespace
}  // namespace podsched::daemon
