// The per-rank part of the launch contract (rank_env.h) and the exec launcher's pure parts
// (exec_launch.h).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "worker/agent/exec_launch.h"
#include "worker/agent/rank_env.h"

namespace podsched::agent {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional(it->second);
  };
}

TEST(RankEnvTest, MpiRankGetsTorchJaxAndTensorFlowNames) {
  auto env = Env({{"OMPI_COMM_WORLD_RANK", "5"},
                  {"OMPI_COMM_WORLD_SIZE", "8"},
                  {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                  {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                  {"POD_RANK_ADDRS", "a:1,a:2,b:1,b:2,c:1,c:2,d:1,d:2"},
                  {"PODWORKER_TAG", "7:2:12"}});
  auto id = RankFromMpi(env);
  ASSERT_TRUE(id.has_value()) << id.error().message();
  auto vars = RankEnv(*id, env);
  EXPECT_EQ(vars.at("RANK"), "5");
  EXPECT_EQ(vars.at("LOCAL_RANK"), "1");
  EXPECT_EQ(vars.at("NODE_RANK"), "2");
  EXPECT_EQ(vars.at("JAX_PROCESS_ID"), "5");
  EXPECT_EQ(vars.at("PODWORKER_TAG"), "7:2:12:5");
  auto tf = nlohmann::json::parse(vars.at("TF_CONFIG"));
  EXPECT_EQ(tf["cluster"]["worker"].size(), 8u);
  EXPECT_EQ(tf["cluster"]["worker"][5], "c:2");
  EXPECT_EQ(tf["task"]["type"], "worker");
  EXPECT_EQ(tf["task"]["index"], 5);
}

TEST(RankEnvTest, ExecRankFromItsIndex) {
  auto env = Env({{"WORLD_SIZE", "8"}, {"LOCAL_WORLD_SIZE", "4"}});
  auto id = RankFromIndex(6, env);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->node_rank, 1);
  EXPECT_EQ(id->local_rank, 2);
  auto vars = RankEnv(*id, env);
  EXPECT_FALSE(vars.contains("TF_CONFIG"));  // no worker list: no TF_CONFIG
  EXPECT_FALSE(vars.contains("PODWORKER_TAG"));
}

// Two slices of 2 hosts, 2 ranks per host: ranks 0-3 are slice 0, ranks 4-7 slice 1.
TEST(RankEnvTest, AMultisliceRankIsToldItsSlice) {
  auto env = Env({{"WORLD_SIZE", "8"},
                  {"LOCAL_WORLD_SIZE", "2"},
                  {"POD_NUM_SLICES", "2"},
                  {"MEGASCALE_NUM_SLICES", "2"}});
  for (const auto& [rank, slice] : {std::pair{0, "0"}, {3, "0"}, {4, "1"}, {7, "1"}}) {
    auto vars = RankEnv(*RankFromIndex(rank, env), env);
    EXPECT_EQ(vars.at("POD_SLICE_ID"), slice) << rank;
    EXPECT_EQ(vars.at("MEGASCALE_SLICE_ID"), slice) << rank;
  }
  // One slice: POD_SLICE_ID 0, no MEGASCALE_*; a count that does not divide the hosts: neither.
  auto one = Env({{"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "1"}, {"POD_NUM_SLICES", "1"}});
  auto vars = RankEnv(*RankFromIndex(3, one), one);
  EXPECT_EQ(vars.at("POD_SLICE_ID"), "0");
  EXPECT_FALSE(vars.contains("MEGASCALE_SLICE_ID"));
  auto odd = Env({{"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "1"}, {"POD_NUM_SLICES", "3"}});
  EXPECT_FALSE(RankEnv(*RankFromIndex(3, odd), odd).contains("POD_SLICE_ID"));
}

TEST(RankEnvTest, InconsistentRanksAreRefused) {
  EXPECT_FALSE(RankFromIndex(8, Env({{"WORLD_SIZE", "8"}, {"LOCAL_WORLD_SIZE", "4"}})));
  EXPECT_FALSE(RankFromIndex(0, Env({{"WORLD_SIZE", "6"}, {"LOCAL_WORLD_SIZE", "4"}})));
  EXPECT_FALSE(RankFromIndex(0, Env({{"WORLD_SIZE", "x"}, {"LOCAL_WORLD_SIZE", "4"}})));
  auto missing = RankFromMpi(Env({{"OMPI_COMM_WORLD_RANK", "0"}}));
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("OMPI_COMM_WORLD_SIZE is not set"), std::string::npos);
  // A worker list of the wrong length is not turned into a wrong TF_CONFIG.
  auto env = Env({{"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "1"}, {"POD_RANK_ADDRS", "a:1"}});
  EXPECT_FALSE(RankEnv(*RankFromIndex(1, env), env).contains("TF_CONFIG"));
}

TEST(ExecLaunchTest, RanksAreHostMajorInSliceOrder) {
  auto plan = PlanRanks({12, 4, 5}, 2);
  ASSERT_EQ(plan.size(), 6u);
  EXPECT_EQ(plan[0].host, 12);
  EXPECT_EQ(plan[1].host, 12);
  EXPECT_EQ(plan[2].host, 4);
  EXPECT_EQ(plan[5].host, 5);
  EXPECT_EQ(plan[5].rank, 5);
  EXPECT_EQ(RankRshArgv("/rsh", "/rk", plan[3], {"sh", "-c", "echo \"$X it's\""}),
            (std::vector<std::string>{"/rsh", "rsh", "h4", "'/rk'", "'rank'", "'--rank'", "'3'",
                                      "'--'", "'sh'", "'-c'", "'echo \"$X it'\\''s\"'"}));
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ExecLauncherArgv("/rk", "/rsh", std::vector<std::string>{"x"}).value(),
            (std::vector<std::string>{"/rk", "launch", "--rsh", "/rsh", "--", "x"}));
  EXPECT_FALSE(ExecLauncherArgv("/rk", "/rsh", std::vector<std::string>{}).has_value());
}

TEST(ExecLaunchTest, ARankOfTheLaunchersHostRunsWithoutRshOrItsSecrets) {
  const RankStart start{4, 1};
  const std::vector<std::string> command{"sh", "-c", "echo \"$X it's\""};
  // The same words that reach the remote host's shell through rsh, unquoted and without it.
  EXPECT_EQ(RankArgv("/rk", start, command),
            (std::vector<std::string>{"/rk", "rank", "--rank", "1", "--", "sh", "-c",
                                      "echo \"$X it's\""}));
  const std::vector<std::string> rsh = RankRshArgv("/rsh", "/rk", start, command);
  ASSERT_EQ(rsh.size(), 3 + RankArgv("/rk", start, command).size());
  EXPECT_EQ(rsh[3], ShellQuote("/rk"));
  EXPECT_EQ(LocalRankEnvironment({"PATH=/bin", "POD_RSH_TOKEN=secret", "POD_HOST=4",
                                  "POD_RSH_ENDPOINTS=4=a:1", "POD_RSH_SEND_ENV=A", "A=POD_RSH_X",
                                  "PODWORKER_TAG=1:2:4", "POD_PREEMPT_FILE=/s/h4.preempt"}),
            (std::vector<std::string>{"PATH=/bin", "POD_HOST=4", "A=POD_RSH_X",
                                      "PODWORKER_TAG=1:2:4", "POD_PREEMPT_FILE=/s/h4.preempt"}));
}

// A rank the launcher starts on its own host gets the variables `podworker rank --rank R` would
// set, over the launcher's environment; a contract that does not admit the rank is an error.
TEST(ExecLaunchTest, ALocalRanksProgramGetsTheRanksVariablesOverTheLaunchersEnvironment) {
  const std::vector<std::string> local = {"PATH=/bin",          "WORLD_SIZE=4",
                                          "LOCAL_WORLD_SIZE=2", "PODWORKER_TAG=1:2:4",
                                          "RANK=stale",         "A=b"};
  auto env = LocalRankProgramEnvironment(3, local);
  ASSERT_TRUE(env.has_value()) << env.error().ToString();
  std::map<std::string, std::string> got;
  for (const std::string& e : *env) got[e.substr(0, e.find('='))] = e.substr(e.find('=') + 1);
  EXPECT_EQ(got.size(), env->size()) << "a variable twice";
  EXPECT_EQ(got["RANK"], "3");
  EXPECT_EQ(got["LOCAL_RANK"], "1");
  EXPECT_EQ(got["NODE_RANK"], "1");
  EXPECT_EQ(got["PODWORKER_TAG"], "1:2:4:3");
  EXPECT_EQ(got["PATH"], "/bin");
  EXPECT_EQ(got["A"], "b");
  // Exactly what RankEnv gives, over the rest.
  const EnvLookup lookup = [&](const std::string& n) -> std::optional<std::string> {
    for (const std::string& e : local) {
      if (e.starts_with(n + "=")) return e.substr(n.size() + 1);
    }
    return std::nullopt;
  };
  for (const auto& [name, value] : RankEnv(RankFromIndex(3, lookup).value(), lookup)) {
    EXPECT_EQ(got[name], value) << name;
  }
  EXPECT_FALSE(LocalRankProgramEnvironment(4, local).has_value());  // WORLD_SIZE 4
  EXPECT_FALSE(LocalRankProgramEnvironment(0, {"PATH=/bin"}).has_value());
}

TEST(ExecLaunchTest, LaunchArgumentsNameTheRshClientOrUseTheLaunchersOwnBinary) {
  auto with = ParseLaunchArgs({"--rsh", "/bin/helper", "--", "python3", "--rsh"}, "/bin/self");
  ASSERT_TRUE(with.has_value()) << with.error().ToString();
  EXPECT_EQ(with->rsh_binary, "/bin/helper");
  EXPECT_EQ(with->command, (std::vector<std::string>{"python3", "--rsh"}));
  // What ExecLauncherArgv produces parses back to the same parts.
  const std::vector<std::string> argv =
      ExecLauncherArgv("/rk", "/rsh", std::vector<std::string>{"a", "b"}).value();
  auto round = ParseLaunchArgs({argv.begin() + 2, argv.end()}, "/rk");  // after "/rk launch"
  ASSERT_TRUE(round.has_value());
  EXPECT_EQ(round->rsh_binary, "/rsh");
  EXPECT_EQ(round->command, (std::vector<std::string>{"a", "b"}));
  // An older launcher's argv (no --rsh): the binary itself is the rsh client.
  auto without = ParseLaunchArgs({"--", "x"}, "/bin/self");
  ASSERT_TRUE(without.has_value());
  EXPECT_EQ(without->rsh_binary, "/bin/self");
  EXPECT_EQ(without->command, std::vector<std::string>{"x"});
  using Args = std::vector<std::string>;
  for (const Args& bad :
       {Args{"--rsh"}, Args{"--rsh", "relative", "--", "x"}, Args{"--rsh", "", "x"}}) {
    auto r = ParseLaunchArgs(bad, "/bin/self");
    ASSERT_FALSE(r.has_value()) << ::testing::PrintToString(bad);
    EXPECT_NE(r.error().message().find("--rsh needs the absolute path"), std::string::npos);
  }
  for (const Args& bad : {Args{}, Args{"--"}, Args{"--rsh", "/h", "--"}, Args{"", "x"}}) {
    auto r = ParseLaunchArgs(bad, "/bin/self");
    ASSERT_FALSE(r.has_value()) << ::testing::PrintToString(bad);
    EXPECT_NE(r.error().message().find("usage: podworker launch"), std::string::npos);
  }
}

TEST(ExecLaunchTest, FirstFailureStopsTheRestAndIsTheVerdict) {
  RankExits exits(4);
  EXPECT_FALSE(exits.Exited(2, 0));
  EXPECT_TRUE(exits.Exited(1, 3));    // the first failure: stop the others
  EXPECT_FALSE(exits.Exited(0, 143)); // killed because of it: not a second stop
  EXPECT_FALSE(exits.Exited(1, 0));   // a rank exits once
  EXPECT_FALSE(exits.all_exited());
  exits.Exited(3, 75);
  EXPECT_TRUE(exits.all_exited());
  EXPECT_EQ(exits.ExitCode(), 3);
  EXPECT_EQ(exits.FailureMessage(), "rank 1 exited 3");
}

TEST(ExecLaunchTest, PreemptedRanksMakeAPreemptedJob) {
  RankExits exits(3);
  EXPECT_FALSE(exits.Exited(0, 75));
  EXPECT_FALSE(exits.Exited(1, 0));   // a rank with nothing to save may exit 0
  EXPECT_FALSE(exits.Exited(2, 75));
  EXPECT_EQ(exits.ExitCode(), 75);
  RankExits ok(2);
  ok.Exited(0, 0);
  ok.Exited(1, 0);
  EXPECT_EQ(ok.ExitCode(), 0);
  RankExits killed(1);
  EXPECT_TRUE(killed.Exited(0, 137));
  EXPECT_EQ(killed.FailureMessage(), "rank 0 was killed by signal 9");
}

}  // namespace
}  // namespace podsched::agent
