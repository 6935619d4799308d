// PlanLauncher: the launcher's argv and the variables the agent adds, for both launchers.
#include "worker/agent/launcher_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace podsched::agent {
namespace {

bus::Launch MakeLaunch(bus::Launch::Launcher launcher) {
  bus::Launch l;
  l.mutable_job()->set_job_id(12);
  l.mutable_job()->set_epoch(3);
  l.add_hosts(4);
  l.add_hosts(5);
  l.set_ranks_per_host(2);
  l.add_command("python3");
  l.add_command("train.py");
  l.set_rsh_token("ab12");
  (*l.mutable_rsh_endpoints())[4] = "10.0.0.1:7000";
  (*l.mutable_rsh_endpoints())[5] = "10.0.0.2:7000";
  l.set_launcher(launcher);
  return l;
}

AgentOptions Options() {
  AgentOptions o;
  o.podworker_path = "/usr/bin/podworker";
  o.mpirun = "mpirun";
  o.mpi_subnet = "10.0.0.0/24";
  return o;
}

LauncherInputs Inputs() {
  LauncherInputs in;
  in.progress_endpoint = "udp://x:1";
  in.progress_key = "k";
  return in;
}

bool Has(const std::vector<std::string>& v, const std::string& item) {
  return std::find(v.begin(), v.end(), item) != v.end();
}

TEST(LauncherPlanTest, AnMpiLaunchRunsEachRankThroughPodworkerRankWithTheAgentsVariables) {
  LauncherInputs in = Inputs();
  in.env = {{"MASTER_PORT", "29500"}, {"POD_RSH_TOKEN", "forged"}};
  in.progress_endpoint = "udp://10.0.0.1:9000";
  in.progress_key = "00ff";
  in.scratch = "/scratch/j12";
  LauncherPlan plan = PlanLauncher(Options(), MakeLaunch(bus::Launch::MPI), in);
  ASSERT_TRUE(plan.argv.has_value()) << plan.argv.error().ToString();
  EXPECT_EQ(plan.argv->front(), "mpirun");
  const auto rank = std::find(plan.argv->begin(), plan.argv->end(), "/usr/bin/podworker");
  ASSERT_NE(rank, plan.argv->end());
  EXPECT_EQ(std::vector<std::string>(rank, plan.argv->end()),
            (std::vector<std::string>{"/usr/bin/podworker", "rank", "--", "python3", "train.py"}));
  EXPECT_FALSE(Has(*plan.argv, "--allow-run-as-root"));
  // The Launch's value of a name the agent owns is ignored, never passed on.
  EXPECT_EQ(plan.ignored, std::vector<std::string>{"POD_RSH_TOKEN"});
  EXPECT_FALSE(Has(plan.overrides, "POD_RSH_TOKEN=forged"));
  for (const char* expected :
       {"MASTER_PORT=29500", "POD_PROGRESS_ENDPOINT=udp://10.0.0.1:9000",
        "POD_PROGRESS_KEY=00ff", "POD_RSH_TOKEN=ab12", "PODWORKER_TAG=12:3:4",
        "TMPDIR=/scratch/j12", "POD_SCRATCH_DIR=/scratch/j12"}) {
    EXPECT_TRUE(Has(plan.overrides, expected)) << expected;
  }
  // Every name the ranks need is passed by mpirun (-x).
  EXPECT_TRUE(Has(*plan.argv, "MASTER_PORT"));
  EXPECT_TRUE(Has(*plan.argv, "POD_PROGRESS_KEY"));
}

TEST(LauncherPlanTest, LaunchAndRankRunFromTheRankBinaryAndRshFromTheHelper) {
  AgentOptions o = Options();
  o.podworker_path = "/opt/pw/podworker-helper";
  o.rank_path = "/opt/pw/podworker-rank";
  LauncherInputs in = Inputs();
  LauncherPlan exec = PlanLauncher(o, MakeLaunch(bus::Launch::EXEC), in);
  ASSERT_TRUE(exec.argv.has_value());
  EXPECT_EQ(*exec.argv,
            (std::vector<std::string>{"/opt/pw/podworker-rank", "launch", "--rsh",
                                      "/opt/pw/podworker-helper", "--", "python3", "train.py"}));
  LauncherPlan mpi = PlanLauncher(o, MakeLaunch(bus::Launch::MPI), in);
  ASSERT_TRUE(mpi.argv.has_value());
  const auto rank = std::find(mpi.argv->begin(), mpi.argv->end(), "/opt/pw/podworker-rank");
  ASSERT_NE(rank, mpi.argv->end());
  EXPECT_EQ(std::vector<std::string>(rank, mpi.argv->end()),
            (std::vector<std::string>{"/opt/pw/podworker-rank", "rank", "--", "python3",
                                      "train.py"}));
  // mpirun's rsh agent stays the helper (the only one of the two with `rsh`).
  bool rsh_agent = false;
  for (const std::string& a : *mpi.argv) {
    rsh_agent |= a.find("/opt/pw/podworker-helper rsh") != std::string::npos;
  }
  EXPECT_TRUE(rsh_agent) << ::testing::PrintToString(*mpi.argv);
}

TEST(LauncherPlanTest, AnExecLauncherGetsItsHostsVariablesForTheRanksItStartsThere) {
  LauncherInputs in = Inputs();
  in.scratch = "/scratch/j12";
  in.preempt_file = "/state/job-12-epoch-3/h4.preempt";
  in.host_dir = "/state/job-12-epoch-3/h4";
  LauncherPlan exec = PlanLauncher(Options(), MakeLaunch(bus::Launch::EXEC), in);
  for (const char* expected :
       {"POD_HOST=4", "POD_PREEMPT_FILE=/state/job-12-epoch-3/h4.preempt",
        "OMPI_MCA_orte_tmpdir_base=/state/job-12-epoch-3/h4/ompi", "PODWORKER_TAG=12:3:4",
        "TMPDIR=/scratch/j12"}) {
    EXPECT_TRUE(Has(exec.overrides, expected)) << expected;
  }
  // mpirun's ranks all arrive by rsh, whose server sets these per host.
  LauncherPlan mpi = PlanLauncher(Options(), MakeLaunch(bus::Launch::MPI), in);
  for (const std::string& o : mpi.overrides) {
    EXPECT_FALSE(o.starts_with("POD_HOST=") || o.starts_with("POD_PREEMPT_FILE=")) << o;
  }
}

TEST(LauncherPlanTest, ASliceOfOneHostStartsItsRanksHereWithoutTheSideChannel) {
  LauncherInputs in = Inputs();
  in.preempt_file = "/state/job-12-epoch-3/h4.preempt";
  in.host_dir = "/state/job-12-epoch-3/h4";
  for (auto launcher : {bus::Launch::MPI, bus::Launch::EXEC}) {
    bus::Launch l = MakeLaunch(launcher);
    l.clear_hosts();
    l.add_hosts(4);
    l.mutable_rsh_endpoints()->erase(5);
    LauncherPlan plan = PlanLauncher(Options(), l, in);
    ASSERT_TRUE(plan.argv.has_value()) << plan.argv.error().ToString();
    for (const char* expected :
         {"POD_HOST=4", "POD_PREEMPT_FILE=/state/job-12-epoch-3/h4.preempt",
          "OMPI_MCA_orte_tmpdir_base=/state/job-12-epoch-3/h4/ompi", "PODWORKER_TAG=12:3:4"}) {
      EXPECT_TRUE(Has(plan.overrides, expected)) << expected;
    }
    for (const std::string& o : plan.overrides) {
      EXPECT_FALSE(o.starts_with("POD_RSH_")) << o << ": the ranks inherit the launcher's env";
    }
    if (launcher == bus::Launch::MPI) {
      EXPECT_TRUE(Has(*plan.argv, "localhost:2")) << ::testing::PrintToString(*plan.argv);
      EXPECT_FALSE(Has(*plan.argv, "plm_rsh_agent"));
    }
  }
}

TEST(LauncherPlanTest, AnExecLaunchSendsItsVariablesAlongTheRshChannel) {
  LauncherInputs in = Inputs();
  in.env = {{"B_VAR", "2"}, {"A_VAR", "1"}};
  in.run_as_root = true;
  LauncherPlan plan = PlanLauncher(Options(), MakeLaunch(bus::Launch::EXEC), in);
  ASSERT_TRUE(plan.argv.has_value());
  EXPECT_EQ(*plan.argv, (std::vector<std::string>{"/usr/bin/podworker", "launch", "--rsh",
                                                  "/usr/bin/podworker", "--", "python3",
                                                  "train.py"}));
  EXPECT_TRUE(Has(plan.overrides,
                  "POD_RSH_SEND_ENV=A_VAR,B_VAR,POD_PROGRESS_ENDPOINT,POD_PROGRESS_KEY"));
  EXPECT_TRUE(plan.ignored.empty());
  for (const std::string& o : plan.overrides) {
    EXPECT_FALSE(o.starts_with("TMPDIR=")) << "no scratch, no TMPDIR";
  }
}

TEST(LauncherPlanTest, HwlocSkipsPciDiscoveryUnlessTheJobSaysOtherwise) {
  for (auto launcher : {bus::Launch::MPI, bus::Launch::EXEC}) {
    LauncherPlan plan = PlanLauncher(Options(), MakeLaunch(launcher), Inputs());
    EXPECT_TRUE(Has(plan.overrides, "HWLOC_COMPONENTS=-pci,-linuxio"));
    LauncherInputs in = Inputs();
    in.env["HWLOC_COMPONENTS"] = "";
    plan = PlanLauncher(Options(), MakeLaunch(launcher), in);
    EXPECT_TRUE(Has(plan.overrides, "HWLOC_COMPONENTS="));
    EXPECT_FALSE(Has(plan.overrides, "HWLOC_COMPONENTS=-pci,-linuxio")) << "the job's own wins";
  }
}

TEST(LauncherPlanTest, RootJobsTellMpirunAndABadCommandIsAnError) {
  LauncherInputs in = Inputs();
  in.run_as_root = true;
  LauncherPlan root = PlanLauncher(Options(), MakeLaunch(bus::Launch::MPI), in);
  ASSERT_TRUE(root.argv.has_value());
  EXPECT_TRUE(Has(*root.argv, "--allow-run-as-root"));
  bus::Launch empty = MakeLaunch(bus::Launch::EXEC);
  empty.clear_command();
  EXPECT_FALSE(PlanLauncher(Options(), empty, in).argv.has_value());
}

}  // namespace
}  // namespace podsched::agent
