// podworker without podsched: this test plays the scheduler with a ZeroMQ ROUTER, starts real
// podworker processes (2 agents serving hosts 0-1 and 2-3), and launches podprobe under real
// mpirun across the 4 hosts. It checks the conversation of docs/bus.md, the exit reasons,
// signals and the rsh side channel, and that nothing is left running.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "common/key_file.h"
#include "proto/bus.pb.h"
#include "worker/agent/exit_verdict.h"

namespace {

namespace fs = std::filesystem;
using namespace podsched::bus;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct Received {
  std::string agent;
  Envelope env;
  Clock::time_point at;
};

pid_t Spawn(const std::vector<std::string>& argv, const std::string& log,
            const std::vector<std::string>& extra_env = {}) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    for (const auto& kv : extra_env) putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

void SendUdp(uint16_t port, const std::string& payload) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sendto(fd, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  close(fd);
}

bool Alive(pid_t pid) { return kill(pid, 0) == 0; }

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("podworker-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "pids");
    OpenRouter("tcp://127.0.0.1:*");
    bus_ = router_.get(zmq::sockopt::last_endpoint);
    StartAgent("a0", "0-1");
    StartAgent("a1", "2-3");
    ASSERT_TRUE(WaitFor([&] { return rsh_.count("a0") && rsh_.count("a1"); }, seconds(20)))
        << "both agents register";
  }

  void TearDown() override {
    for (auto& [id, pid] : agents_) {
      if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, nullptr, 0);
      }
    }
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // A fresh ROUTER on `endpoint` that knows no agent (a restarted scheduler).
  void OpenRouter(const std::string& endpoint) {
    router_ = zmq::socket_t(ctx_, zmq::socket_type::router);
    router_.set(zmq::sockopt::router_mandatory, 1);
    router_.set(zmq::sockopt::router_handover, 1);
    router_.set(zmq::sockopt::linger, 0);
    router_.bind(endpoint);
    known_.clear();
  }

  void StartAgent(const std::string& id, const std::string& hosts,
                  const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv{PODWORKER, "--bus", bus_, "--insecure-bus", "--hosts", hosts,
                                  "--agent-id", id, "--state-dir",
                                  (dir_ / ("state-" + id)).string(), "--advertise", "127.0.0.1",
                                  "--log-level", "debug", "--jobs-as-agent-user",
                                  "--allow-root-jobs", "--pass-env", "PODWORKER_TEST_MARKER"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    agents_[id] = Spawn(argv, (dir_ / (id + ".log")).string(), {marker_});
  }

  // Receives and answers for up to `d`: Register -> Welcome.
  void Pump(milliseconds d) {
    zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
    const auto until = Clock::now() + d;
    while (true) {
      const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now());
      zmq::poll(&item, 1, std::max(left, milliseconds(0)));
      zmq::message_t id, body;
      while (router_.recv(id, zmq::recv_flags::dontwait)) {
        (void)router_.recv(body);
        // The agent connects as "ID/NONCE" (common/key_file.h); route to what it came from.
        Received r{std::string(podsched::AgentIdOfRoutingId(id.to_string())), {}, Clock::now()};
        routes_[r.agent] = id.to_string();
        if (!r.env.ParseFromArray(body.data(), static_cast<int>(body.size()))) continue;
        if (!r.env.has_register_() && !known_.count(r.agent)) {
          Envelope rr;  // what podsched answers an agent it does not know
          rr.mutable_reregister();
          SendTo(r.agent, rr);
        }
        if (r.env.has_register_()) {
          known_.insert(r.agent);
          rsh_[r.agent] = r.env.register_().rsh_endpoint();
          Envelope w;
          w.mutable_welcome()->set_scheduler_id("test");
          w.mutable_welcome()->set_heartbeat_interval_ms(200);
          SendTo(r.agent, w);
        }
        got_.push_back(std::move(r));
      }
      if (Clock::now() >= until) return;
    }
  }

  bool WaitFor(const std::function<bool()>& cond, milliseconds limit) {
    const auto until = Clock::now() + limit;
    while (Clock::now() < until) {
      if (cond()) return true;
      Pump(milliseconds(50));
    }
    return cond();
  }

  void SendTo(const std::string& agent, const Envelope& env) { SendRaw(agent, env.SerializeAsString()); }
  void SendRaw(const std::string& agent, const std::string& bytes) {
    try {
      router_.send(zmq::buffer(RouteOf(agent)), zmq::send_flags::sndmore);
      router_.send(zmq::buffer(bytes), zmq::send_flags::none);
    } catch (const zmq::error_t& e) {
      ADD_FAILURE() << "send to " << agent << ": " << e.what();
    }
  }
  std::string RouteOf(const std::string& agent) const {
    auto it = routes_.find(agent);
    return it == routes_.end() ? agent : it->second;
  }
  void SendBoth(const Envelope& env) {
    SendTo("a0", env);
    SendTo("a1", env);
  }

  Envelope MakeLaunch(int64_t job, int64_t epoch, const std::vector<std::string>& args,
                      int grace = 10) {
    Envelope env;
    Launch* l = env.mutable_launch();
    l->mutable_job()->set_job_id(job);
    l->mutable_job()->set_epoch(epoch);
    for (int h : {0, 1, 2, 3}) {
      l->add_hosts(h);
      (*l->mutable_rsh_endpoints())[h] = rsh_[h < 2 ? "a0" : "a1"];
    }
    l->set_ranks_per_host(1);
    l->add_command(PODPROBE);
    l->add_command("--pid-dir");
    l->add_command((dir_ / "pids").string());
    for (const auto& a : args) l->add_command(a);
    auto& env_map = *l->mutable_env();
    env_map["POD_JOB_ID"] = std::to_string(job);
    env_map["POD_EPOCH"] = std::to_string(epoch);
    env_map["POD_HOSTS"] = "0,1,2,3";
    l->set_rsh_token(kToken);
    l->set_grace_seconds(grace);
    l->set_log_url("file://" + (dir_ / "objects").string());
    return env;
  }

  // A one-host launch on `host`, served by `agent` alone.
  Envelope MakeLaunchOn(int64_t job, const std::string& agent, int host,
                        const std::vector<std::string>& args) {
    Envelope env = MakeLaunch(job, 1, args);
    Launch* l = env.mutable_launch();
    l->clear_hosts();
    l->add_hosts(host);
    l->mutable_rsh_endpoints()->clear();
    (*l->mutable_rsh_endpoints())[host] = rsh_[agent];
    (*l->mutable_env())["POD_HOSTS"] = std::to_string(host);
    return env;
  }

  Envelope MakeControl(int64_t job, int64_t epoch, bool preempt, int grace = 10) {
    Envelope env;
    JobEpoch* je = preempt ? env.mutable_preempt()->mutable_job() : env.mutable_kill()->mutable_job();
    je->set_job_id(job);
    je->set_epoch(epoch);
    if (preempt) env.mutable_preempt()->set_grace_seconds(grace);
    return env;
  }

  const Exited* FindExited(const std::string& agent, int64_t job, int64_t epoch) {
    for (const auto& r : got_) {
      if (r.agent == agent && r.env.has_exited() && r.env.exited().job().job_id() == job &&
          r.env.exited().job().epoch() == epoch) {
        return &r.env.exited();
      }
    }
    return nullptr;
  }

  std::string LogText(int64_t job, int64_t epoch) {
    std::map<int64_t, std::string> by_offset;
    for (const auto& r : got_) {
      if (r.env.has_log() && r.env.log().job().job_id() == job && r.env.log().job().epoch() == epoch) {
        by_offset[r.env.log().offset()] = r.env.log().data();
      }
    }
    std::string all;
    for (const auto& [off, data] : by_offset) {
      EXPECT_EQ(off, static_cast<int64_t>(all.size())) << "Log offsets are contiguous";
      all += data;
    }
    return all;
  }

  std::vector<pid_t> RankPids() {
    std::vector<pid_t> pids;
    for (int r = 0; r < 4; ++r) {
      std::ifstream in(dir_ / "pids" / ("rank-" + std::to_string(r) + ".pid"));
      pid_t p = 0;
      if (in >> p) pids.push_back(p);
    }
    return pids;
  }

  bool AllRanksStarted() { return RankPids().size() == 4; }
  // The ranks' /proc/PID/stat lines, for a failure's message.
  std::string RankStats() {
    std::string out;
    for (pid_t p : RankPids()) {
      std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
      std::string s;
      std::getline(stat, s);
      out += std::to_string(p) + ": " + (s.empty() ? "gone" : s.substr(0, 60)) + "\n";
    }
    return out;
  }
  bool AllRanksGone() {
    auto pids = RankPids();
    return std::none_of(pids.begin(), pids.end(), [](pid_t p) {
      // A zombie whose parent has not reaped it yet (Z), or one being released (X), is gone.
      std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
      std::string s;
      std::getline(stat, s);
      return !s.empty() && s.find(") Z") == std::string::npos && s.find(") X") == std::string::npos;
    });
  }

  // The last heartbeat of `agent` received after `since`.
  const Heartbeat* HeartbeatAfter(const std::string& agent, Clock::time_point since) {
    const Heartbeat* last = nullptr;
    for (const auto& r : got_) {
      if (r.agent == agent && r.env.has_heartbeat() && r.at > since) last = &r.env.heartbeat();
    }
    return last;
  }
  int HeartbeatsAfter(const std::string& agent, Clock::time_point since) {
    int n = 0;
    for (const auto& r : got_) n += r.agent == agent && r.env.has_heartbeat() && r.at > since;
    return n;
  }

  // Processes (other than the agents) that inherited this test's marker from an agent: mpirun,
  // rsh clients, sh, orted, ranks. Orphans reparented to init are found too.
  std::vector<pid_t> JobProcesses() {
    std::vector<pid_t> out;
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string name = e.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = std::stoi(name);
      bool agent = false;
      for (const auto& [id, p] : agents_) agent = agent || p == pid;
      if (agent) continue;
      std::string env = ReadFile(e.path() / "environ");
      std::replace(env.begin(), env.end(), '\0', '\n');
      if (env.find(marker_ + "\n") == std::string::npos) continue;
      std::ifstream stat(e.path() / "stat");
      std::string line;
      std::getline(stat, line);
      if (line.find(") Z") == std::string::npos) out.push_back(pid);
    }
    return out;
  }
  bool NoJobProcesses() { return JobProcesses().empty(); }

  void Kill9(const std::string& victim, const std::string& hosts, int64_t job);

  static constexpr const char* kToken = "00112233445566778899aabbccddeeff";
  fs::path dir_;
  zmq::context_t ctx_;
  zmq::socket_t router_{ctx_, zmq::socket_type::router};
  std::string bus_;
  std::map<std::string, pid_t> agents_;
  std::map<std::string, std::string> rsh_;
  std::map<std::string, std::string> routes_;  // agent id -> its connection's routing id
  std::set<std::string> known_;  // agents registered with this ROUTER
  std::vector<Received> got_;
  std::string marker_ = "PODWORKER_TEST_MARKER=" + std::to_string(getpid()) + "-" +
                        ::testing::UnitTest::GetInstance()->current_test_info()->name();
};

