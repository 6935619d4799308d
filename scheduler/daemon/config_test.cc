#include "scheduler/daemon/config.h"

#include <gtest/gtest.h>

namespace podsched::daemon {
namespace {

TEST(Config, EmptyGivesTheDefaults) {
  auto c = ParseConfig("");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->listen_address, "127.0.0.1");
  EXPECT_EQ(c->port, 8470);
  EXPECT_EQ(c->bus_address, "tcp://127.0.0.1:8471");
  EXPECT_EQ(c->data_dir, "var");
  ASSERT_EQ(c->pods.size(), 1u);
  EXPECT_EQ(c->pods[0].host_rows, 8);
  EXPECT_EQ(c->pods[0].generation, pod::Generation::kV2);
}

TEST(Config, StarterConfigParsesToTheDefaults) {
  auto c = ParseConfig(StarterConfigYaml());
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->port, 8470);
  EXPECT_EQ(c->limits.max_page_size, 500);
  EXPECT_EQ(c->limits.max_connections_per_address, 0);
  EXPECT_EQ(c->scheduler.profile, "fair-best-fit");
}

TEST(Config, ReadsEverySection) {
  auto c = ParseConfig(R"(
listen: {address: 0.0.0.0, port: 0}
data_dir: /tmp/x
pods: [{name: p, generation: v3, host_rows: 4, host_cols: 4}]
users:
  - {name: alice, token_sha256: )" +
                       std::string(64, 'a') + R"(, role: admin}
quotas: {bob: {on_demand_cores: 8, preemptible_cores: 16}}
scheduler: {profile: fifo-first-fit, tick_interval_ms: 50, defrag_budget_core_seconds_per_hour: 7200}
limits: {max_page_size: 10, requests_per_second: 5, burst: 5, max_connections_per_address: 16}
)");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->limits.max_connections_per_address, 16);
  EXPECT_EQ(c->port, 0);
  EXPECT_EQ(c->pods[0].generation, pod::Generation::kV3);
  EXPECT_TRUE(c->users[0].admin);
  EXPECT_EQ(c->quotas.at("bob").preemptible_cores, 16);
  EXPECT_EQ(c->scheduler.profile, "fifo-first-fit");
  EXPECT_EQ(c->tick_interval_ms, 50);
  EXPECT_EQ(c->scheduler.defrag_budget_core_seconds_per_hour, 7200);
  EXPECT_EQ(c->limits.max_page_size, 10);
  EXPECT_EQ(c->limits.default_page_size, 10);
}

TEST(Config, RejectsMistakesNamingTheKey) {
  auto unknown = ParseConfig("listen: {adress: x}");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message().find("adress"), std::string::npos);
  auto type = ParseConfig("listen: {port: eighty}");
  ASSERT_FALSE(type.has_value());
  EXPECT_NE(type.error().message().find("listen.port"), std::string::npos);
  EXPECT_FALSE(ParseConfig("users: [{name: a, token_sha256: abc}]").has_value());
  EXPECT_FALSE(
      ParseConfig("users: [{name: a, token_sha256: " + std::string(64, 'a') + ", role: root}]")
          .has_value());
  EXPECT_FALSE(ParseConfig("pods: [{generation: v9}]").has_value());
  EXPECT_FALSE(ParseConfig("listen: [").has_value());
  auto negative = ParseConfig("limits: {max_connections_per_address: -1}");
  ASSERT_FALSE(negative.has_value());
  EXPECT_NE(negative.error().message().find("max_connections_per_address 0..1000000"),
            std::string::npos);
}

// Through common/yaml_reader.h: the field's path and the expected type, never yaml-cpp's "bad
// conversion" for the whole file.
TEST(Config, AValueOrKeyOfAnotherShapeIsNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {"listen: {port: eighty}", "listen.port must be an integer"},
      {"bus: {heartbeat_interval_ms: [1]}", "bus.heartbeat_interval_ms must be an integer"},
      {"bus: {curve: maybe}", "bus.curve must be true or false"},
      {"listen: {? [a, b]: 1}", "listen: every key must be a plain name"},
      {"quotas: {? {x: 1}: {on_demand_cores: 8}}", "quotas: every key must be a plain name"},
  };
  for (const auto& [yaml, message] : cases) {
    auto c = ParseConfig(yaml);
    ASSERT_FALSE(c.has_value()) << yaml;
    EXPECT_NE(c.error().message().find(message), std::string::npos)
        << yaml << " gave: " << c.error().message();
  }
}

// Found by tests/fuzz (config_yaml): a huge host grid overflowed the job-port arithmetic (signed
// overflow, undefined behaviour) before the pod itself was checked.
// A whole v3 pod (256 hosts) works with the default job port range; a range too small for ten
// ports per host is refused, naming the key and the need.
TEST(Config, JobPortsFitThePod) {
  EXPECT_TRUE(ParseConfig("pods: [{name: big, generation: v3}]\n").has_value());
  auto small = ParseConfig("pods: [{name: p, generation: v3}]\nbus: {job_ports: 20000-22000}\n");
  ASSERT_FALSE(small.has_value());
  EXPECT_NE(small.error().message().find("bus.job_ports: 20000-22000 is too small"),
            std::string::npos) << small.error().message();
  EXPECT_FALSE(ParseConfig("bus: {job_ports: 3000-2000}\n").has_value());
  EXPECT_FALSE(ParseConfig("bus: {job_ports: 80-9000}\n").has_value());
  // Numbers beyond int were sscanf("%d"), undefined behaviour; now refused like any bad range.
  for (const char* bad : {"99999999999-20000", "20000-99999999999", "20000", "20000-", "-20000",
                          "20000-30000x", "a-b"}) {
    EXPECT_FALSE(ParseConfig(std::string("bus: {job_ports: \"") + bad + "\"}\n").has_value())
        << bad;
  }
}

