// Pods, quotas and metrics through the engine.
#include "scheduler/daemon/pods_api.h"

#include <gtest/gtest.h>

#include "api.pb.h"
#include "scheduler/daemon/convert.h"
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

// The API on a fleet: a v3 pod, a v2 pod and two v2-8 devices, with zones.
class PodsApiFleetTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    config_.pods = {{"v3", pod::Generation::kV3, 2, 2, "europe-west4-a"},
                    {"v2", pod::Generation::kV2, 2, 2, "us-central1-b"},
                    {"dev-0", pod::Generation::kV2, 1, 1, "us-central1-f"},
                    {"dev-1", pod::Generation::kV2, 1, 1, "us-central1-f"}};
    ApiFixture::SetUp();
  }
};

TEST_F(PodsApiFleetTest, ListsEveryPodWithItsZoneHoldersAndTheJobsItCouldTake) {
  SubmitAs("t-alice", "v3-32");  // only the v3 pod
  engine_->Tick(now_);
  const int64_t waiting = SubmitAs("t-alice", "v3-32");  // the v3 pod is full: waits
  SubmitAs("t-bob", "v2-8");
  engine_->Tick(now_);
  api::PodList list;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/pods", "t-admin").body, {}, &list).ok());
  ASSERT_EQ(list.pods_size(), 4);
  std::vector<std::string> names;
  for (const auto& p : list.pods()) names.push_back(p.name());
  EXPECT_EQ(names, (std::vector<std::string>{"v3", "v2", "dev-0", "dev-1"}));
  const api::Pod& v3 = list.pods(0);
  EXPECT_EQ(v3.zone(), "europe-west4-a");
  EXPECT_EQ(v3.generation(), "v3");
  EXPECT_EQ(v3.hosts_size(), 4);
  EXPECT_EQ(v3.on_demand_hosts(), 4);
  EXPECT_EQ(v3.preemptible_hosts(), 0);
  EXPECT_EQ(v3.pending_total(), 1);
  ASSERT_EQ(v3.pending_size(), 1);
  EXPECT_EQ(v3.pending(0).job_id(), waiting);
  // The v2-8 took a device (best fit), not a corner of the v2 pod.
  int held_on_devices = 0;
  for (int i = 2; i < 4; ++i) held_on_devices += list.pods(i).on_demand_hosts();
  EXPECT_EQ(held_on_devices, 1);
  EXPECT_EQ(list.pods(1).on_demand_hosts(), 0);
  EXPECT_EQ(list.pods(1).pending_total(), 0) << "a v3 job waits for v3 pods only";
  EXPECT_EQ(list.pods(2).zone(), "us-central1-f");
  EXPECT_EQ(list.pods(2).hosts_size(), 1);
  // Metrics by pod: every host of each pod in one state.
  const std::string metrics = Call("GET", "/metrics", "").body;
  EXPECT_NE(metrics.find("podsched_pod_hosts{pod=\"v3\",zone=\"europe-west4-a\",state=\"held\"} 4\n"),
            std::string::npos) << metrics;
  EXPECT_NE(metrics.find("podsched_pod_hosts{pod=\"v2\",zone=\"us-central1-b\",state=\"free\"} 4\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("podsched_pod_hosts{pod=\"dev-1\",zone=\"us-central1-f\",state=\"unhealthy\"} 0\n"),
            std::string::npos);

  api::Pod one;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/pods/dev-1", "t-alice").body, {}, &one).ok());
  EXPECT_EQ(one.name(), "dev-1");
  auto missing = Call("GET", "/api/v1/pods/dev-2", "t-alice");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("no pod 'dev-2' in this fleet; pods: v3, v2, dev-0 and 1 more"), std::string::npos)
      << missing.body;
}

// A job's hosts and its events name the pod's own host ids, beside the pod.
TEST_F(PodsApiFleetTest, AJobsHostsAreItsPodsOwnIds) {
  SubmitAs("t-alice", "v2-32");  // the v2 pod: fleet hosts 4-7, its own 0-3
  engine_->Tick(now_);
  api::JobList jobs;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/jobs", "t-alice").body, {}, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 1);
  EXPECT_EQ(jobs.jobs(0).pod(), "v2");
  EXPECT_EQ(std::vector<int>(jobs.jobs(0).hosts().begin(), jobs.jobs(0).hosts().end()),
            (std::vector<int>{0, 1, 2, 3}));
  api::JobEventList events;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/jobs/" + std::to_string(jobs.jobs(0).id()) + "/events",
                             "t-alice")
                            .body,
                        {}, &events)
                  .ok());
  ASSERT_GE(events.events_size(), 2);
  const api::JobEvent& placed = events.events(1);
  EXPECT_EQ(placed.to(), "PLACED");
  EXPECT_EQ(placed.pod(), "v2");
  EXPECT_EQ(std::vector<int>(placed.hosts().begin(), placed.hosts().end()),
            (std::vector<int>{0, 1, 2, 3}));
}