TEST_F(AgentTest, RunsAnMpiJobAcrossTwoAgentsAndReportsEverything) {
  const auto start = Clock::now();
  ASSERT_TRUE(WaitFor([&] { return HeartbeatsAfter("a0", start) >= 2 && HeartbeatsAfter("a1", start) >= 2; },
                      seconds(10)));
  SendBoth(MakeLaunch(7, 1, {"--run-seconds", "1", "--progress-every-ms", "100"}));
  ASSERT_TRUE(WaitFor([&] { return AllRanksStarted(); }, seconds(60)));
  // A datagram of another job on the launcher's progress socket is dropped, and so is one of
  // this job without its POD_PROGRESS_KEY (anyone on the network can send to the port): its
  // checkpoint step must not reach the Exited report, where it would steer victim choice.
  const std::string a0_log = ReadFile(dir_ / "a0.log");
  const size_t at = a0_log.find("progress udp://127.0.0.1:");
  ASSERT_NE(at, std::string::npos);
  const std::string port = a0_log.substr(at + 25, a0_log.find_first_not_of("0123456789", at + 25) - at - 25);
  SendUdp(static_cast<uint16_t>(std::stoi(port)), R"({"job":"999","epoch":1,"step":5})");
  constexpr int64_t kForged = 987654321;
  for (const char* key : {"", R"(,"key":"00000000000000000000000000000000")"}) {
    SendUdp(static_cast<uint16_t>(std::stoi(port)),
            R"({"job":"7","epoch":1,"step":5,"checkpoint_step":)" + std::to_string(kForged) + key + "}");
  }
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 7, 1) && FindExited("a1", 7, 1); }, seconds(90)));
  int progress = 0;
  for (const auto& r : got_) {
    if (!r.env.has_progress()) continue;
    EXPECT_EQ(r.agent, "a0");
    EXPECT_EQ(r.env.progress().job().job_id(), 7);
    EXPECT_EQ(r.env.progress().job().epoch(), 1);
    EXPECT_GT(r.env.progress().step(), 0);
    ++progress;
  }
  EXPECT_GT(progress, 0);
  EXPECT_NE(ReadFile(dir_ / "a0.log").find("(progress_other_job"), std::string::npos);
  EXPECT_NE(ReadFile(dir_ / "a0.log").find("(progress_bad_key"), std::string::npos);
  EXPECT_GT(FindExited("a0", 7, 1)->last_checkpoint_step(), 0);  // podprobe's own, keyed reports
  EXPECT_LT(FindExited("a0", 7, 1)->last_checkpoint_step(), kForged);
  const Exited& launcher = *FindExited("a0", 7, 1);
  EXPECT_EQ(launcher.reason(), Exited::COMPLETED) << launcher.message();
  EXPECT_EQ(launcher.exit_code(), 0);
  EXPECT_EQ(std::vector<int>(launcher.hosts().begin(), launcher.hosts().end()), (std::vector<int>{0, 1}));
  const Exited& other = *FindExited("a1", 7, 1);
  EXPECT_EQ(other.reason(), Exited::RELEASED) << other.message();
  EXPECT_EQ(std::vector<int>(other.hosts().begin(), other.hosts().end()), (std::vector<int>{2, 3}));

  const std::string log = LogText(7, 1);
  EXPECT_NE(log.find("podprobe: world=4 sum=6 job=7 epoch=1 hosts=0,1,2,3"), std::string::npos) << log;
  for (int r = 0; r < 4; ++r) {
    // Rank r runs on host r (1 rank per host, in slice order), named by POD_HOST from its agent.
    const std::string want = "<stdout>:rank " + std::to_string(r) + " on host " + std::to_string(r);
    EXPECT_NE(log.find(want), std::string::npos) << want << "\n" << log;
  }
  EXPECT_EQ(ReadFile(dir_ / "objects" / "7" / "logs" / "epoch-1.log"), log);
  EXPECT_TRUE(AllRanksStarted());
  EXPECT_TRUE(WaitFor([&] { return AllRanksGone(); }, seconds(5)));
  EXPECT_TRUE(WaitFor([&] { return NoJobProcesses(); }, seconds(5)));

  // Exits are resent with every heartbeat until acknowledged.
  auto t = Clock::now();
  ASSERT_TRUE(WaitFor([&] { return HeartbeatsAfter("a0", t) >= 1; }, seconds(5)));
  EXPECT_EQ(HeartbeatAfter("a0", t)->unacked_exits_size(), 1);
  Envelope ack;
  auto* je = ack.mutable_ack()->add_exits();
  je->set_job_id(7);
  je->set_epoch(1);
  SendBoth(ack);
  Pump(milliseconds(300));
  t = Clock::now();
  ASSERT_TRUE(WaitFor([&] { return HeartbeatsAfter("a0", t) >= 1 && HeartbeatsAfter("a1", t) >= 1; },
                      seconds(5)));
  EXPECT_EQ(HeartbeatAfter("a0", t)->unacked_exits_size(), 0);
  EXPECT_EQ(HeartbeatAfter("a1", t)->unacked_exits_size(), 0);
}

