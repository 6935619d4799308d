#include "scheduler/daemon/launch_composer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace podsched::daemon {
namespace {

// A v2-32 (2x2 hosts) at column 2, row 1 of a 4x4-host pod: hosts 6, 7, 10, 11 in rank order.
core::LaunchPlan Plan() {
  auto type = pod::AcceleratorType::Parse("v2-32");
  EXPECT_TRUE(type.has_value());
  return core::LaunchPlan{JobEpoch{JobId(42), 3},
                          *type,
                          "pod0",
                          pod::Placement{{1, 2}, {2, 2}},
                          {HostId(6), HostId(7), HostId(10), HostId(11)},
                          {HostId(6), HostId(7), HostId(10), HostId(11)},
                          "/bin/train",
                          {"--steps", "100"},
                          {{"MY_VAR", "x"}},
                          4,
                          core::Launcher::kMpi,
                          std::chrono::seconds(45),
                          1,
                          2,
                          std::nullopt,
                          UserName("ada"),
                          {}};
}

LaunchComposer Composer() {
  return LaunchComposer({CheckpointStores("file:///data/objects/checkpoints", {}),
                         "file:///data/objects/logs"});
}

TEST(LaunchComposerTest, EnvCarriesTheWholeJobContract) {
  auto env = Composer().Env(Plan(), {});
  EXPECT_EQ(env.at("POD_JOB_ID"), "42");
  EXPECT_EQ(env.at("POD_EPOCH"), "3");
  EXPECT_EQ(env.at("POD_ACCELERATOR"), "v2-32");
  EXPECT_EQ(env.at("POD_SLICE"), "pod0:2,1:2x2");
  EXPECT_EQ(env.at("POD_HOSTS"), "6,7,10,11");
  EXPECT_EQ(env.at("POD_CHECKPOINT_URL"), "file:///data/objects/checkpoints");
  EXPECT_EQ(env.at("POD_RESTART_COUNT"), "3");  // restarts + preemptions
  EXPECT_EQ(env.at("MY_VAR"), "x");
  EXPECT_EQ(env.at("POD_CHECKPOINT_DIR"), "/data/objects/checkpoints/job-42");
  EXPECT_EQ(env.at("POD_LAUNCHER"), "mpi");
}

// Hosts 6, 7, 10, 11 with 4 ranks each, agents at .1 (hosts 6, 7) and .2 (10, 11).
TEST(LaunchComposerTest, FrameworkVariablesNameTheSliceInRankOrder) {
  const std::map<HostId, std::string> eps = {{HostId(6), "tcp://10.0.0.1:4000"},
                                             {HostId(7), "tcp://10.0.0.1:4000"},
                                             {HostId(10), "tcp://10.0.0.2:4000"},
                                             {HostId(11), "tcp://10.0.0.2:4000"}};
  auto env = Composer().Env(Plan(), eps);
  EXPECT_EQ(env.at("WORLD_SIZE"), "16");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "4");
  EXPECT_EQ(env.at("JAX_NUM_PROCESSES"), "16");
  EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.1");
  const int block = 20000 + 6 * kPortSlotsPerHost;  // host 6's ports
  EXPECT_EQ(env.at("MASTER_PORT"), std::to_string(block));
  EXPECT_EQ(env.at("JAX_COORDINATOR_ADDRESS"), "10.0.0.1:" + std::to_string(block + 1));
  EXPECT_EQ(env.at("POD_HOST_ADDRS"), "10.0.0.1,10.0.0.1,10.0.0.2,10.0.0.2");
  const std::string addrs = env.at("POD_RANK_ADDRS");
  EXPECT_TRUE(addrs.starts_with("10.0.0.1:" + std::to_string(block + 2) + ",10.0.0.1:" +
                                std::to_string(block + 3) + ","))
      << addrs;
  const int last = 20000 + 11 * kPortSlotsPerHost + 2 + 3;  // host 11, local rank 3
  EXPECT_TRUE(addrs.ends_with(",10.0.0.2:" + std::to_string(last))) << addrs;
  EXPECT_EQ(std::count(addrs.begin(), addrs.end(), ','), 15);
}

