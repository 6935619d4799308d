// Fixtures for tests that drive an Engine without sockets. Test-only.
//
// EngineFixture: a 4x4 v2 pod whose hosts need no podworker (bus.require_agents off), an
// in-memory job store, the users admin (token "t-admin") and alice ("t-alice"), and a fixed
// start time.
// ApiFixture: the same plus bob ("t-bob", quota 8+8 cores: one v2-8 at a time), no practical
// rate limit, and helpers that call the API (each call advances the clock by 1 ms).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "api.pb.h"
#include "common/hash.h"
#include "scheduler/core/repository.h"
#include "scheduler/daemon/config.h"
#include "scheduler/daemon/engine.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::daemon::testing {

class EngineFixture : public ::testing::Test {
 protected:
  EngineFixture() {
    config_.pods = {PodConfig{"pod0", pod::Generation::kV2, 4, 4, ""}};
    config_.bus.require_agents = false;
  }
  // A subclass that changes config_ or users_ does so in its SetUp before calling this.
  void SetUp() override { StartEngine(); }
  void StartEngine() {
    auto engine = Engine::Create(config_, users_, &repo_, now_, group_commit_);
    ASSERT_TRUE(engine.has_value()) << engine.error().message();
    engine_ = std::move(*engine);
  }

  Config config_;
  std::vector<UserConfig> users_ = {{"admin", Sha256Hex("t-admin"), true, ""},
                                    {"alice", Sha256Hex("t-alice"), false, ""}};
  core::InMemoryJobRepository repo_;
  TimePoint now_{std::chrono::seconds(1'700'000'000)};
  bool group_commit_ = false;  // commits wait for Engine::Flush, as in the daemon
  std::unique_ptr<Engine> engine_;
};

class ApiFixture : public EngineFixture {
 protected:
  void SetUp() override {
    config_.quotas["bob"] = core::Quota{8, 8};  // one v2-8 at a time: bob's further jobs wait
    config_.limits.requests_per_second = 1000;
    config_.limits.burst = 1000;
    users_.push_back({"bob", Sha256Hex("t-bob"), false, ""});
    StartEngine();
  }

  HttpResponse Call(const std::string& method, const std::string& target, const std::string& token,
                    const std::string& body = "") {
    now_ += std::chrono::milliseconds(1);
    return engine_->Handle(
        HttpRequest{method, target, token.empty() ? "" : "Bearer " + token, body, "test"}, now_);
  }

  // Submits a job as the user of `token`; returns its id.
  int64_t SubmitAs(const std::string& token, const std::string& accelerator = "v2-8") {
    auto r = Call("POST", "/api/v1/jobs", token,
                  R"({"name":"j","accelerator":")" + accelerator + R"(","command":"train"})");
    EXPECT_EQ(r.status, 201) << r.body;
    api::SubmitResponse out;
    EXPECT_TRUE(ParseJson(r.body, {}, &out).ok());
    return out.job().id();
  }
};

}  // namespace podsched::daemon::testing