TEST_F(AgentTest, PreemptEndsWithExit75WithinGrace) {
  SendBoth(MakeLaunch(8, 1, {"--run-seconds", "120"}));
  ASSERT_TRUE(WaitFor([&] { return AllRanksStarted(); }, seconds(60)));
  const auto sent = Clock::now();
  SendBoth(MakeControl(8, 1, /*preempt=*/true, /*grace=*/30));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 8, 1) && FindExited("a1", 8, 1); }, seconds(45)));
  EXPECT_LT(Clock::now() - sent, seconds(30));
  EXPECT_EQ(FindExited("a0", 8, 1)->reason(), Exited::PREEMPTED) << FindExited("a0", 8, 1)->message();
  EXPECT_EQ(FindExited("a0", 8, 1)->exit_code(), 75);
  EXPECT_EQ(FindExited("a1", 8, 1)->reason(), Exited::RELEASED);
  EXPECT_NE(LogText(8, 1).find("podprobe: preempted"), std::string::npos);
  EXPECT_TRUE(AllRanksGone()) << RankStats();
  EXPECT_TRUE(WaitFor([&] { return NoJobProcesses(); }, seconds(5)));
}

// mpirun ends a job when one rank exits non-zero: it SIGTERMs the other ranks a second later and
// SIGKILLs them a second after that. A rank that exits 75 under a Preempt must not cut short
// another still finishing its checkpoint within the grace (podworker rank tells mpirun 0 and the
// agent 75: exit_verdict.h). Rank 3 takes 4 s after MPI_Finalize, when the others have exited.
TEST_F(AgentTest, AFastRankExiting75DoesNotCutShortASlowOneWithinGrace) {
  SendBoth(MakeLaunch(23, 1, {"--run-seconds", "120", "--slow-stop-rank", "3",
                              "--slow-stop-ms", "4000"}));
  ASSERT_TRUE(WaitFor([&] { return AllRanksStarted(); }, seconds(60)));
  const auto sent = Clock::now();
  SendBoth(MakeControl(23, 1, /*preempt=*/true, /*grace=*/30));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 23, 1) && FindExited("a1", 23, 1); },
                      seconds(45)));
  EXPECT_GE(Clock::now() - sent, seconds(4));
  const Exited& e = *FindExited("a0", 23, 1);
  EXPECT_EQ(e.reason(), Exited::PREEMPTED) << e.message() << "\n" << LogText(23, 1);
  EXPECT_EQ(e.exit_code(), 75);
  EXPECT_EQ(ReadFile(dir_ / "pids" / "rank-3.stopped"), "done\n") << LogText(23, 1);
  EXPECT_NE(LogText(23, 1).find(podsched::agent::kRankPreemptedLine), std::string::npos) << LogText(23, 1);
  EXPECT_TRUE(WaitFor([&] { return NoJobProcesses(); }, seconds(5)));
}

// A Preempt that arrives while mpirun is still starting: the ranks get SIGTERM as they appear.
TEST_F(AgentTest, PreemptDuringStartupIsStillAPreemption) {
  SendBoth(MakeLaunch(21, 1, {"--run-seconds", "120"}));
  SendBoth(MakeControl(21, 1, /*preempt=*/true, /*grace=*/30));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 21, 1) && FindExited("a1", 21, 1); }, seconds(45)));
  EXPECT_EQ(FindExited("a0", 21, 1)->reason(), Exited::PREEMPTED) << FindExited("a0", 21, 1)->message()
      << "\n" << LogText(21, 1);
  EXPECT_EQ(FindExited("a1", 21, 1)->reason(), Exited::RELEASED);
  EXPECT_TRUE(WaitFor([&] { return NoJobProcesses(); }, seconds(5)));
}

