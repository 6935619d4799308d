// GET /api/v1/stats through the engine: utilization samples by class and preemptions per hour.
#include "scheduler/daemon/usage_history.h"

#include <gtest/gtest.h>

#include "api.pb.h"
#include "scheduler/daemon/convert.h"
#include "scheduler/daemon/engine.h"
#include "scheduler/daemon/engine_test_util.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {
namespace {

class UsageHistoryTest : public testing::EngineFixture {
 protected:

  HttpResponse Call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& token = "t-admin") {
    return engine_->Handle(HttpRequest{method, target, "Bearer " + token, body, "test"}, now_);
  }

  api::ClusterStats Stats(const std::string& token = "t-admin") {
    auto r = Call("GET", "/api/v1/stats", "", token);
    EXPECT_EQ(r.status, 200) << r.body;
    api::ClusterStats out;
    EXPECT_TRUE(ParseJson(r.body, {}, &out).ok()) << r.body;
    return out;
  }

};

TEST_F(UsageHistoryTest, SamplesHostsByClassAndCountsPreemptions) {
  ASSERT_EQ(Call("POST", "/api/v1/jobs", R"({"name":"a","accelerator":"v2-32","command":"x"})")
                .status, 201);
  ASSERT_EQ(Call("POST", "/api/v1/jobs",
                 R"({"name":"b","accelerator":"v2-8","preemptible":true,"command":"x"})")
                .status, 201);
  engine_->Tick(now_);
  api::ClusterStats s = Stats();
  ASSERT_GE(s.utilization_size(), 1);
  const auto& last = s.utilization(s.utilization_size() - 1);
  EXPECT_EQ(last.on_demand_hosts(), 4);
  EXPECT_EQ(last.preemptible_hosts(), 1);
  EXPECT_EQ(last.hosts(), 16);
  EXPECT_DOUBLE_EQ(last.utilization(), 5.0 / 16);
  EXPECT_EQ(s.preemptions_per_hour_size(), 0);

  // One sample per 10 s, however often the engine ticks.
  int before = s.utilization_size();
  for (int i = 0; i < 25; ++i) {
    now_ += std::chrono::seconds(1);
    engine_->Tick(now_);
  }
  EXPECT_EQ(Stats().utilization_size(), before + 2);

  ASSERT_EQ(Call("POST", "/api/v1/jobs/2/preempt").status, 200);
  s = Stats("t-alice");  // pod-wide figures: any user
  ASSERT_EQ(s.preemptions_per_hour_size(), 1);
  EXPECT_EQ(s.preemptions_per_hour(0).count(), 1);
  EXPECT_EQ(s.preemptions_per_hour(0).hour(),
            Rfc3339(TimePoint(std::chrono::hours(1'700'000'000 / 3600))));
  EXPECT_EQ(Call("POST", "/api/v1/stats").status, 405);
}

TEST(UsageHistoryBoundsTest, KeepsTheNewestSamplesAndAWeekOfHours) {
  auto pod = pod::Pod::Create("p", pod::Generation::kV2, 2, 2);
  ASSERT_TRUE(pod.has_value());
  core::InMemoryJobRepository repo;
  TimePoint t{std::chrono::hours(1000)};
  auto scheduler = core::Scheduler::Create(std::move(*pod), {}, &repo, t);
  ASSERT_TRUE(scheduler.has_value());
  UsageHistory history(std::chrono::seconds(10), 3);
  for (int i = 0; i < 10; ++i) history.Observe(**scheduler, t + std::chrono::seconds(10 * i));
  EXPECT_EQ(history.samples(), 3u);
  for (int h = 0; h < 200; ++h) history.CountPreemption(t + std::chrono::hours(h));
  auto out = history.ToProto(**scheduler, t + std::chrono::hours(200));
  EXPECT_EQ(out.preemptions_per_hour_size(), 168);
  EXPECT_EQ(out.utilization_size(), 4);  // three samples and now
}

}  // namespace
}  // namespace podsched::daemon
