#include "pod/fleet_yaml.h"

#include <gtest/gtest.h>

namespace podsched::pod {
namespace {

std::string ErrorOf(std::string_view text) {
  auto r = ParseFleetYaml(text);
  EXPECT_FALSE(r.has_value()) << text;
  return r ? "" : r.error().message();
}

TEST(FleetYamlTest, ReadsPodsWithDefaultsAndExpandsCounts) {
  auto pods = ParseFleetYaml(R"(
pods:
  - {name: big, zone: us-central1-b}
  - {name: v3, generation: v3, host_rows: 4, host_cols: 8, zone: europe-west4-a}
  - {name: dev, host_rows: 1, host_cols: 1, count: 12, zone: us-central1-f}
)");
  ASSERT_TRUE(pods.has_value()) << pods.error().message();
  ASSERT_EQ(pods->size(), 14u);
  EXPECT_EQ((*pods)[0].name, "big");
  EXPECT_EQ((*pods)[0].generation, Generation::kV2);
  EXPECT_EQ((*pods)[0].host_rows, 8);  // the full v2 pod
  EXPECT_EQ((*pods)[0].zone, "us-central1-b");
  EXPECT_EQ((*pods)[1].generation, Generation::kV3);
  EXPECT_EQ((*pods)[1].host_cols, 8);
  EXPECT_EQ((*pods)[2].name, "dev-00");
  EXPECT_EQ((*pods)[13].name, "dev-11");
  EXPECT_EQ((*pods)[13].zone, "us-central1-f");
  EXPECT_TRUE(Fleet::Create(*pods).has_value());
}

// The grant's devices are each reserved to one class (`class`); pods take any job by default.
TEST(FleetYamlTest, AClassReservesPodsToOnDemandOrPreemptibleJobs) {
  auto pods = ParseFleetYaml(R"(
pods:
  - {name: big}
  - {name: od, host_rows: 1, host_cols: 1, count: 2, class: on-demand}
  - {name: pre, host_rows: 1, host_cols: 1, class: preemptible}
)");
  ASSERT_TRUE(pods.has_value()) << pods.error().message();
  EXPECT_EQ((*pods)[0].job_class, PodClass::kAny);
  EXPECT_EQ((*pods)[2].job_class, PodClass::kOnDemand);
  EXPECT_EQ((*pods)[3].job_class, PodClass::kPreemptible);
  EXPECT_NE(ErrorOf("pods: [{name: a, class: cheap}]")
                .find("pods[0].class: 'cheap' is not a job class; valid: any, on-demand, preemptible"),
            std::string::npos)
      << ErrorOf("pods: [{name: a, class: cheap}]");
}

TEST(FleetYamlTest, BadDocumentsAreRefusedNamingTheEntryAndKey) {
  EXPECT_NE(ErrorOf("pods: [").find("not valid YAML"), std::string::npos);
  EXPECT_NE(ErrorOf("pods: []").find("non-empty list"), std::string::npos);
  EXPECT_NE(ErrorOf("hosts: 3").find("unknown key 'hosts' in fleet"), std::string::npos);
  EXPECT_NE(ErrorOf("pods: [{name: a, colour: red}]").find("unknown key 'colour' in pods[0]"),
            std::string::npos);
  EXPECT_NE(ErrorOf("pods: [{generation: v2}]").find("pods[0].name is required"),
            std::string::npos);
  EXPECT_NE(ErrorOf("pods: [{name: a, generation: v9}]").find("pods[0].generation"),
            std::string::npos);
  EXPECT_NE(ErrorOf("pods: [{name: a}, {name: b, host_rows: x}]").find("pods[1].host_rows must be"),
            std::string::npos);
  EXPECT_NE(ErrorOf("pods: [{name: a, count: 0}]").find("pods[0].count must be 1..4096, not 0"),
            std::string::npos);
  EXPECT_NE(ErrorOf("pods: [{name: a, count: 4000}, {name: b, count: 100}]")
                .find("pods[1]: a fleet has at most 4096 pods"),
            std::string::npos);
  EXPECT_NE(ErrorOf("pods: [{name: a}, {name: a}]").find("two pods of the fleet are named 'a'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("pods: [{name: a, host_rows: 9}]").find("pod a"), std::string::npos);
  EXPECT_NE(ErrorOf("pods: [{name: a, count: 2}, {name: a-1}]").find("named 'a-1'"),
            std::string::npos);
}

}  // namespace
}  // namespace podsched::pod
