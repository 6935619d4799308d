#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <random>

#include "worker/agent/bus_validate.h"
#include "worker/agent/exit_verdict.h"
#include "common/host_list.h"
#include "worker/agent/launch_book.h"
#include "worker/agent/mpirun_argv.h"
#include "worker/agent/rendezvous_ports.h"
#include "worker/agent/rsh_wire.h"

namespace podsched::agent {
namespace {

// waitpid statuses as the kernel encodes them.
int Exited(int code) { return (code & 0xff) << 8; }
int Signaled(int sig) { return sig & 0x7f; }

MpirunPlan Plan() {
  MpirunPlan p;
  p.mpirun = "/usr/bin/mpirun";
  p.podworker = "/opt/pod/podworker";
  p.hosts = {4, 5, 12, 13};
  p.ranks_per_host = 2;
  p.command = {"podprobe", "--run-seconds", "3"};
  p.env_names = {"POD_EPOCH", "POD_JOB_ID"};
  p.subnet = "127.0.0.0/8";
  return p;
}

TEST(MpirunArgvTest, FollowsTheContract) {
  auto plan = Plan();
  plan.run_as_root = true;
  plan.extra_args = {"--mca", "odls_base_verbose", "0"};
  auto argv = BuildMpirunArgv(plan);
  ASSERT_TRUE(argv.has_value()) << argv.error().ToString();
  const std::vector<std::string> want{
      "/usr/bin/mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "8", "--host",
      "h4:2,h5:2,h12:2,h13:2", "--mca", "plm_rsh_agent", "/opt/pod/podworker rsh", "--mca",
      "plm_rsh_no_tree_spawn", "1", "--mca", "orte_leave_session_attached", "1", "--mca", "btl",
      "self,tcp", "--mca", "pml", "ob1", "--mca", "btl_tcp_if_include", "127.0.0.0/8", "--mca",
      "oob_tcp_if_include", "127.0.0.0/8", "--tag-output", "-x", "POD_EPOCH", "-x", "POD_JOB_ID",
      "--mca", "odls_base_verbose", "0", "podprobe", "--run-seconds", "3"};
  EXPECT_EQ(*argv, want);
}

TEST(MpirunArgvTest, ASliceOfTheLaunchersHostAloneRunsWithoutOrtedOrRsh) {
  auto plan = Plan();
  plan.hosts = {7};
  plan.local = true;
  auto argv = BuildMpirunArgv(plan);
  ASSERT_TRUE(argv.has_value()) << argv.error().ToString();
  const std::vector<std::string> want{
      "/usr/bin/mpirun", "--oversubscribe", "-np", "2", "--host", "localhost:2", "--mca", "btl",
      "self,tcp", "--mca", "pml", "ob1", "--mca", "btl_tcp_if_include", "127.0.0.0/8", "--mca",
      "oob_tcp_if_include", "127.0.0.0/8", "--tag-output", "-x", "POD_EPOCH", "-x", "POD_JOB_ID",
      "podprobe", "--run-seconds", "3"};
  EXPECT_EQ(*argv, want);
  plan.hosts = {7, 8};
  EXPECT_FALSE(BuildMpirunArgv(plan).has_value()) << "only a slice of one host is local";
}

TEST(MpirunArgvTest, AnOperatorsTransportReplacesTheDefault) {
  MpirunPlan plan;
  plan.mpirun = "/usr/bin/mpirun";
  plan.podworker = "/opt/pod/podworker";
  plan.hosts = {4, 5};
  plan.command = {"podprobe"};
  plan.extra_args = {"--mca", "pml", "ucx", "--mca", "btl_tcp_port_min_v4", "30000"};
  auto argv = BuildMpirunArgv(plan);
  ASSERT_TRUE(argv.has_value()) << argv.error().ToString();
  const auto count = [&](const std::vector<std::string>& pair) {
    int n = 0;
    for (size_t i = 0; i + 1 < argv->size(); ++i) {
      n += (*argv)[i] == pair[0] && (*argv)[i + 1] == pair[1];
    }
    return n;
  };
  EXPECT_EQ(count({"pml", "ob1"}), 0) << "mpirun refuses a parameter given twice";
  EXPECT_EQ(count({"pml", "ucx"}), 1);
  EXPECT_EQ(count({"btl", "self,tcp"}), 1) << "only what the operator names is replaced";
  plan.extra_args = {"--mca", "btl", "self,vader,tcp"};
  argv = BuildMpirunArgv(plan);
  ASSERT_TRUE(argv.has_value());
  EXPECT_EQ(count({"btl", "self,tcp"}), 0);
  EXPECT_EQ(count({"btl", "self,vader,tcp"}), 1);
  EXPECT_EQ(count({"pml", "ob1"}), 1);
}

TEST(MpirunArgvTest, RootFlagOnlyAsRootAndBadPlansRejected) {
  auto argv = BuildMpirunArgv(Plan());
  ASSERT_TRUE(argv.has_value());
  EXPECT_EQ(std::count(argv->begin(), argv->end(), "--allow-run-as-root"), 0);
  auto p = Plan();
  p.podworker = "/opt/my pod/podworker";
  EXPECT_FALSE(BuildMpirunArgv(p).has_value());
  p = Plan();
  p.podworker = "podworker";
  EXPECT_FALSE(BuildMpirunArgv(p).has_value());
  p = Plan();
  p.hosts.clear();
  EXPECT_FALSE(BuildMpirunArgv(p).has_value());
  p = Plan();
  p.command.clear();
  EXPECT_FALSE(BuildMpirunArgv(p).has_value());
  p = Plan();
  p.ranks_per_host = 0;
  EXPECT_FALSE(BuildMpirunArgv(p).has_value());
}

TEST(MpirunArgvTest, SubnetAndHostNames) {
  EXPECT_EQ(*DefaultMpiSubnet("127.0.0.1"), "127.0.0.0/8");
  EXPECT_EQ(*DefaultMpiSubnet("10.1.2.3"), "10.1.2.0/24");
  EXPECT_FALSE(DefaultMpiSubnet("localhost").has_value());
  EXPECT_EQ(MpiHostName(12), "h12");
  EXPECT_EQ(*ParseMpiHostName("h12"), 12);
  EXPECT_EQ(*ParseMpiHostName("7"), 7);
  for (const char* bad : {"", "h", "hx", "h-1", "h99999", "host1", "h1 "}) {
    EXPECT_FALSE(ParseMpiHostName(bad).has_value()) << bad;
  }
}

TEST(ExitVerdictTest, TableOfOutcomes) {
  struct Case {
    ExitFacts facts;
    ExitReason reason;
    int32_t code;
  } cases[] = {
      {{Exited(0)}, ExitReason::kCompleted, 0},
      {{Exited(3)}, ExitReason::kFailed, 3},
      {{Signaled(SIGSEGV)}, ExitReason::kFailed, -SIGSEGV},
      {{Exited(75), false, true}, ExitReason::kPreempted, 75},
      {{Exited(75)}, ExitReason::kPreempted, 75},
      {{Signaled(SIGKILL), false, true, true, 5}, ExitReason::kKilledAfterGrace, -SIGKILL},
      {{Exited(1), false, true, true, 5}, ExitReason::kKilledAfterGrace, 1},
      {{Exited(0), false, true}, ExitReason::kCompleted, 0},
      {{Signaled(SIGKILL), true}, ExitReason::kKilled, -SIGKILL},
      {{Exited(0), true, true, true}, ExitReason::kKilled, 0},
      // mpirun 0 with a rank's kRankPreemptedLine: preempted, but only under a Preempt.
      {{Exited(0), false, true, false, 10, true}, ExitReason::kPreempted, 75},
      {{Exited(0), false, false, false, 0, true}, ExitReason::kCompleted, 0},
      {{Exited(3), false, true, false, 10, true}, ExitReason::kFailed, 3},
      {{Signaled(SIGKILL), false, true, true, 10, true}, ExitReason::kKilledAfterGrace, -SIGKILL},
  };
  for (const auto& c : cases) {
    const Verdict v = ClassifyExit(c.facts);
    EXPECT_EQ(v.reason, c.reason) << v.message;
    EXPECT_EQ(v.exit_code, c.code) << v.message;
    EXPECT_FALSE(v.message.empty());
  }
  EXPECT_EQ(ClassifyExit({Signaled(SIGKILL), false, true, true, 30}).message,
            "SIGKILL after 30 s grace");
  EXPECT_EQ(ClassifyExit({Exited(3)}).message, "exit code 3");
  EXPECT_EQ(ClassifyExit({Signaled(SIGSEGV)}).message, "killed by SIGSEGV");
}

TEST(ExitVerdictTest, AnMpiRankHidesOnlyA75UnderAPreemptFromMpirun) {
  const RankEnd preempted = JudgeRankEnd(Exited(75), /*preempt_notice=*/true);
  EXPECT_EQ(preempted.exit_code, 0);
  EXPECT_EQ(preempted.signal, 0);
  EXPECT_TRUE(preempted.report_preempted);
  // Without a notice a 75 is passed on: mpirun's abort keeps a lone rank's end from hanging the rest.
  const RankEnd unasked = JudgeRankEnd(Exited(75), false);
  EXPECT_EQ(unasked.exit_code, 75);
  EXPECT_FALSE(unasked.report_preempted);
  for (bool notice : {false, true}) {
    EXPECT_EQ(JudgeRankEnd(Exited(0), notice).exit_code, 0);
    EXPECT_FALSE(JudgeRankEnd(Exited(0), notice).report_preempted);
    EXPECT_EQ(JudgeRankEnd(Exited(3), notice).exit_code, 3);
    EXPECT_EQ(JudgeRankEnd(Signaled(SIGSEGV), notice).signal, SIGSEGV);
    EXPECT_FALSE(JudgeRankEnd(Signaled(SIGTERM), notice).report_preempted);
  }
}

TEST(ExitVerdictTest, DescribeWaitStatusNamesTheCodeOrTheSignal) {
  EXPECT_EQ(DescribeWaitStatus(3 << 8), "exit code 3");
  EXPECT_EQ(DescribeWaitStatus(SIGKILL), "killed by SIGKILL");
}

TEST(ExitVerdictTest, SshStatus) {
  EXPECT_EQ(SshExitStatus(Exited(0)), 0);
  EXPECT_EQ(SshExitStatus(Exited(42)), 42);
  EXPECT_EQ(SshExitStatus(Signaled(SIGKILL)), 137);
  EXPECT_EQ(SshExitStatus(Signaled(SIGTERM)), 143);
}

JobEpoch Je(int64_t job, int64_t epoch) { return {JobId(job), epoch}; }

TEST(LaunchBookTest, EpochsOnlyGoUpAndNeverTwoRun) {
  LaunchBook b;
  EXPECT_EQ(b.OnLaunch(Je(1, 1)).decision, LaunchBook::Decision::kStart);
  b.MarkRunning(Je(1, 1));
  EXPECT_EQ(b.OnLaunch(Je(1, 1)).decision, LaunchBook::Decision::kStale);  // re-delivery
  auto o = b.OnLaunch(Je(1, 3));
  EXPECT_EQ(o.decision, LaunchBook::Decision::kReplaceOlder);
  EXPECT_EQ(o.older_epoch, 1);
  EXPECT_EQ(b.OnLaunch(Je(1, 2)).decision, LaunchBook::Decision::kStale);  // older than seen
  b.MarkEnded(Je(1, 3));  // not the running one: no effect
  EXPECT_EQ(b.RunningEpoch(JobId(1)), 1);
  b.MarkEnded(Je(1, 1));
  EXPECT_FALSE(b.RunningEpoch(JobId(1)).has_value());
  b.MarkRunning(Je(1, 3));
  EXPECT_TRUE(b.IsRunning(Je(1, 3)));
  EXPECT_FALSE(b.IsRunning(Je(1, 1)));
  EXPECT_EQ(b.HighestEpoch(JobId(1)), 3);
  EXPECT_EQ(b.HighestEpoch(JobId(2)), 0);
  EXPECT_EQ(b.OnLaunch(Je(2, 1)).decision, LaunchBook::Decision::kStart);
}

TEST(LaunchBookTest, ExitsStayUntilAcked) {
  LaunchBook b;
  auto report = [](JobEpoch je, ExitReason reason) {
    ExitReport r;
    r.job = je;
    r.reason = reason;
    return r;
  };
  b.AddExit(report(Je(1, 1), ExitReason::kCompleted));
  b.AddExit(report(Je(2, 4), ExitReason::kReleased));
  b.AddExit(report(Je(1, 1), ExitReason::kKilled));  // replaces the first report of (1, 1)
  ASSERT_EQ(b.unacked().size(), 2u);
  b.Ack({Je(1, 2), Je(3, 1)});  // not pending: ignored
  EXPECT_EQ(b.unacked().size(), 2u);
  b.Ack({Je(1, 1)});
  ASSERT_EQ(b.unacked().size(), 1u);
  EXPECT_EQ(b.unacked()[0].job, Je(2, 4));
}

bus::Launch GoodLaunch() {
  bus::Launch l;
  l.mutable_job()->set_job_id(7);
  l.mutable_job()->set_epoch(2);
  for (int h : {4, 5}) {
    l.add_hosts(h);
    (*l.mutable_rsh_endpoints())[h] = "tcp://127.0.0.1:4000" + std::to_string(h);
  }
  l.set_ranks_per_host(2);
  l.add_command("podprobe");
  (*l.mutable_env())["POD_JOB_ID"] = "7";
  (*l.mutable_env())["POD_EPOCH"] = "2";
  l.set_rsh_token("0123456789abcdef0123456789abcdef");
  l.set_grace_seconds(5);
  return l;
}

TEST(BusValidateTest, LaunchChecks) {
  const std::vector<int32_t> mine{4, 5};
  EXPECT_FALSE(ValidateLaunch(GoodLaunch(), mine).has_value());
  EXPECT_EQ(ValidateLaunch(GoodLaunch(), {0, 1})->reason, "unknown_host");
  using Mutator = void (*)(bus::Launch&);
  const Mutator bad[] = {
      [](bus::Launch& l) { l.mutable_job()->set_epoch(0); },
      [](bus::Launch& l) { l.add_hosts(4); },
      [](bus::Launch& l) { l.add_hosts(-1); },
      [](bus::Launch& l) { l.set_ranks_per_host(0); },
      [](bus::Launch& l) { l.clear_command(); },
      [](bus::Launch& l) { l.set_command(0, ""); },
      [](bus::Launch& l) { (*l.mutable_env())["BAD-NAME"] = "x"; },
      [](bus::Launch& l) { (*l.mutable_env())["X"] = std::string("a\0b", 3); },
      [](bus::Launch& l) { l.mutable_rsh_endpoints()->erase(5); },
      [](bus::Launch& l) { (*l.mutable_rsh_endpoints())[5] = "tcp://host:1"; },
      [](bus::Launch& l) { l.set_rsh_token("short"); },
      [](bus::Launch& l) { l.set_rsh_token("zzzzzzzzzzzzzzzzzzzz"); },
      [](bus::Launch& l) { l.set_grace_seconds(-1); },
      [](bus::Launch& l) { l.mutable_env()->erase("POD_JOB_ID"); },
      [](bus::Launch& l) { l.mutable_env()->erase("POD_EPOCH"); },
      [](bus::Launch& l) { (*l.mutable_env())["POD_EPOCH"] = "3"; },
      [](bus::Launch& l) { (*l.mutable_env())["POD_JOB_ID"] = "07"; },
  };
  for (size_t i = 0; i < std::size(bad); ++i) {
    auto l = GoodLaunch();
    bad[i](l);
    auto r = ValidateLaunch(l, mine);
    ASSERT_TRUE(r.has_value()) << "case " << i;
    EXPECT_EQ(r->reason, "invalid") << "case " << i;
  }
}

// The audit's M7: where the root agent creates directories and writes files is checked here,
// not taken from the bus.
TEST(BusValidateTest, CheckpointRootAndLogUrlStayWhereThisAgentAllows) {
  const std::vector<int32_t> mine{4, 5};
  auto with = [](std::string ckpt, std::string log) {
    auto l = GoodLaunch();
    l.set_checkpoint_root(ckpt);
    l.set_log_url(log);
    return l;
  };
  // Structure, always: absolute, normal form.
  EXPECT_FALSE(ValidateLaunch(with("/srv/ckpt/users/alice", "file:///srv/logs"), mine));
  EXPECT_FALSE(ValidateLaunch(with("", "s3://bucket/logs"), mine));
  for (const char* bad : {"relative/x", "/srv/../etc", "/srv//x", "/srv/./x", "/srv/x/"}) {
    EXPECT_TRUE(ValidateLaunch(with(bad, ""), mine)) << bad;
  }
  EXPECT_TRUE(ValidateLaunch(with("", "file:///srv/logs/../../etc"), mine));
  EXPECT_TRUE(ValidateLaunch(with("", "file://srv/logs"), mine));
  EXPECT_FALSE(ValidateLaunch(with("", "file:///srv//logs/"), mine)) << "a hand-written URL";
  // With the agent's roots: the user's prefix directly below --checkpoint-root, logs below
  // --log-root.
  const LaunchPolicy policy{{"/srv/objects/checkpoints/users"}, "file:///srv/objects"};
  EXPECT_FALSE(ValidateLaunch(
      with("/srv/objects/checkpoints/users/alice", "file:///srv/objects/logs"), mine, policy));
  for (const char* bad : {"/etc/x", "/srv/objects/checkpoints/users",
                          "/srv/objects/checkpoints/users/alice/deeper",
                          "/srv/objects/checkpoints/usersX/alice"}) {
    auto r = ValidateLaunch(with(bad, ""), mine, policy);
    ASSERT_TRUE(r) << bad;
    EXPECT_EQ(r->reason, "invalid");
  }
  for (const char* bad : {"file:///var/lib/x", "file:///srv/objectsX/logs", "s3://b/logs"}) {
    EXPECT_TRUE(ValidateLaunch(with("", bad), mine, policy)) << bad;
  }
  // A store per zone: a prefix directly below any of the roots (a job resumed away from its
  // zone's store), nothing else.
  const LaunchPolicy zones{{"/srv/zone-a/users", "/srv/zone-b/users"}, ""};
  EXPECT_FALSE(ValidateLaunch(with("/srv/zone-b/users/alice", ""), mine, zones));
  EXPECT_FALSE(ValidateLaunch(with("/srv/zone-a/users/alice", ""), mine, zones));
  const auto other = ValidateLaunch(with("/srv/zone-c/users/alice", ""), mine, zones);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->reason, "invalid");
  EXPECT_TRUE(PathIsWithin("/a/b", "/a"));
  EXPECT_TRUE(PathIsWithin("/a", "/a"));
  EXPECT_FALSE(PathIsWithin("/ab", "/a"));
  EXPECT_FALSE(PathIsWithin("/a/../b", "/a"));
}

TEST(BusValidateTest, EnvelopeAndJobControl) {
  bus::Envelope env;
  EXPECT_EQ(ParseEnvelope(std::string(kMaxBusMessage + 1, 'x'), env)->reason, "oversized");
  EXPECT_EQ(ParseEnvelope("\xff\xff\xff\xff garbage", env)->reason, "malformed");
  EXPECT_EQ(ParseEnvelope("", env)->reason, "malformed");  // no body
  bus::Envelope good;
  good.mutable_reregister();
  EXPECT_FALSE(ParseEnvelope(good.SerializeAsString(), env).has_value());
  EXPECT_EQ(env.body_case(), bus::Envelope::kReregister);

  bus::JobEpoch je;
  je.set_job_id(7);
  je.set_epoch(2);
  EXPECT_EQ(ValidateJobControl(je, std::nullopt)->reason, "unknown_job");
  EXPECT_EQ(ValidateJobControl(je, 3)->reason, "stale_epoch");
  EXPECT_FALSE(ValidateJobControl(je, 2).has_value());
}

TEST(BusValidateTest, ReservedEnvNames) {
  for (const char* n :
       {"PODWORKER_TAG", "POD_RSH_TOKEN", "POD_HOST", "POD_PROGRESS_ENDPOINT", "POD_PROGRESS_KEY"}) {
    EXPECT_TRUE(IsReservedEnvName(n)) << n;
  }
  for (const char* n : {"POD_JOB_ID", "POD_HOSTS", "PATH", "POD_HOSTNAME_X"}) {
    EXPECT_FALSE(IsReservedEnvName(n)) << n;
  }
}

TEST(RshWireTest, FramesRoundTripInPieces) {
  const std::string stream = EncodeFrame("hello") + EncodeFrame("") + EncodeFrame("world!");
  FrameReader r;
  std::vector<std::string> got;
  std::string payload;
  for (char c : stream) {
    r.Append(std::string_view(&c, 1));
    while (true) {
      auto next = r.Next(payload);
      ASSERT_TRUE(next.has_value());
      if (!*next) break;
      got.push_back(payload);
    }
  }
  EXPECT_EQ(got, (std::vector<std::string>{"hello", "", "world!"}));
}

TEST(RshWireTest, OversizedFrameIsAnError) {
  FrameReader r;
  r.Append(std::string("\x00\x10\x00\x01", 4));  // 1 MiB + 1
  std::string payload;
  auto next = r.Next(payload);
  ASSERT_FALSE(next.has_value());
  EXPECT_EQ(next.error().code(), StatusCode::kResourceExhausted);
}

TEST(RshWireTest, Endpoints) {
  auto eps = ParseRshEndpoints("4=tcp://127.0.0.1:40001,h5=tcp://10.0.0.2:40002");
  ASSERT_TRUE(eps.has_value()) << eps.error().ToString();
  ASSERT_EQ(eps->size(), 2u);
  EXPECT_EQ(eps->at(4).port, 40001);
  EXPECT_EQ(eps->at(5).ip, "10.0.0.2");
  EXPECT_EQ(FormatRshEndpoints({{4, "tcp://127.0.0.1:1"}, {5, "tcp://127.0.0.1:2"}}),
            "4=tcp://127.0.0.1:1,5=tcp://127.0.0.1:2");
  for (const char* bad : {"", "4", "4=tcp://x:1", "4=tcp://127.0.0.1:0", "x=tcp://127.0.0.1:1",
                          "4=udp://127.0.0.1:1", "4=tcp://127.0.0.1:1,"}) {
    EXPECT_FALSE(ParseRshEndpoints(bad).has_value()) << bad;
  }
}

TEST(RshWireTest, CommandLineSkipsSshOptions) {
  auto c = ParseRshCommandLine({"-x", "-o", "StrictHostKeyChecking=no", "-p22", "-l", "root",
                                "h12", " orted", "-mca", "ess", "\"env\""});
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->host, 12);
  EXPECT_EQ(c->argv, (std::vector<std::string>{" orted", "-mca", "ess", "\"env\""}));
  EXPECT_EQ(JoinForShell(c->argv), " orted -mca ess \"env\"");
  EXPECT_EQ(ParseRshCommandLine({"root@h3", "true"})->host, 3);
  EXPECT_FALSE(ParseRshCommandLine({}).has_value());
  EXPECT_FALSE(ParseRshCommandLine({"h3"}).has_value());
  EXPECT_FALSE(ParseRshCommandLine({"-o"}).has_value());
  EXPECT_FALSE(ParseRshCommandLine({"otherhost", "true"}).has_value());
}

