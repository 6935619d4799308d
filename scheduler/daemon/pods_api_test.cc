// Pods, quotas and metrics through the engine.
#include "scheduler/daemon/pods_api.h"

#include <gtest/gtest.h>

#include "api.pb.h"
#include "scheduler/daemon/engine_test_util.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {
namespace {

using PodsApiTest = testing::ApiFixture;

TEST_F(PodsApiTest, QuotasPodsMetrics) {
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

TEST_F(PodsApiTest, AUserSeesOthersAllocationsAsHeldNotByWhom) {
  int64_t bobs = SubmitAs("t-bob");
  engine_->Tick(now_);
  SubmitAs("t-bob");  // waits on bob's quota
  engine_->Tick(now_);
  api::Pod as_alice, as_admin;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/pods/pod0", "t-alice").body, {}, &as_alice).ok());
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/pods/pod0", "t-admin").body, {}, &as_admin).ok());
  ASSERT_EQ(as_alice.allocations_size(), 1);
  EXPECT_EQ(as_alice.allocations(0).job_id(), 0);
  EXPECT_EQ(as_alice.allocations(0).user(), "");
  EXPECT_EQ(as_alice.pending_size(), 0);
  for (const auto& h : as_alice.hosts()) EXPECT_EQ(h.job_id(), 0);
  ASSERT_EQ(as_admin.allocations_size(), 1);
  EXPECT_EQ(as_admin.allocations(0).job_id(), bobs);
  EXPECT_EQ(as_admin.allocations(0).user(), "bob");
  EXPECT_EQ(as_admin.pending_size(), 1);
  EXPECT_EQ(Call("GET", "/api/v1/pods/pod9", "t-alice").status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/pods", "t-alice").status, 405);
}

TEST_F(PodsApiTest, QuotasAndUsersAreAdminBusiness) {
  EXPECT_EQ(Call("PUT", "/api/v1/quotas", "t-admin", R"({"user":"","on_demand_cores":8})").status,
            400);
  EXPECT_EQ(Call("PUT", "/api/v1/quotas", "t-admin", R"({"user":"x","on_demand_cores":-1})").status,
            400);
  api::QuotaList all;
  ASSERT_TRUE(
      ParseJson(Call("PUT", "/api/v1/quotas", "t-admin", R"({"user":"alice","on_demand_cores":32})").body, {}, &all)
          .ok());
  std::vector<std::string> names;
  for (const auto& q : all.quotas()) names.push_back(q.user());
  EXPECT_EQ(names, (std::vector<std::string>{"admin", "alice", "bob"}));
  EXPECT_EQ(all.quotas(1).on_demand_cores(), 32);
  EXPECT_EQ(Call("DELETE", "/api/v1/quotas", "t-admin").status, 405);
  EXPECT_EQ(Call("GET", "/api/v1/agents", "t-alice").status, 403);
  api::UserList users;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/users", "t-admin").body, {}, &users).ok());
  EXPECT_EQ(users.users_size(), 3);
}

}  // namespace
}  // namespace podsched::daemon