// Two slices never share a port: each host's block is its own, and the blocks do not overlap.
TEST(LaunchComposerTest, PortBlocksOfDifferentHostsAreDisjoint) {
  LaunchComposer c = Composer();
  std::set<int> seen;
  for (int h = 0; h < 64; ++h) {
    for (int slot = 0; slot < kPortSlotsPerHost; ++slot) {
      EXPECT_TRUE(seen.insert(c.Port(HostId(h), slot)).second) << h << "/" << slot;
    }
  }
  EXPECT_LE(*seen.rbegin(), 32767);
}

// A v3 pod's 256 hosts share the default range: 49 ports each, disjoint, within the range; a job
// with more ranks per host than its block has rank ports gets no per-rank ports at all.
TEST(LaunchComposerTest, ABigPodSharesTheRangeAndTooManyRanksGetNoRankPorts) {
  const int per_host = PortsPerHost(20000, 32767, 256);
  EXPECT_EQ(per_host, 49);
  EXPECT_EQ(PortsPerHost(20000, 32767, 64), kPortSlotsPerHost);
  LaunchComposer c({CheckpointStores("file:///c", {}), "file:///l", 20000, 32767, per_host});
  EXPECT_EQ(c.Port(HostId(255), per_host - 1), 20000 + 256 * 49 - 1);
  EXPECT_LE(c.Port(HostId(255), per_host - 1), 32767);
  EXPECT_EQ(c.Port(HostId(1), 0), c.Port(HostId(0), per_host - 1) + 1);
  core::LaunchPlan plan = Plan();
  plan.ranks_per_host = 47;
  EXPECT_TRUE(c.Env(plan, {}).contains("POD_RANK_ADDRS"));
  plan.ranks_per_host = 48;
  EXPECT_FALSE(c.Env(plan, {}).contains("POD_RANK_ADDRS"));
  EXPECT_EQ(c.Env(plan, {}).at("WORLD_SIZE"), "192");
}

TEST(LaunchComposerTest, CheckpointDirOnlyForFileUrls) {
  core::LaunchPlan plan = Plan();
  plan.env["POD_CHECKPOINT_URL"] = "s3://b/ck";
  plan.env["POD_CHECKPOINT_DIR"] = "/etc";
  EXPECT_FALSE(Composer().Env(plan, {}).contains("POD_CHECKPOINT_DIR"));
  plan.env["POD_CHECKPOINT_URL"] = "file:///ck/";
  EXPECT_EQ(Composer().Env(plan, {}).at("POD_CHECKPOINT_DIR"), "/ck/job-42");
  plan.launcher = core::Launcher::kExec;
  EXPECT_EQ(Composer().Env(plan, {}).at("POD_LAUNCHER"), "exec");
  EXPECT_EQ(Composer().Compose(plan, {}, "t").launcher(), bus::Launch::EXEC);
}

// A job's store (chosen at its first launch, LaunchPlan::checkpoint_store) is where it reads and
// writes, wherever it runs; its agents make the user's prefix of that store theirs.
TEST(LaunchComposerTest, TheJobsStoreIsItsCheckpointUrlInAnyZone) {
  const std::map<std::string, std::string> zones = {
      {"us-central1-b", "file:///zones/b"}, {"europe-west4-a", "s3://eu-checkpoints/podsched/ckpt?region=europe-west4"}};
  LaunchComposer::Options options;
  options.checkpoint_stores = CheckpointStores("file:///data/objects/checkpoints", zones);
  options.log_url = "file:///data/objects/logs";
  const LaunchComposer c(options);
  core::LaunchPlan plan = Plan();
  plan.zone = "europe-west4-a";
  plan.checkpoint_store = "file:///zones/b/users/ada";
  const bus::Launch l = c.Compose(plan, {}, "t");
  EXPECT_EQ(l.env().at("POD_CHECKPOINT_URL"), "file:///zones/b/users/ada");
  EXPECT_EQ(l.env().at("POD_CHECKPOINT_DIR"), "/zones/b/users/ada/job-42");
  EXPECT_EQ(l.checkpoint_root(), "/zones/b/users/ada");
  // A store of another user, or outside every store: no prefix is made the user's.
  plan.checkpoint_store = "file:///zones/b/users/bob";
  EXPECT_EQ(c.Compose(plan, {}, "t").checkpoint_root(), "");
  plan.checkpoint_store = "file:///elsewhere";
  EXPECT_EQ(c.Compose(plan, {}, "t").checkpoint_root(), "");
  // The bound on a launch's size counts the longest store a job may get.
  const core::JobSpec spec{.user = UserName("ada"), .command = "/bin/true"};
  const auto type = *pod::AcceleratorType::Parse("v2-8");
  const size_t largest = c.LargestLaunchBytes(spec, type, "pod0");
  for (const auto& [zone, store] : zones) {
    const LaunchComposer one_store({CheckpointStores(store, {}), options.log_url});
    EXPECT_GE(largest, one_store.LargestLaunchBytes(spec, type, "pod0")) << zone;
  }
  EXPECT_GE(largest, Composer().LargestLaunchBytes(spec, type, "pod0"));
}