TEST_F(AgentTest, IgnoredSigtermIsKilledAfterGrace) {
  SendBoth(MakeLaunch(9, 1, {"--run-seconds", "120", "--ignore-sigterm"}));
  ASSERT_TRUE(WaitFor([&] { return AllRanksStarted(); }, seconds(60)));
  const auto sent = Clock::now();
  SendBoth(MakeControl(9, 1, /*preempt=*/true, /*grace=*/2));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 9, 1) && FindExited("a1", 9, 1); }, seconds(40)));
  EXPECT_GE(Clock::now() - sent, seconds(2));
  const Exited& e = *FindExited("a0", 9, 1);
  EXPECT_EQ(e.reason(), Exited::KILLED_AFTER_GRACE) << e.message();
  EXPECT_EQ(e.message(), "SIGKILL after 2 s grace");
  EXPECT_EQ(FindExited("a1", 9, 1)->reason(), Exited::RELEASED);
  EXPECT_TRUE(AllRanksGone()) << RankStats();
  EXPECT_TRUE(WaitFor([&] { return NoJobProcesses(); }, seconds(5)));
}

TEST_F(AgentTest, KillEndsTheJobAtOnce) {
  SendBoth(MakeLaunch(10, 1, {"--run-seconds", "120"}));
  ASSERT_TRUE(WaitFor([&] { return AllRanksStarted(); }, seconds(60)));
  SendBoth(MakeControl(10, 1, /*preempt=*/false));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 10, 1) && FindExited("a1", 10, 1); }, seconds(20)));
  EXPECT_EQ(FindExited("a0", 10, 1)->reason(), Exited::KILLED) << FindExited("a0", 10, 1)->message();
  EXPECT_EQ(FindExited("a1", 10, 1)->reason(), Exited::RELEASED);
  EXPECT_TRUE(AllRanksGone()) << RankStats();
  EXPECT_TRUE(WaitFor([&] { return NoJobProcesses(); }, seconds(5)));
}

TEST_F(AgentTest, StaleEpochsAreIgnoredAndTheRshTokenIsCheckedAndSingleUse) {
  SendBoth(MakeLaunch(11, 2, {"--run-seconds", "120"}));
  ASSERT_TRUE(WaitFor([&] { return AllRanksStarted(); }, seconds(60)));
  const auto first = RankPids();
  // An older epoch's Launch, Preempt and Kill: ignored (the job keeps running, nothing new starts).
  SendBoth(MakeLaunch(11, 1, {}));
  SendBoth(MakeControl(11, 1, true, 1));
  SendBoth(MakeControl(11, 1, false));
  const auto t = Clock::now();
  ASSERT_TRUE(WaitFor([&] { return HeartbeatsAfter("a0", t) >= 3 && HeartbeatsAfter("a1", t) >= 3; },
                      seconds(10)));
  for (const char* a : {"a0", "a1"}) {
    const Heartbeat* hb = HeartbeatAfter(a, t);
    ASSERT_EQ(hb->running_size(), 1) << a;
    EXPECT_EQ(hb->running(0).job().epoch(), 2);
    EXPECT_GT(hb->running(0).pids_size(), 0);
  }
  EXPECT_EQ(FindExited("a0", 11, 1), nullptr);
  EXPECT_EQ(RankPids(), first);
  for (pid_t p : first) EXPECT_TRUE(Alive(p));

  // rsh with a bad token, a wrong epoch, a host the agent does not serve: refused, exit 255.
  auto rsh = [&](const std::string& token, const std::string& epoch, const std::string& host) {
    const std::string log = (dir_ / "rsh.log").string();
    fs::remove(log);
    const pid_t pid = Spawn({PODWORKER, "rsh", host, "touch", (dir_ / "rsh-ran").string()}, log,
                            {"POD_RSH_ENDPOINTS=0=" + rsh_["a0"] + ",2=" + rsh_["a1"] + ",3=" + rsh_["a0"],
                             "POD_RSH_TOKEN=" + token, "POD_JOB_ID=11", "POD_EPOCH=" + epoch});
    int status = 0;
    waitpid(pid, &status, 0);
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(log));
  };
  auto [code, err] = rsh("ffffffffffffffffffffffffffffffff", "2", "h0");
  EXPECT_EQ(code, 255);
  EXPECT_NE(err.find("bad rsh token"), std::string::npos) << err;
  std::tie(code, err) = rsh(kToken, "1", "h0");
  EXPECT_EQ(code, 255);
  EXPECT_NE(err.find("no running launch"), std::string::npos) << err;
  std::tie(code, err) = rsh(kToken, "2", "h3");  // host 3 is a1's, endpoint points at a0
  EXPECT_EQ(code, 255);
  EXPECT_NE(err.find("not served"), std::string::npos) << err;
  // The right secret, but host 2's token has served its one session (mpirun's orted): a replay
  // is refused, nothing runs.
  std::tie(code, err) = rsh(kToken, "2", "h2");
  EXPECT_EQ(code, 255);
  EXPECT_NE(err.find("session(s) already"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "rsh-ran"));

  SendBoth(MakeControl(11, 2, false));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 11, 2) && FindExited("a1", 11, 2); }, seconds(20)));
  EXPECT_TRUE(AllRanksGone()) << RankStats();
  EXPECT_TRUE(WaitFor([&] { return NoJobProcesses(); }, seconds(5)));
}