// A job may name a zone or a pod; an unknown one is refused naming what there is.
TEST_F(PodsApiFleetTest, ASubmissionMayNameAZoneOrAPod) {
  auto submit = [&](const std::string& extra) {
    return Call("POST", "/api/v1/jobs", "t-alice",
                R"({"name":"j","accelerator":"v2-8","command":"train")" + extra + "}");
  };
  auto bad_pod = submit(R"(,"pod":"dev-9")");
  EXPECT_EQ(bad_pod.status, 400);
  EXPECT_NE(bad_pod.body.find("no pod 'dev-9' in this fleet; pods: v3, v2, dev-0 and 1 more"),
            std::string::npos) << bad_pod.body;
  auto bad_zone = submit(R"(,"zone":"mars-1")");
  EXPECT_EQ(bad_zone.status, 400);
  EXPECT_NE(bad_zone.body.find("zones: europe-west4-a, us-central1-b, us-central1-f"),
            std::string::npos) << bad_zone.body;
  EXPECT_EQ(submit(R"(,"pod":"v3")").status, 400) << "a v3 pod cannot hold a v2-8";
  EXPECT_EQ(submit(R"(,"pod":"a/b")").status, 400);

  // Best fit would take a device; the job asked for the v2 pod's zone.
  auto in_zone = submit(R"(,"zone":"us-central1-b")");
  ASSERT_EQ(in_zone.status, 201) << in_zone.body;
  api::SubmitResponse r;
  ASSERT_TRUE(ParseJson(in_zone.body, {}, &r).ok());
  engine_->Tick(now_);
  api::Job job;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/jobs/" + std::to_string(r.job().id()), "t-alice").body,
                        {}, &job)
                  .ok());
  EXPECT_EQ(job.pod(), "v2");
  EXPECT_EQ(job.spec().zone(), "us-central1-b");
}

// Each pod's waiting jobs: those whose type it can hold within their zone or pod, the first
// max_pending listed by id and all counted, against a plain walk over every (job, pod).
TEST_F(PodsApiFleetTest, EveryPodCountsAndListsTheWaitingJobsItCouldTake) {
  const std::vector<std::string> bodies = {
      R"({"name":"a","accelerator":"v2-8","command":"x"})",
      R"({"name":"b","accelerator":"v2-8","command":"x","zone":"us-central1-f"})",
      R"({"name":"c","accelerator":"v2-32","command":"x"})",
      R"({"name":"d","accelerator":"v3-8","command":"x","preemptible":true})",
      R"({"name":"e","accelerator":"v2-8","command":"x","pod":"dev-1"})",
  };
  for (int i = 0; i < 40; ++i) {
    const std::string& body = bodies[static_cast<size_t>(i * 7 % 5)];
    ASSERT_EQ(Call("POST", "/api/v1/jobs", i % 2 ? "t-alice" : "t-admin", body).status, 201);
  }
  const core::Scheduler& scheduler = engine_->scheduler();
  const pod::Fleet& fleet = scheduler.fleet();
  for (int max_pending : {1, 3, 100}) {
    const std::vector<api::Pod> pods = PodsToProto(scheduler, std::nullopt, max_pending);
    ASSERT_EQ(static_cast<int>(pods.size()), fleet.size());
    for (int i = 0; i < fleet.size(); ++i) {
      std::vector<int64_t> want;
      int total = 0;
      for (const auto& [id, job] : scheduler.jobs()) {
        if (job.state != core::JobState::kQueued) continue;
        if (!fleet.CanHold(i, *scheduler.TypeOf(id), job.spec.zone, job.spec.pod)) continue;
        ++total;
        if (static_cast<int>(want.size()) < max_pending) want.push_back(id.value());
      }
      std::vector<int64_t> got;
      for (const auto& p : pods[static_cast<size_t>(i)].pending()) got.push_back(p.job_id());
      EXPECT_EQ(pods[static_cast<size_t>(i)].pending_total(), total) << fleet.pod(i).name();
      EXPECT_EQ(got, want) << fleet.pod(i).name() << " max_pending " << max_pending;
    }
    EXPECT_EQ(PodsToProto(scheduler, 2, max_pending).front().pending_total(),
              pods[2].pending_total());
  }
}

}  // namespace
}  // namespace podsched::daemon