// The fleet: the fleet file's schema, zones, `count` expanded, unnamed pods numbered; the job
// ports must cover every host of the fleet; names are unique.
TEST(Config, ReadsAFleetOfPodsAndDevices) {
  auto c = ParseConfig(R"(
pods:
  - {name: big, generation: v3, host_rows: 4, host_cols: 4, zone: europe-west4-a}
  - {name: dev, host_rows: 1, host_cols: 1, count: 3, zone: us-central1-f}
  - {host_rows: 2, host_cols: 2}
)");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  std::vector<std::string> names;
  for (const auto& p : c->pods) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"big", "dev-0", "dev-1", "dev-2", "pod2"}));
  EXPECT_EQ(c->pods[0].zone, "europe-west4-a");
  EXPECT_EQ(c->pods[3].zone, "us-central1-f");
  EXPECT_EQ(c->pods[3].host_rows, 1);

  auto twice = ParseConfig("pods: [{name: a}, {name: a}]");
  ASSERT_FALSE(twice.has_value());
  EXPECT_NE(twice.error().message().find("named 'a'"), std::string::npos)
      << twice.error().message();
  // 64 + 100 hosts need 1,640 ports of ten; 1,001 are too few, naming the fleet.
  auto ports = ParseConfig(
      "pods: [{name: p}, {name: d, host_rows: 1, host_cols: 1, count: 100}]\n"
      "bus: {job_ports: 20000-21000}\n");
  ASSERT_FALSE(ports.has_value());
  EXPECT_NE(ports.error().message().find("too small for a fleet of 101 pods: each of its 164 hosts"),
            std::string::npos)
      << ports.error().message();
  EXPECT_TRUE(ParseConfig("pods: [{name: p}, {name: d, host_rows: 1, host_cols: 1, count: 100}]\n"
                          "bus: {job_ports: 20000-21639}\n")
                  .has_value());
}

TEST(Config, ZonesOfTheFleetHaveCheckpointStoresAndEgressHasPrices) {
  const std::string pods =
      "pods: [{name: a, zone: us-central1-b}, {name: b, zone: europe-west4-a}]\n";
  auto c = ParseConfig(pods + "zones: {us-central1-b: {checkpoint_url: file:///ckpt/b}}\n"
                              "scheduler: {egress_usd_per_gb: {between_continents: 0.12}}\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->zone_checkpoint_urls,
            (std::map<std::string, std::string>{{"us-central1-b", "file:///ckpt/b"}}));
  EXPECT_DOUBLE_EQ(c->scheduler.egress.usd_per_gb_between_continents, 0.12);
  EXPECT_DOUBLE_EQ(c->scheduler.egress.usd_per_gb_between_zones, 0.01);  // the default
  for (const auto& [yaml, says] : std::vector<std::pair<std::string, std::string>>{
           {"zones: {us-east1-c: {checkpoint_url: file:///x}}",
            "zones.us-east1-c: no pod of the fleet is in zone 'us-east1-c' (its zones: "
            "europe-west4-a, us-central1-b)"},
           {"zones: {us-central1-b: {checkpoint_url: http://x}}",
            "zones.us-central1-b.checkpoint_url: expected file:///PATH or s3://BUCKET/..."},
           {"zones: {us-central1-b: {url: file:///x}}", "unknown key 'url' in zones.us-central1-b"},
           {"zones: [a]", "zones: expected a mapping"},
           {"scheduler: {egress_usd_per_gb: {between_zones: -1}}",
            "scheduler.egress_usd_per_gb: prices must be 0..1000"}}) {
    auto bad = ParseConfig(pods + yaml + "\n");
    ASSERT_FALSE(bad.has_value()) << yaml;
    EXPECT_NE(bad.error().message().find(says), std::string::npos) << bad.error().message();
  }
}

TEST(Config, RejectsAHostGridLargerThanThePodBeforeUsingIt) {
  auto huge = ParseConfig("pods: [{host_rows: 2147483647, host_cols: 2147483647}]");
  ASSERT_FALSE(huge.has_value());
  EXPECT_NE(huge.error().message().find("pods[0]"), std::string::npos) << huge.error().message();
  EXPECT_NE(huge.error().message().find("8x8"), std::string::npos) << huge.error().message();
  EXPECT_FALSE(ParseConfig("pods: [{host_rows: 0, host_cols: 4}]").has_value());
  EXPECT_TRUE(ParseConfig("pods: [{generation: v3, host_rows: 8, host_cols: 16}]").has_value());
}

}  // namespace
}  // namespace podsched::daemon

namespace podsched::daemon {
namespace {

TEST(ConfigCurveTest, OnByDefaultOffOnlyExplicitlyAndNeverWithKeys) {
  auto defaults = ParseConfig("");
  ASSERT_TRUE(defaults);
  EXPECT_TRUE(defaults->bus.curve);
  auto off = ParseConfig("bus: {curve: off}");
  ASSERT_TRUE(off) << off.error().message();
  EXPECT_FALSE(off->bus.curve);
  auto enrolled_only = ParseConfig("bus: {curve: on}");
  ASSERT_TRUE(enrolled_only);  // no configured agent keys: enrolment (agents.keys) admits them
  auto contradiction = ParseConfig(
      "bus: {curve: off, curve_agent_keys: [\"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\"]}");
  ASSERT_FALSE(contradiction);
  EXPECT_NE(contradiction.error().message().find("curve is off"), std::string::npos);
}

}  // namespace
}  // namespace podsched::daemon