// The audit's M13: an object store that takes the connection and never answers held the job's
// Exited (and so its hosts) until curl gave up, and every later exit of the agent behind it.
// With --exit-log-deadline-seconds 2 the exit is reported after 2 s, saying the log was still
// being stored. (A third agent: restarting one under the same id races ZeroMQ's handover.)
TEST_F(AgentTest, AHungObjectStoreDoesNotHoldTheExit) {
  // An "object store" that takes each connection and never answers; at the end it closes them,
  // so that the agent's upload fails at once and the agent can stop.
  const int hung = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(hung, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(hung, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(hung, 16), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(hung, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  std::vector<int> held;
  std::mutex held_mu;
  std::thread acceptor([&] {
    for (int fd; (fd = accept(hung, nullptr, nullptr)) >= 0;) {
      std::lock_guard lock(held_mu);
      held.push_back(fd);
    }
  });
  auto release = [&] {
    shutdown(hung, SHUT_RDWR);  // wakes the accept
    acceptor.join();
    close(hung);
    for (int fd : held) close(fd);
  };

  StartAgent("a2", "4-5", {"--exit-log-deadline-seconds", "2"});
  if (!WaitFor([&] { return rsh_.count("a2") && HeartbeatsAfter("a2", {}) >= 1; }, seconds(20))) {
    release();
    FAIL() << "a2 did not register";
  }
  Envelope launch = MakeLaunchOn(26, "a2", 4, {});
  launch.mutable_launch()->set_log_url("s3://bucket/logs?endpoint=" + endpoint +
                                       "&access_key=a&secret_key=b&max_attempts=1");
  SendTo("a2", launch);
  // curl alone would wait 30 s (its low-speed limit) before failing the upload.
  const bool exited = WaitFor([&] { return FindExited("a2", 26, 1) != nullptr; }, seconds(20));
  {
    std::lock_guard lock(held_mu);
    EXPECT_FALSE(held.empty()) << "the upload never reached the hung store";
  }
  // Meanwhile another job's log goes to a store that works: uploads run side by side, so it is
  // stored before its exit is reported, not queued behind the hung one.
  Envelope second = MakeLaunchOn(27, "a2", 5, {});
  second.mutable_launch()->set_log_url("file://" + (dir_ / "objects").string());
  SendTo("a2", second);
  const bool second_exited =
      WaitFor([&] { return FindExited("a2", 27, 1) != nullptr; }, seconds(20));
  // A stopping agent does not wait for the hung upload (at most 5 s, then it leaves it).
  kill(agents_["a2"], SIGTERM);
  int status = -1;
  const bool stopped = WaitFor(
      [&] { return waitpid(agents_["a2"], &status, WNOHANG) == agents_["a2"]; }, seconds(20));
  release();
  if (stopped) agents_["a2"] = -1;
  ASSERT_TRUE(exited) << ReadFile(dir_ / "a2.log");
  const Exited& e = *FindExited("a2", 26, 1);
  EXPECT_EQ(e.reason(), Exited::COMPLETED) << e.message();
  EXPECT_NE(e.message().find("the log was still being stored"), std::string::npos)
      << e.message();
  ASSERT_TRUE(second_exited) << ReadFile(dir_ / "a2.log");
  const Exited& e2 = *FindExited("a2", 27, 1);
  EXPECT_EQ(e2.reason(), Exited::COMPLETED) << e2.message();
  EXPECT_EQ(e2.message().find("still being stored"), std::string::npos) << e2.message();
  EXPECT_TRUE(fs::exists(dir_ / "objects" / "27" / "logs" / "epoch-1.log"));
  ASSERT_TRUE(stopped) << "the agent waited for the hung upload\n" << ReadFile(dir_ / "a2.log");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_NE(ReadFile(dir_ / "a2.log").find("still in progress"), std::string::npos);
}

// The audit's M10: podsched's rendezvous ports are predictable and every job on a machine shares
// its network. A port another process already listens on (another user's job waiting to take
// over the rendezvous) is moved to a free one for every rank, and the job's log says so; a free
// one is kept.
TEST_F(AgentTest, ATakenRendezvousPortIsMovedForTheJob) {
  const int squatter = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(squatter, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(squatter, 4), 0);
  ASSERT_EQ(getsockname(squatter, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int taken = ntohs(addr.sin_port);
  const int free_fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in free_addr{};
  free_addr.sin_family = AF_INET;
  len = sizeof free_addr;
  ASSERT_EQ(bind(free_fd, reinterpret_cast<sockaddr*>(&free_addr), sizeof free_addr), 0);
  ASSERT_EQ(getsockname(free_fd, reinterpret_cast<sockaddr*>(&free_addr), &len), 0);
  const int kept = ntohs(free_addr.sin_port);
  close(free_fd);  // free again: the job keeps it

  Envelope launch = MakeLaunchOn(28, "a0", 0, {});
  Launch* l = launch.mutable_launch();
  l->clear_command();
  for (const char* a : {"/bin/sh", "-c", "echo master=$MASTER_PORT jax=$JAX_COORDINATOR_ADDRESS"}) {
    l->add_command(a);
  }
  (*l->mutable_env())["MASTER_ADDR"] = "127.0.0.1";
  (*l->mutable_env())["MASTER_PORT"] = std::to_string(taken);
  (*l->mutable_env())["JAX_COORDINATOR_ADDRESS"] = "127.0.0.1:" + std::to_string(kept);
  SendTo("a0", launch);
  const bool exited = WaitFor([&] { return FindExited("a0", 28, 1) != nullptr; }, seconds(60));
  close(squatter);
  ASSERT_TRUE(exited) << ReadFile(dir_ / "a0.log");
  const std::string log = LogText(28, 1);
  const size_t at = log.find("master=");
  ASSERT_NE(at, std::string::npos) << log;
  const int got = std::atoi(log.c_str() + at + 7);
  EXPECT_GT(got, 0) << log;
  EXPECT_NE(got, taken) << log;
  EXPECT_NE(log.find("jax=127.0.0.1:" + std::to_string(kept)), std::string::npos) << log;
  EXPECT_NE(log.find("rendezvous port " + std::to_string(taken) + " is already in use"),
            std::string::npos)
      << log;
}

// The audit's M12: a job that forks without end (here a 300-deep chain of shells) took the
// agent's scans, and the machine, with it. Over --max-job-processes it is killed whole at the
// next scan and fails saying so; the agent goes on.
TEST_F(AgentTest, AJobOverTheProcessCapIsKilledAndTheAgentGoesOn) {
  StartAgent("a2", "4", {"--max-job-processes", "20"});
  ASSERT_TRUE(WaitFor([&] { return rsh_.count("a2") && HeartbeatsAfter("a2", {}) >= 1; },
                      seconds(20)));
  Envelope launch = MakeLaunchOn(29, "a2", 4, {});
  Launch* l = launch.mutable_launch();
  l->clear_command();
  for (const char* a : {"/bin/sh", "-c",
                        "f() { if [ \"$1\" -gt 0 ]; then f $(($1 - 1)) & wait; "
                        "else sleep 3017; fi; }; f 300"}) {
    l->add_command(a);
  }
  SendTo("a2", launch);
  ASSERT_TRUE(WaitFor([&] { return FindExited("a2", 29, 1) != nullptr; }, seconds(60)))
      << ReadFile(dir_ / "a2.log");
  const Exited& e = *FindExited("a2", 29, 1);
  EXPECT_EQ(e.reason(), Exited::FAILED) << e.message();
  EXPECT_NE(e.message().find("more than --max-job-processes 20"), std::string::npos)
      << e.message();
  EXPECT_NE(LogText(29, 1).find("more than --max-job-processes 20"), std::string::npos);
  auto chain_left = [] {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      const std::string cmd = ReadFile(entry.path() / "cmdline");
      if (cmd.find("sleep") != std::string::npos && cmd.find("3017") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(WaitFor([&] { return !chain_left(); }, seconds(10))) << "the chain outlived its job";
  const auto after = Clock::now();
  EXPECT_TRUE(WaitFor([&] { return HeartbeatsAfter("a2", after) >= 1; }, seconds(10)))
      << "the agent stopped";
}

// The audit's M7: whoever answers on the bus chose where the root agent created directories and
// wrote logs. With --checkpoint-root and --log-root, a Launch naming another place is dropped
// as invalid (nothing is created there); one within them runs.
TEST_F(AgentTest, ALaunchOutsideTheAgentsRootsIsRefused) {
  const fs::path users = dir_ / "ckpt" / "users";
  fs::create_directories(users);
  StartAgent("a2", "4", {"--checkpoint-root", users.string(), "--log-root",
                         "file://" + (dir_ / "objects").string()});
  ASSERT_TRUE(WaitFor([&] { return rsh_.count("a2") && HeartbeatsAfter("a2", {}) >= 1; },
                      seconds(20)));

  const fs::path outside = dir_ / "elsewhere" / "alice";  // stands for /etc/x: not below users/
  Envelope bad = MakeLaunchOn(23, "a2", 4, {});
  bad.mutable_launch()->set_checkpoint_root(outside.string());
  SendTo("a2", bad);
  Envelope bad_log = MakeLaunchOn(24, "a2", 4, {});
  bad_log.mutable_launch()->set_log_url("file://" + (dir_ / "var-lib").string());
  SendTo("a2", bad_log);
  ASSERT_TRUE(WaitFor([&] {
    const std::string log = ReadFile(dir_ / "a2.log");
    return log.find("is not a directory directly below this agent's --checkpoint-root") !=
               std::string::npos &&
           log.find("is outside this agent's --log-root") != std::string::npos;
  }, seconds(10))) << ReadFile(dir_ / "a2.log");
  EXPECT_FALSE(fs::exists(outside.parent_path()));
  const auto after = Clock::now();
  ASSERT_TRUE(WaitFor([&] { return HeartbeatsAfter("a2", after) >= 2; }, seconds(10)));
  EXPECT_EQ(HeartbeatAfter("a2", after)->running_size(), 0);

  Envelope good = MakeLaunchOn(25, "a2", 4, {});
  good.mutable_launch()->set_checkpoint_root((users / "alice").string());
  SendTo("a2", good);
  ASSERT_TRUE(WaitFor([&] { return FindExited("a2", 25, 1) != nullptr; }, seconds(60)))
      << ReadFile(dir_ / "a2.log");
  EXPECT_EQ(FindExited("a2", 25, 1)->reason(), Exited::COMPLETED)
      << FindExited("a2", 25, 1)->message();
  EXPECT_TRUE(fs::is_directory(users / "alice"));
}

// The audit's M7: a root agent on plain TCP obeys whoever answers on the bus port. Without a key
// file it refuses to start unless told --insecure-bus (as every other test here is).
TEST_F(AgentTest, ARootAgentWithoutAKeyFileRefusesPlainTcp) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const std::string log = (dir_ / "plain.log").string();
  const pid_t pid = Spawn({PODWORKER, "--bus", bus_, "--hosts", "6", "--agent-id", "plain",
                           "--state-dir", (dir_ / "state-plain").string()},
                          log);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string err = ReadFile(log);
  EXPECT_NE(err.find("running as root without --bus-key-file"), std::string::npos) << err;
  EXPECT_NE(err.find("--insecure-bus"), std::string::npos) << err;
}

TEST_F(AgentTest, GarbageOnEveryInputDoesNotCrashTheAgent) {
  std::mt19937 rng(42);
  auto random_bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    return s;
  };
  for (int i = 0; i < 200; ++i) SendRaw("a0", random_bytes(rng() % 512));
  // A Launch for hosts the agent does not serve, one with nonsense fields, Preempt/Kill/Welcome
  // for jobs that do not exist, an agent-bound message type, a multi-part message.
  Envelope foreign = MakeLaunch(12, 1, {});
  foreign.mutable_launch()->clear_hosts();
  foreign.mutable_launch()->add_hosts(40);
  SendTo("a0", foreign);
  Envelope nonsense = MakeLaunch(12, 1, {});
  nonsense.mutable_launch()->set_ranks_per_host(-5);
  nonsense.mutable_launch()->set_rsh_token("not hex");
  SendTo("a0", nonsense);
  SendTo("a0", MakeControl(99, 1, true));
  SendTo("a0", MakeControl(99, 1, false));
  Envelope hb;
  hb.mutable_heartbeat()->set_agent_id("a0");
  SendTo("a0", hb);
  router_.send(zmq::buffer(RouteOf("a0")), zmq::send_flags::sndmore);
  router_.send(zmq::str_buffer("part1"), zmq::send_flags::sndmore);
  router_.send(zmq::str_buffer("part2"), zmq::send_flags::none);
  // Oversized (past ZMQ_MAXMSGSIZE: the agent's socket drops the connection and reconnects).
  SendRaw("a1", std::string(2 << 20, 'x'));
  // Random bytes and an oversized frame to the rsh server, garbage to the progress port.
  for (const auto& [agent, ep] : rsh_) {
    const auto colon = ep.rfind(':');
    const std::string port = ep.substr(colon + 1);
    std::system(("(head -c 4096 /dev/urandom; printf '\\x7f\\xff\\xff\\xff') | timeout 5 "
                 "bash -c 'cat > /dev/tcp/127.0.0.1/" + port + "' 2>/dev/null").c_str());
  }
  const auto t = Clock::now();
  ASSERT_TRUE(WaitFor([&] { return HeartbeatsAfter("a0", t) >= 3 && HeartbeatsAfter("a1", t) >= 3; },
                      seconds(15)));
  EXPECT_TRUE(Alive(agents_["a0"]));
  EXPECT_TRUE(Alive(agents_["a1"]));
  EXPECT_NE(ReadFile(dir_ / "a0.log").find("dropped bus message (malformed"), std::string::npos);
  EXPECT_NE(ReadFile(dir_ / "a0.log").find("(unknown_host"), std::string::npos);
  EXPECT_NE(ReadFile(dir_ / "a0.log").find("(unknown_job"), std::string::npos);
  // And they still run a job.
  SendBoth(MakeLaunch(13, 1, {}));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 13, 1) && FindExited("a1", 13, 1); }, seconds(90)));
  EXPECT_EQ(FindExited("a0", 13, 1)->reason(), Exited::COMPLETED) << FindExited("a0", 13, 1)->message();
}

// Without a token nobody can hold the rsh port: 300 idle connections (more than the 128 the
// agent lets wait for a request) neither stop a job's own rsh sessions nor stay open.
TEST_F(AgentTest, IdleConnectionsCannotExhaustTheRshPort) {
  const std::string ep = rsh_["a0"];
  const int port = std::stoi(ep.substr(ep.rfind(':') + 1));
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    idle.push_back(fd);
  }
  SendBoth(MakeLaunch(17, 1, {}));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 17, 1) && FindExited("a1", 17, 1); }, seconds(90)));
  EXPECT_EQ(FindExited("a0", 17, 1)->reason(), Exited::COMPLETED) << FindExited("a0", 17, 1)->message();
  // Every idle connection is closed by the agent (evicted, or after the request timeout).
  auto closed = [&] {
    for (int fd : idle) {
      char buf[256];
      ssize_t n;
      while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) {}  // refusal frames, if any
      if (n < 0 && errno == EAGAIN) return false;                    // still open
    }
    return true;  // every one at end of stream (or reset)
  };
  EXPECT_TRUE(WaitFor(closed, seconds(20)));
  for (int fd : idle) close(fd);
  EXPECT_TRUE(Alive(agents_["a0"]));
}

