// A fixture for tests that drive an Engine without sockets: a 4x4 v2 pod whose hosts need no
// podworker (bus.require_agents off), an in-memory job store, the users admin (token "t-admin")
// and alice ("t-alice"), and a fixed start time. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "common/hash.h"
#include "scheduler/core/repository.h"
#include "scheduler/daemon/config.h"
#include "scheduler/daemon/engine.h"

namespace podsched::daemon::testing {

class EngineFixture : public ::testing::Test {
 protected:
  EngineFixture() {
    config_.pods = {PodConfig{"pod0", pod::Generation::kV2, 4, 4}};
    config_.bus.require_agents = false;
  }
  // A subclass that changes config_ or users_ does so in its SetUp before calling this.
  void SetUp() override { StartEngine(); }
  void StartEngine() {
    auto engine = Engine::Create(config_, users_, &repo_, now_);
    ASSERT_TRUE(engine.has_value()) << engine.error().message();
    engine_ = std::move(*engine);
  }

  Config config_;
  std::vector<UserConfig> users_ = {{"admin", Sha256Hex("t-admin"), true},
                                    {"alice", Sha256Hex("t-alice"), false}};
  core::InMemoryJobRepository repo_;
  TimePoint now_{std::chrono::seconds(1'700'000'000)};
  std::unique_ptr<Engine> engine_;
};

}  // namespace podsched::daemon::testing