TEST(CheckpointStoresTest, AJobTakesItsZonesStoreOrItsOwnUrlAndTheZoneItIsIn) {
  const CheckpointStores stores(
      "file:///d", std::map<std::string, std::string>{{"zone-b", "file:///zb"}, {"zone-c", "s3://c/k"}});
  core::JobSpec spec{.user = UserName("ada")};
  EXPECT_EQ(stores.Choose(spec, "zone-b").url, "file:///zb/users/ada");
  EXPECT_EQ(stores.Choose(spec, "zone-b").zone, "zone-b");
  EXPECT_EQ(stores.Choose(spec, "zone-c").url, "s3://c/k/users/ada");
  EXPECT_EQ(stores.Choose(spec, "zone-x").url, "file:///d/users/ada");  // no store of its own
  EXPECT_EQ(stores.Choose(spec, "zone-x").zone, "");                     // the default: unknown
  EXPECT_EQ(stores.Choose(spec, "").url, "file:///d/users/ada");
  spec.env["POD_CHECKPOINT_URL"] = "s3://c/k/users/ada/exp1";
  EXPECT_EQ(stores.Choose(spec, "zone-b").url, "s3://c/k/users/ada/exp1");
  EXPECT_EQ(stores.Choose(spec, "zone-b").zone, "zone-c");  // its own URL is in zone-c's store
  spec.env["POD_CHECKPOINT_URL"] = "file:///d/users/ada/exp1";
  EXPECT_EQ(stores.Choose(spec, "zone-b").zone, "");
  // A spec's own URL: in the user's prefix of any store; the refusal names them all.
  EXPECT_TRUE(stores.CheckUserUrl("file:///zb/users/ada/x", "ada").ok());
  EXPECT_TRUE(stores.CheckUserUrl("file:///d/users/ada", "ada").ok());
  const Status outside = stores.CheckUserUrl("file:///zb/users/bob/x", "ada");
  EXPECT_EQ(outside.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(outside.message().find("file:///zb/users/ada (zone zone-b)"), std::string::npos)
      << outside.message();
  EXPECT_EQ(stores.CheckUserUrl("file:///zb/users/ada/../bob", "ada").code(),
            StatusCode::kInvalidArgument);
}

TEST(LaunchComposerTest, ArrayTasksGetTheirArrayIdAndIndex) {
  core::LaunchPlan plan = Plan();
  EXPECT_FALSE(Composer().Env(plan, {}).contains("POD_ARRAY_ID"));
  plan.array = core::ArrayTask{JobId(40), 7, 2, "0-9%2"};
  auto env = Composer().Env(plan, {});
  EXPECT_EQ(env.at("POD_ARRAY_ID"), "40");
  EXPECT_EQ(env.at("POD_ARRAY_INDEX"), "7");
}

TEST(LaunchComposerTest, SliceIsWidthByHeightInHosts) {
  core::LaunchPlan plan = Plan();
  plan.accelerator = *pod::AcceleratorType::Parse("v2-256");  // 4x8 hosts
  plan.placement = pod::Placement{{0, 0}, {8, 4}};           // 8 rows down, 4 columns across
  EXPECT_EQ(Composer().Env(plan, {}).at("POD_SLICE"), "pod0:0,0:4x8");
}

TEST(LaunchComposerTest, SpecCheckpointUrlWinsAndPodVariablesCannotBeOverridden) {
  core::LaunchPlan plan = Plan();
  plan.env["POD_CHECKPOINT_URL"] = "s3://b/ck";
  plan.env["POD_EPOCH"] = "999";
  plan.env["POD_HOSTS"] = "0";
  auto env = Composer().Env(plan, {});
  EXPECT_EQ(env.at("POD_CHECKPOINT_URL"), "s3://b/ck");
  EXPECT_EQ(env.at("POD_EPOCH"), "3");
  EXPECT_EQ(env.at("POD_HOSTS"), "6,7,10,11");
  EXPECT_EQ(env.at("MY_VAR"), "x");
}

TEST(LaunchComposerTest, LaunchHasTheProgramTheHostsAndTheKnownEndpoints) {
  bus::Launch l = Composer().Compose(
      Plan(), {{HostId(6), "tcp://a:1"}, {HostId(7), "tcp://a:1"}, {HostId(10), ""}}, "tok");
  EXPECT_EQ(l.job().job_id(), 42);
  EXPECT_EQ(l.job().epoch(), 3);
  ASSERT_EQ(l.hosts_size(), 4);
  EXPECT_EQ(l.hosts(0), 6);
  EXPECT_EQ(l.hosts(3), 11);
  EXPECT_EQ(l.ranks_per_host(), 4);
  ASSERT_EQ(l.command_size(), 3);
  EXPECT_EQ(l.command(0), "/bin/train");
  EXPECT_EQ(l.command(2), "100");
  EXPECT_EQ(l.rsh_endpoints().size(), 3u);  // host 11 has no agent yet
  EXPECT_EQ(l.rsh_endpoints().at(6), "tcp://a:1");
  EXPECT_EQ(l.rsh_endpoints().at(10), "");
  EXPECT_EQ(l.rsh_token(), "tok");
  EXPECT_EQ(l.grace_seconds(), 45);
  EXPECT_EQ(l.log_url(), "file:///data/objects/logs");
  EXPECT_EQ(l.env().at("POD_JOB_ID"), "42");
  EXPECT_EQ(static_cast<size_t>(l.env().size()),
            Composer().Env(Plan(), {{HostId(6), "tcp://a:1"}, {HostId(7), "tcp://a:1"}}).size());
}

// Audit M9: the size checked at submission bounds every real Launch of the spec, and grows with
// what the spec brings.
TEST(LaunchComposerTest, LargestLaunchBytesBoundsTheRealLaunch) {
  core::LaunchPlan plan = Plan();
  plan.array = core::ArrayTask{JobId(40), 2, 0, "0-9"};
  const std::map<HostId, std::string> eps = {{HostId(6), "tcp://10.0.0.1:4000"},
                                             {HostId(7), "tcp://10.0.0.1:4000"},
                                             {HostId(10), "tcp://10.0.0.2:4000"},
                                             {HostId(11), "tcp://10.0.0.2:4000"}};
  bus::Envelope real;
  *real.mutable_launch() = Composer().Compose(plan, eps, std::string(32, 'a'));
  core::JobSpec spec;
  spec.user = UserName("alice");
  spec.command = plan.command;
  spec.args = plan.args;
  spec.env = plan.env;
  spec.ranks_per_host = plan.ranks_per_host;
  spec.grace_period = plan.grace_period;
  const size_t bound = Composer().LargestLaunchBytes(spec, plan.accelerator, "pod0");
  EXPECT_GE(bound, real.ByteSizeLong());
  EXPECT_LT(bound, 4096u);  // a small job stays small
  spec.env["BIG"] = std::string(100'000, 'x');
  EXPECT_GT(Composer().LargestLaunchBytes(spec, plan.accelerator, "pod0"), bound + 100'000);
  // The contract of a whole v3 pod with many ranks per host is far below the limit alone.
  auto v3 = pod::AcceleratorType::Parse("v3-2048");
  ASSERT_TRUE(v3.has_value());
  core::JobSpec wide;
  wide.command = "/bin/train";
  wide.ranks_per_host = core::kMaxRanksPerHost;
  EXPECT_LT(Composer().LargestLaunchBytes(wide, *v3, "pod0"), kMaxLaunchBytes / 2);
}

}  // namespace
}  // namespace podsched::daemon