TEST_F(AgentTest, NonZeroExitIsFailedWithTheCode) {
  SendBoth(MakeLaunch(16, 1, {"--exit-code", "3"}));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 16, 1) && FindExited("a1", 16, 1); }, seconds(90)));
  EXPECT_EQ(FindExited("a0", 16, 1)->reason(), Exited::FAILED);
  EXPECT_EQ(FindExited("a0", 16, 1)->exit_code(), 3);
  EXPECT_EQ(FindExited("a0", 16, 1)->message(), "exit code 3");
  EXPECT_EQ(FindExited("a1", 16, 1)->reason(), Exited::RELEASED);
  EXPECT_TRUE(WaitFor([&] { return NoJobProcesses(); }, seconds(5)));
}

TEST_F(AgentTest, ANewerEpochReplacesTheRunningOne) {
  SendBoth(MakeLaunch(17, 1, {"--run-seconds", "120"}));
  ASSERT_TRUE(WaitFor([&] { return AllRanksStarted(); }, seconds(60)));
  const auto old_pids = RankPids();
  for (int r = 0; r < 4; ++r) fs::remove(dir_ / "pids" / ("rank-" + std::to_string(r) + ".pid"));
  SendBoth(MakeLaunch(17, 2, {}));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 17, 2) && FindExited("a1", 17, 2); }, seconds(90)));
  // The old epoch was killed and reported before the new one started; never both at once.
  ASSERT_NE(FindExited("a0", 17, 1), nullptr);
  EXPECT_EQ(FindExited("a0", 17, 1)->reason(), Exited::KILLED);
  EXPECT_EQ(FindExited("a0", 17, 2)->reason(), Exited::COMPLETED) << FindExited("a0", 17, 2)->message();
  for (pid_t p : old_pids) EXPECT_FALSE(Alive(p) && ReadFile("/proc/" + std::to_string(p) + "/stat").find(") Z") == std::string::npos);
  EXPECT_NE(LogText(17, 2).find("epoch=2"), std::string::npos);
  size_t old_exit = got_.size(), new_log = got_.size();
  for (size_t i = 0; i < got_.size(); ++i) {
    const auto& e = got_[i].env;
    if (e.has_exited() && e.exited().job().epoch() == 1 && got_[i].agent == "a0") old_exit = std::min(old_exit, i);
    if (e.has_log() && e.log().job().epoch() == 2) new_log = std::min(new_log, i);
  }
  EXPECT_LT(old_exit, new_log) << "epoch 1 reported gone before epoch 2 produced output";
}

