// The engine as a whole: rate limiting, group commit (nothing stored, streamed or sent before
// Flush), and the worker bus through the API.
#include "scheduler/daemon/engine.h"

#include <gtest/gtest.h>

#include "api.pb.h"
#include "common/steady_wall_clock.h"
#include "scheduler/daemon/engine_test_util.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {
namespace {

TEST(EngineTest, RateLimitGives429) {
  Config config;
  config.pods = {PodConfig{"pod0", pod::Generation::kV2, 4, 4, ""}};
  config.bus.require_agents = false;
  config.limits.requests_per_second = 1;
  config.limits.burst = 2;
  core::InMemoryJobRepository repo;
  TimePoint now{std::chrono::seconds(1'700'000'000)};
  auto engine = Engine::Create(config, {{"alice", Sha256Hex("t"), false, ""}}, &repo, now);
  ASSERT_TRUE(engine.has_value());
  HttpRequest r{"GET", "/api/v1/jobs", "Bearer t", "", ""};
  EXPECT_EQ((*engine)->Handle(r, now).status, 200);
  EXPECT_EQ((*engine)->Handle(r, now).status, 200);
  EXPECT_EQ((*engine)->Handle(r, now).status, 429);
  EXPECT_EQ((*engine)->Handle(r, now + std::chrono::seconds(1)).status, 200);
}

TEST(EngineGroupCommit, NothingIsStoredOrStreamedBeforeFlush) {
  Config config;
  config.pods = {PodConfig{"pod0", pod::Generation::kV2, 2, 2, ""}};
  config.bus.require_agents = false;
  core::InMemoryJobRepository repo;
  int groups = 0;
  size_t batches_in_last_group = 0;
  TimePoint now{std::chrono::seconds(1'700'000'000)};
  auto engine =
      Engine::Create(config, {{"alice", Sha256Hex("t"), false, ""}}, &repo, now, /*group_commit=*/true,
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

// A pass that changes only a queued job's reason commits a reason update (core::ReasonUpdate),
// not the job's row: the store and the read snapshot both get it, after the row of the same
// group commit that came before it.
TEST(EngineGroupCommit, AReasonUpdateReachesTheStoreAndTheSnapshotAfterTheRowBeforeIt) {
  Config config;
  config.pods = {PodConfig{"pod0", pod::Generation::kV2, 1, 1, ""}};
  config.bus.require_agents = false;
  core::InMemoryJobRepository repo;
  size_t reason_updates = 0;
  TimePoint now{std::chrono::seconds(1'700'000'000)};
  auto engine =
      Engine::Create(config, {{"alice", Sha256Hex("t"), false, ""}}, &repo, now,
                     /*group_commit=*/true, [&](std::span<const core::StoreBatch* const> batches) {
                       for (const auto* b : batches) {
                         reason_updates += b->reasons.size();
                         if (Status s = repo.Commit(*b); !s.ok()) return s;
                       }
                       return Status::Ok();
                     });
  ASSERT_TRUE(engine.has_value());
  const std::string body = R"({"name":"j","accelerator":"v2-8","command":"c"})";
  ASSERT_EQ((*engine)->Handle({"POST", "/api/v1/jobs", "Bearer t", body, ""}, now).status, 201);
  (*engine)->Tick(now);  // job 1 takes the pod's one host
  ASSERT_EQ((*engine)->Handle({"POST", "/api/v1/jobs", "Bearer t", body, ""}, now).status, 201);
  (*engine)->Tick(now);  // job 2 waits: its reason alone changes
  ASSERT_TRUE((*engine)->Flush(now).ok());
  EXPECT_EQ(reason_updates, 1u);
  const std::string told = (*engine)->scheduler().Find(JobId(2))->reason;
  EXPECT_NE(told.find("no free host"), std::string::npos) << told;
  auto stored = repo.Load();
  ASSERT_TRUE(stored.has_value());
  ASSERT_EQ(stored->jobs.size(), 2u);
  EXPECT_EQ(stored->jobs[1].reason, told);
  HttpResponse got = (*engine)->Handle({"GET", "/api/v1/jobs/2", "Bearer t", "", ""}, now);
  ASSERT_EQ(got.status, 200);
  api::Job job;
  ASSERT_TRUE(ParseJson(got.body, JsonLimits{}, &job).ok()) << got.body;
  EXPECT_EQ(job.reason(), told);
  EXPECT_EQ(job.state(), "QUEUED");
}

// A flush that fails inside a read of the history (EventsOf flushes first) must not be
// followed by a Flush that reports success: the daemon would acknowledge lost submissions.
TEST(EngineGroupCommit, AFailedFlushStaysFailed) {
  Config config;
  config.pods = {PodConfig{"pod0", pod::Generation::kV2, 2, 2, ""}};
  config.bus.require_agents = false;
  core::InMemoryJobRepository repo;
  TimePoint now{std::chrono::seconds(1'700'000'000)};
  auto engine = Engine::Create(config, {{"alice", Sha256Hex("t"), false, ""}}, &repo, now,
                               /*group_commit=*/true,
                               [](std::span<const core::StoreBatch* const>) {
                                 return Status(StatusCode::kUnavailable, "disk full");
                               });
  ASSERT_TRUE(engine.has_value());
  const std::string body = R"({"name":"j","accelerator":"v2-8","command":"c"})";
  ASSERT_EQ((*engine)->Handle({"POST", "/api/v1/jobs", "Bearer t", body, ""}, now).status, 201);
  EXPECT_NE((*engine)->Handle({"GET", "/api/v1/jobs/1/events", "Bearer t", "", ""}, now).status,
            200);
  EXPECT_FALSE((*engine)->Flush(now).ok());  // the 201 above is never sent
  EXPECT_TRUE((*engine)->fatal());
}

// The bus through the engine: agents and host health in the API, Launch sent only after the
// commit (group commit), logs with offsets, progress over the API and the stream.
TEST(EngineBus, AgentsHealthLogsAndProgressThroughTheApi) {
  Config config;
  config.pods = {PodConfig{"pod0", pod::Generation::kV2, 2, 2, ""}};
  core::InMemoryJobRepository repo;
  TimePoint now{std::chrono::seconds(1'700'000'000)};
  auto created = Engine::Create(
      config, {{"admin", Sha256Hex("a"), true, ""}, {"alice", Sha256Hex("t"), false, ""}}, &repo, now,
      /*group_commit=*/true, [&](std::span<const core::StoreBatch* const> batches) {
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
  ASSERT_TRUE(ParseJson(get("/api/v1/pods/pod0", "t").body, {}, &pod).ok());
  EXPECT_TRUE(pod.hosts(0).healthy());
  EXPECT_EQ(pod.hosts(0).agent_id(), "") << "a user sees health, not which agent serves a host";
  api::AgentList agents;
  ASSERT_TRUE(ParseJson(get("/api/v1/agents").body, {}, &agents).ok());
  ASSERT_EQ(agents.agents_size(), 1);
  EXPECT_TRUE(agents.agents(0).connected());

  auto r = engine.Handle({"POST", "/api/v1/jobs", "Bearer t",
                          R"({"name":"j","accelerator":"v2-8","command":"c"})", ""},
                         now);
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

// A step of the system clock (an admin, or chrony) with one agent heartbeating every second, a
// running job and a preempted one within its 30 s grace. The engine reads either the raw wall
// clock, as podsched did before (audit H4), or the SteadyWallClock that podsched reads now.
class EngineClockStep : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    Config config;
    config.pods = {PodConfig{"pod0", pod::Generation::kV2, 2, 2, ""}};
    auto created =
        Engine::Create(config, {{"alice", Sha256Hex("t"), false, ""}}, &repo_, Now());
    ASSERT_TRUE(created.has_value()) << created.error().message();
    engine_ = std::move(*created);
    engine_->SetBusSender([this](BusOutgoing m) {
      bus::Envelope e;
      ASSERT_TRUE(e.ParseFromString(m.bytes));
      if (e.has_launch()) epochs_[e.launch().job().job_id()] = e.launch().job().epoch();
      kills_ += e.has_kill();
    });
    bus::Envelope reg;
    reg.mutable_register_()->set_agent_id("w1");
    reg.mutable_register_()->set_pod("pod0");
    for (int h = 0; h < 4; ++h) reg.mutable_register_()->add_hosts(h);
    engine_->OnBusMessage("w1", reg.SerializeAsString(), Now());
    for (const char* preemptible : {"false", "true"}) {
      auto r = engine_->Handle(
          {"POST", "/api/v1/jobs", "Bearer t",
           std::string(R"({"name":"j","accelerator":"v2-8","command":"c","preemptible":)") +
               preemptible + "}",
           ""},
          Now());
      ASSERT_EQ(r.status, 201) << r.body;
    }
    Run(std::chrono::seconds(2));
    ASSERT_EQ(epochs_.size(), 2u);
    ASSERT_EQ(engine_->Handle({"POST", "/api/v1/jobs/2/preempt", "Bearer t", "", ""}, Now()).status,
              200);
    Run(std::chrono::seconds(2));
    ASSERT_EQ(State(1), core::JobState::kRunning);
    ASSERT_EQ(State(2), core::JobState::kPreempting);
    ASSERT_EQ(kills_, 0);
  }

  // What the engine reads: the parameter says which clock.
  TimePoint Now() const { return GetParam() ? steady_.Now() : wall_.Now(); }

  // `d` of real time in 200 ms ticks; the agent heartbeats (reporting both jobs up) every second
  // unless silent.
  void Run(Duration d, bool silent = false) {
    for (Duration t{}; t < d; t += std::chrono::milliseconds(200)) {
      wall_.Advance(std::chrono::milliseconds(200));
      mono_.Advance(std::chrono::milliseconds(200));
      since_beat_ += std::chrono::milliseconds(200);
      if (!silent && since_beat_ >= std::chrono::seconds(1)) {
        since_beat_ = Duration::zero();
        Heartbeat();
      }
      engine_->Tick(Now());
      ASSERT_TRUE(engine_->Flush(Now()).ok());
    }
  }
  void Heartbeat() {
    bus::Envelope e;
    e.mutable_heartbeat()->set_agent_id("w1");
    for (const auto& [job, epoch] : epochs_) {
      if (const core::JobRecord* j = engine_->scheduler().Find(JobId(job));
          j == nullptr || !j->placement) {
        continue;
      }
      auto* running = e.mutable_heartbeat()->add_running();
      running->mutable_job()->set_job_id(job);
      running->mutable_job()->set_epoch(epoch);
      for (HostId h : engine_->scheduler().fleet().HostsIn(
               *engine_->scheduler().Find(JobId(job))->placement)) {
        running->add_hosts(h.value());
        running->add_ranks_up_hosts(h.value());
      }
    }
    engine_->OnBusMessage("w1", e.SerializeAsString(), Now());
  }
  core::JobState State(int64_t job) const { return engine_->scheduler().Find(JobId(job))->state; }
  int UnhealthyHosts() const {
    int n = 0;
    const pod::Fleet& pod = engine_->scheduler().fleet();
    for (int h = 0; h < pod.num_hosts(); ++h) n += !pod.host(HostId(h)).healthy;
    return n;
  }

  FakeClock wall_{TimePoint(std::chrono::seconds(1'700'000'000))};
  FakeMonotonicClock mono_;
  SteadyWallClock steady_{wall_, mono_};
  core::InMemoryJobRepository repo_;
  std::unique_ptr<Engine> engine_;
  std::map<int64_t, int64_t> epochs_;  // job -> epoch of its last Launch
  int kills_ = 0;
  Duration since_beat_{};
};

TEST_P(EngineClockStep, AForwardStepExpiresNoAgentAndEndsNoGrace) {
  wall_.Advance(std::chrono::seconds(60));
  Run(std::chrono::seconds(3));
  const bool steady = GetParam();
  if (steady) {
    EXPECT_EQ(UnhealthyHosts(), 0);
    EXPECT_EQ(kills_, 0);
    EXPECT_EQ(State(1), core::JobState::kRunning);
    EXPECT_EQ(State(2), core::JobState::kPreempting);
  } else {  // the audit's scenario, as it was: every host down, both jobs killed
    EXPECT_EQ(UnhealthyHosts(), 4);
    EXPECT_GE(kills_, 1);
    EXPECT_NE(State(1), core::JobState::kRunning);
  }
}

TEST_P(EngineClockStep, ABackwardStepStillExpiresASilentAgentOnTime) {
  wall_.Set(wall_.Now() - std::chrono::seconds(60));
  Run(std::chrono::seconds(12), /*silent=*/true);  // the heartbeat timeout is 10 s
  if (GetParam()) {
    EXPECT_EQ(UnhealthyHosts(), 4);
    EXPECT_EQ(State(1), core::JobState::kQueued);  // requeued: its hosts are gone
  } else {  // as it was: the dead machine's jobs kept "running" for the 60 s of the step
    EXPECT_EQ(UnhealthyHosts(), 0);
    EXPECT_EQ(State(1), core::JobState::kRunning);
  }
}

INSTANTIATE_TEST_SUITE_P(Clocks, EngineClockStep, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "SteadyWallClock" : "RawWallClockAsBefore";
                         });

}  // namespace
}  // namespace podsched::daemon