// Outside bytes never crash the parsers (also run under ASan+UBSan).
TEST(ParsersTest, RandomInputIsRejectedOrParsedNeverACrash) {
  std::mt19937 rng(7);
  auto random_bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    return s;
  };
  for (int i = 0; i < 2000; ++i) {
    const std::string bytes = random_bytes(rng() % 300);
    bus::Envelope env;
    if (!ParseEnvelope(bytes, env) && env.has_launch()) (void)ValidateLaunch(env.launch(), {0, 1});
    FrameReader r;
    r.Append(bytes);
    std::string payload;
    for (int k = 0; k < 4; ++k) {
      auto next = r.Next(payload);
      if (!next || !*next) break;
    }
    (void)ParseHostRanges(bytes);
    (void)ParseRshEndpoints(bytes);
    (void)ParseRshCommandLine({bytes, "x"});
    (void)ParseMpiHostName(bytes);
  }
}

}  // namespace
}  // namespace podsched::agent

namespace podsched::agent {
namespace {

// Audit M10: the rendezvous ports a Launch names, and the same env with taken ones moved.
TEST(RendezvousPortsTest, FindsAndMovesMasterAndJaxPorts) {
  const EnvMap env{{"MASTER_ADDR", "10.0.0.1"},
                   {"MASTER_PORT", "29500"},
                   {"JAX_COORDINATOR_ADDRESS", "10.0.0.1:29501"},
                   {"OTHER", "29500"}};
  EXPECT_EQ(RendezvousPortsOf(env), (std::vector<int>{29500, 29501}));
  const EnvMap moved = MoveRendezvousPorts(env, {{29501, 40001}});
  EXPECT_EQ(moved.at("MASTER_PORT"), "29500");
  EXPECT_EQ(moved.at("JAX_COORDINATOR_ADDRESS"), "10.0.0.1:40001");
  EXPECT_EQ(moved.at("OTHER"), "29500");  // only the rendezvous variables
  const EnvMap both = MoveRendezvousPorts(env, {{29500, 40000}, {29501, 40001}});
  EXPECT_EQ(both.at("MASTER_PORT"), "40000");
  EXPECT_EQ(both.at("JAX_COORDINATOR_ADDRESS"), "10.0.0.1:40001");
  // Values that are not ports are not ports: never moved, never probed.
  for (const char* bad : {"", "0", "65536", "29500x", "-1", " 29500"}) {
    EXPECT_TRUE(RendezvousPortsOf({{"MASTER_PORT", bad}}).empty()) << bad;
  }
  EXPECT_TRUE(RendezvousPortsOf({{"JAX_COORDINATOR_ADDRESS", "noport"}}).empty());
  EXPECT_EQ(RendezvousPortsOf({{"MASTER_PORT", "7"}, {"JAX_COORDINATOR_ADDRESS", "h:7"}}),
            (std::vector<int>{7}));
}

}  // namespace
}  // namespace podsched::agent