// A previous run of the agent recorded a process in its state dir and died: the next run on the
// same state dir kills it before registering.
TEST_F(AgentTest, RestartKillsWhatThePreviousRunLeft) {
  const pid_t leftover = Spawn({"/bin/sleep", "300"}, (dir_ / "sleep.log").string());
  std::string stat;
  ASSERT_TRUE(WaitFor([&] {
    stat = ReadFile("/proc/" + std::to_string(leftover) + "/stat");
    return stat.find("(sleep)") != std::string::npos;
  }, seconds(5)));
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  for (int i = 3; i <= 22 && fields >> f; ++i) {
  }
  kill(agents_["a1"], SIGKILL);
  waitpid(agents_["a1"], nullptr, 0);
  { std::ofstream(dir_ / "state-a1" / "processes") << leftover << " " << f << "\n"; }
  // And what a killed run leaves on disk (audit L2): an epoch's directories, an output spool.
  fs::create_directories(dir_ / "state-a1" / "jobs" / "9.1" / "h2" / "ompi");
  { std::ofstream(dir_ / "state-a1" / "jobs" / "9.1" / "h2.preempt") << "1\n"; }
  { std::ofstream(dir_ / "state-a1" / "job-9-epoch-1.log") << "output\n"; }
  StartAgent("a1", "2-3");
  int status = 0;
  bool reaped = false;
  ASSERT_TRUE(WaitFor([&] { return reaped = reaped || waitpid(leftover, &status, WNOHANG) == leftover; },
                      seconds(20)));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(WaitFor([&] {
    return ReadFile(dir_ / "a1.log").find("killed 1 processes left by a previous run") != std::string::npos;
  }, seconds(10)));
  EXPECT_TRUE(WaitFor([&] {
    return !fs::exists(dir_ / "state-a1" / "jobs" / "9.1") &&
           !fs::exists(dir_ / "state-a1" / "job-9-epoch-1.log");
  }, seconds(10))) << ReadFile(dir_ / "a1.log");
}

// The scheduler restarts (a new ROUTER on the same address that knows no agent): the agents'
// heartbeats get Reregister, and their Register says what runs, so it can be adopted.
TEST_F(AgentTest, AfterASchedulerRestartTheAgentsReportWhatRuns) {
  SendBoth(MakeLaunch(19, 1, {"--run-seconds", "120"}));
  ASSERT_TRUE(WaitFor([&] { return AllRanksStarted(); }, seconds(60)));
  router_.close();
  std::this_thread::sleep_for(milliseconds(500));  // the scheduler is down for a while
  const auto t = Clock::now();
  OpenRouter(bus_);
  auto registered = [&](const std::string& agent) -> const Register* {
    for (const auto& r : got_) {
      if (r.agent == agent && r.at > t && r.env.has_register_()) return &r.env.register_();
    }
    return nullptr;
  };
  ASSERT_TRUE(WaitFor([&] { return registered("a0") && registered("a1"); }, seconds(20)));
  for (const char* a : {"a0", "a1"}) {
    const Register& r = *registered(a);
    ASSERT_EQ(r.running_size(), 1) << a;
    EXPECT_EQ(r.running(0).job().job_id(), 19);
    EXPECT_EQ(r.running(0).job().epoch(), 1);
    EXPECT_EQ(r.running(0).hosts_size(), 2);
    EXPECT_GT(r.running(0).pids_size(), 0);
  }
  for (pid_t p : RankPids()) EXPECT_TRUE(Alive(p));  // the job itself never noticed
  SendBoth(MakeControl(19, 1, /*preempt=*/false));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a0", 19, 1) && FindExited("a1", 19, 1); }, seconds(20)));
  EXPECT_TRUE(WaitFor([&] { return NoJobProcesses(); }, seconds(5)));
}

// The issue's shape: a v2-32 slice (4 hosts) served by 4 agents, 2 ranks per host.
TEST_F(AgentTest, FourAgentsOneHostEachTwoRanksPerHost) {
  for (int h = 4; h < 8; ++h) StartAgent("b" + std::to_string(h), std::to_string(h));
  ASSERT_TRUE(WaitFor([&] { return rsh_.size() == 6; }, seconds(20)));
  Envelope env = MakeLaunch(20, 1, {});
  Launch* l = env.mutable_launch();
  l->clear_hosts();
  l->clear_rsh_endpoints();
  for (int h = 4; h < 8; ++h) {
    l->add_hosts(h);
    (*l->mutable_rsh_endpoints())[h] = rsh_["b" + std::to_string(h)];
  }
  l->set_ranks_per_host(2);
  for (int h = 4; h < 8; ++h) SendTo("b" + std::to_string(h), env);
  ASSERT_TRUE(WaitFor([&] {
    for (int h = 4; h < 8; ++h) {
      if (!FindExited("b" + std::to_string(h), 20, 1)) return false;
    }
    return true;
  }, seconds(120)));
  EXPECT_EQ(FindExited("b4", 20, 1)->reason(), Exited::COMPLETED) << FindExited("b4", 20, 1)->message();
  for (int h = 5; h < 8; ++h) EXPECT_EQ(FindExited("b" + std::to_string(h), 20, 1)->reason(), Exited::RELEASED);
  const std::string log = LogText(20, 1);
  EXPECT_NE(log.find("podprobe: world=8 sum=28 job=20 epoch=1"), std::string::npos) << log;
  for (int r = 0; r < 8; ++r) {
    const std::string want = "rank " + std::to_string(r) + " on host " + std::to_string(4 + r / 2);
    EXPECT_NE(log.find(want), std::string::npos) << want << "\n" << log;
  }
  EXPECT_TRUE(WaitFor([&] { return NoJobProcesses(); }, seconds(5)));
}

// mpirun's rsh request may reach an agent before that agent's Launch does: it waits for it.
TEST_F(AgentTest, AnRshRequestBeforeItsLaunchWaitsForIt) {
  const pid_t rsh = Spawn({PODWORKER, "rsh", "h2", "touch", (dir_ / "early").string()},
                          (dir_ / "rsh.log").string(),
                          {"POD_RSH_ENDPOINTS=2=" + rsh_["a1"], std::string("POD_RSH_TOKEN=") + kToken,
                           "POD_JOB_ID=18", "POD_EPOCH=1"});
  ASSERT_TRUE(WaitFor([&] { return ReadFile(dir_ / "a1.log").find("waiting for its Launch") != std::string::npos; },
                      seconds(10)));
  EXPECT_FALSE(fs::exists(dir_ / "early"));
  SendTo("a1", MakeLaunch(18, 1, {}));  // a1 is not the launcher: only the rsh runs
  int status = 0;
  ASSERT_TRUE(WaitFor([&] { return waitpid(rsh, &status, WNOHANG) == rsh; }, seconds(20)));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(dir_ / "rsh.log");
  EXPECT_TRUE(fs::exists(dir_ / "early"));
  SendTo("a1", MakeControl(18, 1, /*preempt=*/false));
  ASSERT_TRUE(WaitFor([&] { return FindExited("a1", 18, 1) != nullptr; }, seconds(10)));
  EXPECT_EQ(FindExited("a1", 18, 1)->reason(), Exited::RELEASED);
}

// kill -9 of one agent while a job runs: nothing of the job may survive (within a bounded poll),
// and the agent restarted on the same state dir reports nothing running.
TEST_F(AgentTest, Kill9OfTheLauncherAgentLeavesNoOrphans) { Kill9("a0", "0-1", 14); }
TEST_F(AgentTest, Kill9OfAnotherAgentLeavesNoOrphans) { Kill9("a1", "2-3", 15); }

void AgentTest::Kill9(const std::string& victim, const std::string& hosts, int64_t job) {
  SendBoth(MakeLaunch(job, 1, {"--run-seconds", "300"}));
  ASSERT_TRUE(WaitFor([&] { return AllRanksStarted(); }, seconds(60)));
  ASSERT_TRUE(WaitFor([&] { return JobProcesses().size() >= 8; }, seconds(10)));
  kill(agents_[victim], SIGKILL);
  waitpid(agents_[victim], nullptr, 0);
  agents_[victim] = -1;
  EXPECT_TRUE(WaitFor([&] { return AllRanksGone(); }, seconds(30)));
  EXPECT_TRUE(WaitFor([&] { return NoJobProcesses(); }, seconds(30)))
      << JobProcesses().size() << " processes left, first pid " << JobProcesses().front();
  const std::string survivor = victim == "a0" ? "a1" : "a0";
  ASSERT_TRUE(WaitFor([&] { return FindExited(survivor, job, 1) != nullptr; }, seconds(30)));
  if (survivor == "a0") {
    EXPECT_EQ(FindExited("a0", job, 1)->reason(), Exited::FAILED) << FindExited("a0", job, 1)->message();
  } else {
    EXPECT_EQ(FindExited("a1", job, 1)->reason(), Exited::RELEASED);
  }

  const auto t = Clock::now();
  StartAgent(victim, hosts);
  auto registered = [&]() -> const Register* {
    for (const auto& r : got_) {
      if (r.agent == victim && r.at > t && r.env.has_register_()) return &r.env.register_();
    }
    return nullptr;
  };
  ASSERT_TRUE(WaitFor([&] { return registered() != nullptr; }, seconds(20)));
  EXPECT_EQ(registered()->running_size(), 0);
}

}  // namespace
