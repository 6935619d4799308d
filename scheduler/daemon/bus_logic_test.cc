#include "scheduler/daemon/bus_logic.h"

#include <gtest/gtest.h>

#include <cmath>

#include "scheduler/core/test_util.h"

namespace podsched::daemon {
namespace {

using core::testing::At;
using core::testing::Spec;

// A 4x4-host pod; agent "a<r>" serves host row r (hosts 4r..4r+3). A v2-32 (2x2 hosts) spans two
// agents.
class BusLogicTest : public ::testing::Test {
 protected:
  void SetUp() override { Restart(); }

  // (Re)creates the scheduler from the store and a fresh BusLogic, as a podsched restart does.
  void Restart() {
    bus_.reset();
    sched_.reset();
    auto pod = pod::Pod::Create("pod0", pod::Generation::kV2, 4, 4);
    ASSERT_TRUE(pod.has_value());
    core::SchedulerConfig sc;
    sc.min_runtime_before_preemption = Duration::zero();
    auto s = core::Scheduler::Create(std::move(*pod), sc, &repo_, now_);
    ASSERT_TRUE(s.has_value()) << s.error().message();
    sched_ = std::move(*s);
    BusLogic::Options o;
    o.bus.heartbeat_timeout_ms = 3000;
    o.checkpoint_stores = CheckpointStores("file:///data/objects/checkpoints", {});
    o.log_url = "file:///data/objects/logs";
    o.scheduler_id = "s1";
    bus_ = std::make_unique<BusLogic>(o, sched_.get(),
                                      [this] { return "tok" + std::to_string(++tokens_); });
    ASSERT_TRUE(bus_->Start(now_).ok());
  }

  static std::string Bytes(const bus::Envelope& e) { return e.SerializeAsString(); }

  bus::Envelope RegisterMsg(int row, std::vector<std::pair<JobEpoch, std::vector<int>>> running = {}) {
    bus::Envelope e;
    auto* r = e.mutable_register_();
    r->set_agent_id("a" + std::to_string(row));
    r->set_pod("pod0");
    for (int c = 0; c < 4; ++c) r->add_hosts(row * 4 + c);
    r->set_rsh_endpoint("tcp://127.0.0.1:" + std::to_string(40000 + row));
    for (auto& [je, hosts] : running) {
      auto* rj = r->add_running();
      rj->mutable_job()->set_job_id(je.job.value());
      rj->mutable_job()->set_epoch(je.epoch);
      for (int h : hosts) rj->add_hosts(h);
    }
    return e;
  }
  void Register(int row, std::vector<std::pair<JobEpoch, std::vector<int>>> running = {}) {
    ASSERT_TRUE(bus_->OnMessage("a" + std::to_string(row), Bytes(RegisterMsg(row, running)), now_).ok());
  }
  void Heartbeat(int row, std::vector<std::pair<JobEpoch, std::vector<int>>> running = {}) {
    bus::Envelope e;
    auto* hb = e.mutable_heartbeat();
    hb->set_agent_id("a" + std::to_string(row));
    for (auto& [je, hosts] : running) {
      auto* rj = hb->add_running();
      rj->mutable_job()->set_job_id(je.job.value());
      rj->mutable_job()->set_epoch(je.epoch);
      for (int h : hosts) rj->add_hosts(h);
    }
    ASSERT_TRUE(bus_->OnMessage("a" + std::to_string(row), Bytes(e), now_).ok());
  }
  void Exited(int row, JobEpoch je, bus::Exited::Reason reason, std::vector<int> hosts,
              std::string message = "") {
    bus::Envelope e;
    auto* x = e.mutable_exited();
    x->mutable_job()->set_job_id(je.job.value());
    x->mutable_job()->set_epoch(je.epoch);
    x->set_reason(reason);
    x->set_message(message);
    for (int h : hosts) x->add_hosts(h);
    ASSERT_TRUE(bus_->OnMessage("a" + std::to_string(row), Bytes(e), now_).ok());
  }
  void RegisterAll() {
    for (int r = 0; r < 4; ++r) Register(r);
  }
  void Tick() {
    now_ += std::chrono::milliseconds(10);
    ASSERT_TRUE(bus_->OnTimer(now_).ok());
    if (!bus_->reconciling()) bus_->Dispatch(sched_->Tick(now_));
  }
  // Decoded messages taken from the outbox, by agent.
  std::vector<std::pair<std::string, bus::Envelope>> Out() {
    std::vector<std::pair<std::string, bus::Envelope>> out;
    for (auto& m : bus_->TakeOutgoing()) {
      bus::Envelope e;
      EXPECT_TRUE(e.ParseFromString(m.bytes));
      out.emplace_back(m.agent_id, e);
    }
    return out;
  }
  static int Count(const std::vector<std::pair<std::string, bus::Envelope>>& out,
                   bus::Envelope::BodyCase c) {
    int n = 0;
    for (auto& [a, e] : out) n += e.body_case() == c;
    return n;
  }
  // Submits a v2-32 and lets the scheduler place it; returns the job with its epoch.
  JobEpoch PlaceV232(bool preemptible = false) {
    auto id = sched_->Submit(Spec("alice", "v2-32", preemptible), now_);
    EXPECT_TRUE(id.has_value());
    Tick();
    const auto* job = sched_->Find(*id);
    EXPECT_EQ(job->state, core::JobState::kPlaced);
    return {*id, job->epoch};
  }
  int64_t Dropped(const std::string& reason) {
    auto it = bus_->dropped().find(reason);
    return it == bus_->dropped().end() ? 0 : it->second;
  }
  std::vector<int> SliceHosts(JobId id) {
    std::vector<int> out;
    for (HostId h : sched_->fleet().HostsIn(*sched_->Find(id)->placement)) out.push_back(h.value());
    return out;
  }

  core::InMemoryJobRepository repo_;
  std::unique_ptr<core::Scheduler> sched_;
  std::unique_ptr<BusLogic> bus_;
  TimePoint now_ = At(1000);
  int tokens_ = 0;
};

TEST_F(BusLogicTest, HostsWithoutAnAgentAreUnhealthyUntilOneRegisters) {
  EXPECT_EQ(bus_->unhealthy_hosts(), 16);
  EXPECT_EQ(bus_->hosts()[0].reason, "no agent");
  Register(0);
  EXPECT_EQ(bus_->unhealthy_hosts(), 12);
  EXPECT_EQ(bus_->hosts()[0].agent_id, "a0");
  EXPECT_EQ(bus_->hosts()[0].reason, "");
  auto out = Out();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, "a0");
  EXPECT_EQ(out[0].second.welcome().scheduler_id(), "s1");
  EXPECT_EQ(bus_->connected_agents(), 1);
}

TEST_F(BusLogicTest, LaunchGoesOnceToEveryAgentOfTheSliceWithTheJobContract) {
  RegisterAll();
  Out();
  JobEpoch je = PlaceV232();
  auto out = Out();
  ASSERT_EQ(Count(out, bus::Envelope::kLaunch), 2);  // a 2x2 slice spans two rows = two agents
  const bus::Launch& l = out[0].second.launch();
  std::vector<int> hosts = SliceHosts(je.job);
  ASSERT_EQ(l.hosts_size(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(l.hosts(i), hosts[i]);
  EXPECT_EQ(l.job().epoch(), je.epoch);
  EXPECT_EQ(l.env().at("POD_JOB_ID"), std::to_string(je.job.value()));
  EXPECT_EQ(l.env().at("POD_ACCELERATOR"), "v2-32");
  EXPECT_EQ(l.env().at("POD_CHECKPOINT_URL"), "file:///data/objects/checkpoints");
  EXPECT_EQ(l.env().at("POD_RESTART_COUNT"), "0");
  const auto& p = *sched_->Find(je.job)->placement;
  EXPECT_EQ(l.env().at("POD_SLICE"), "pod0:" + std::to_string(p.rect.origin.col) + "," +
                                         std::to_string(p.rect.origin.row) + ":2x2");
  std::string list;
  for (int h : hosts) list += (list.empty() ? "" : ",") + std::to_string(h);
  EXPECT_EQ(l.env().at("POD_HOSTS"), list);
  EXPECT_EQ(l.rsh_endpoints().size(), 4u);
  EXPECT_EQ(l.rsh_endpoints().at(hosts[0]), "tcp://127.0.0.1:" + std::to_string(40000 + hosts[0] / 4));
  EXPECT_EQ(l.rsh_token(), "tok1");
  EXPECT_EQ(out[1].second.launch().rsh_token(), "tok1");  // same content for every agent
  EXPECT_EQ(l.command(0), "/bin/true");
  EXPECT_EQ(l.log_url(), "file:///data/objects/logs");
  EXPECT_EQ(l.grace_seconds(), 30);
}

TEST_F(BusLogicTest, SpecCheckpointUrlWinsAndPodVariablesCannotBeOverridden) {
  RegisterAll();
  Out();
  auto spec = Spec("alice", "v2-8", false);
  spec.env["POD_CHECKPOINT_URL"] = "s3://b/ck";
  spec.env["MY_VAR"] = "x";
  auto overriding = spec;
  overriding.env["POD_EPOCH"] = "999";  // refused at submission (core/spec.h)
  EXPECT_FALSE(sched_->Submit(overriding, now_).has_value());
  auto id = sched_->Submit(spec, now_);
  ASSERT_TRUE(id.has_value());
  Tick();
  auto out = Out();
  ASSERT_EQ(Count(out, bus::Envelope::kLaunch), 1);
  const auto& env = out[0].second.launch().env();
  EXPECT_EQ(env.at("POD_CHECKPOINT_URL"), "s3://b/ck");
  EXPECT_EQ(env.at("POD_EPOCH"), "1");
  EXPECT_EQ(env.at("MY_VAR"), "x");
}

TEST_F(BusLogicTest, RunningStartsTheJobAndExitsFreeTheHostsThenAreAcked) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  Out();
  std::vector<int> hosts = SliceHosts(je.job);
  int launcher_row = hosts[0] / 4, other_row = hosts[2] / 4;
  Heartbeat(launcher_row, {{je, {hosts[0], hosts[1]}}});
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kStarting);
  Exited(launcher_row, je, bus::Exited::COMPLETED, {hosts[0], hosts[1]});
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kSucceeded);
  EXPECT_TRUE(sched_->fleet().host(HostId(hosts[0])).allocation.has_value());  // not all gone yet
  Exited(other_row, je, bus::Exited::RELEASED, {hosts[2], hosts[3]});
  for (int h : hosts) EXPECT_FALSE(sched_->fleet().host(HostId(h)).allocation.has_value());
  auto acks = bus_->TakeAcks();
  ASSERT_EQ(acks.size(), 2u);
  bus::Envelope a;
  ASSERT_TRUE(a.ParseFromString(acks[0].bytes));
  ASSERT_EQ(a.ack().exits_size(), 1);
  EXPECT_EQ(a.ack().exits(0).job_id(), je.job.value());
  EXPECT_TRUE(bus_->TakeAcks().empty());
}

// RUNNING means every rank's process is up, whether or not the program reports progress: the
// agents' ranks_up_hosts are joined over the slice, across heartbeats and agents.
TEST_F(BusLogicTest, RunningOnceEveryHostOfTheSliceHasItsRanksUp) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  Out();
  std::vector<int> hosts = SliceHosts(je.job);
  const int launcher_row = hosts[0] / 4, other_row = hosts[2] / 4;
  auto beat = [&](int row, std::vector<int> mine, std::vector<int> up) {
    bus::Envelope e;
    auto* hb = e.mutable_heartbeat();
    hb->set_agent_id("a" + std::to_string(row));
    auto* rj = hb->add_running();
    rj->mutable_job()->set_job_id(je.job.value());
    rj->mutable_job()->set_epoch(je.epoch);
    for (int h : mine) rj->add_hosts(h);
    for (int h : up) rj->add_ranks_up_hosts(h);
    ASSERT_TRUE(bus_->OnMessage("a" + std::to_string(row), Bytes(e), now_).ok());
  };
  beat(launcher_row, {hosts[0], hosts[1]}, {hosts[0], hosts[1]});
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kStarting);
  beat(other_row, {hosts[2], hosts[3]}, {hosts[2]});
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kStarting);  // host 3 not yet
  beat(other_row, {hosts[2], hosts[3]}, {hosts[2], hosts[3]});
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kRunning);
  EXPECT_EQ(sched_->Find(je.job)->reason, "every rank is running");
}

// A restarted podsched learns it again from the next heartbeats; a report of an older epoch
// counts for nothing.
TEST_F(BusLogicTest, RanksUpOfAnOldEpochDoNotMakeTheNewOneRunning) {
  RegisterAll();
  JobEpoch je = PlaceV232(/*preemptible=*/true);
  Out();
  std::vector<int> hosts = SliceHosts(je.job);
  bus::Envelope e;
  auto* hb = e.mutable_heartbeat();
  hb->set_agent_id("a" + std::to_string(hosts[0] / 4));
  auto* rj = hb->add_running();
  rj->mutable_job()->set_job_id(je.job.value());
  rj->mutable_job()->set_epoch(je.epoch + 5);
  for (int h : hosts) rj->add_ranks_up_hosts(h);
  ASSERT_TRUE(bus_->OnMessage(hb->agent_id(), Bytes(e), now_).ok());
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kPlaced);
}

TEST_F(BusLogicTest, PreemptAndKillFanOutToEveryAgentOfTheSlice) {
  RegisterAll();
  JobEpoch je = PlaceV232(true);
  Out();
  auto actions = sched_->Preempt(je.job, "test", now_);
  ASSERT_TRUE(actions.has_value());
  bus_->Dispatch(*actions);
  auto out = Out();
  ASSERT_EQ(Count(out, bus::Envelope::kPreempt), 2);
  EXPECT_EQ(out[0].second.preempt().grace_seconds(), 30);
  EXPECT_EQ(out[0].second.preempt().job().epoch(), je.epoch);
  // The program ignores SIGTERM: the agent kills it after the grace and says so.
  std::vector<int> hosts = SliceHosts(je.job);
  Exited(hosts[0] / 4, je, bus::Exited::KILLED_AFTER_GRACE, {hosts[0], hosts[1]},
         "SIGKILL after 30 s grace");
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kQueued);
  EXPECT_NE(sched_->Find(je.job)->reason.str().find("grace"), std::string::npos)
      << sched_->Find(je.job)->reason;
}

// A job preempted before any agent started its Launch (lost or refused): no agent will ever
// report its exit, and the core's Kill at the end of the grace reaches agents that do not know
// it. The epoch is judged like a launch never started, as a preemption, and its hosts come free.
TEST_F(BusLogicTest, AnEpochPreemptedBeforeAnyAgentStartedItDoesNotHoldItsHosts) {
  RegisterAll();
  const JobEpoch je = PlaceV232(true);
  auto actions = sched_->Preempt(je.job, "test", now_);
  ASSERT_TRUE(actions.has_value());
  bus_->Dispatch(*actions);
  ASSERT_EQ(sched_->Find(je.job)->state, core::JobState::kPreempting);
  for (int t = 0; t < 40 && sched_->Find(je.job)->epoch == je.epoch &&
                  sched_->Find(je.job)->state == core::JobState::kPreempting;
       ++t) {
    now_ += std::chrono::seconds(1);
    for (int r = 0; r < 4; ++r) Heartbeat(r);  // never listing the epoch
    Tick();
  }
  const core::JobRecord* job = sched_->Find(je.job);
  EXPECT_TRUE(job->epoch > je.epoch || job->state == core::JobState::kQueued)
      << core::JobStateName(job->state) << ": " << job->reason;
  EXPECT_EQ(job->preemptions, 1);
  EXPECT_EQ(job->restarts, 0) << "a preemption, not a failure";
}

TEST_F(BusLogicTest, CoreKillAtTheEndOfTheGraceStillSaysGrace) {
  RegisterAll();
  JobEpoch je = PlaceV232(true);
  auto actions = sched_->Preempt(je.job, "test", now_);
  ASSERT_TRUE(actions.has_value());
  bus_->Dispatch(*actions);
  const std::vector<int> hosts = SliceHosts(je.job);
  for (int t = 0; t < 31; ++t) {
    now_ += std::chrono::seconds(1);
    // The slice's agents run the job (they list it): its end is theirs to report.
    for (int r = 0; r < 4; ++r) {
      std::vector<int> mine;
      for (int h : hosts) {
        if (h / 4 == r) mine.push_back(h);
      }
      if (mine.empty()) {
        Heartbeat(r);
      } else {
        Heartbeat(r, {{je, mine}});
      }
    }
    Tick();  // at the end, the core's grace timer: Kill
  }
  EXPECT_GE(Count(Out(), bus::Envelope::kKill), 2);
  Exited(hosts[0] / 4, je, bus::Exited::KILLED, {hosts[0], hosts[1]}, "killed on request");
  auto events = repo_.EventsOf(je.job);
  ASSERT_TRUE(events.has_value());
  const core::JobEvent& last = events->back();
  EXPECT_EQ(last.to, core::JobState::kQueued);
  EXPECT_NE(last.reason.find("grace"), std::string::npos) << last.reason;
}

TEST_F(BusLogicTest, SilentAgentLosesItsHostsAndTheJobIsRequeuedAndKilledElsewhere) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  Out();
  std::vector<int> hosts = SliceHosts(je.job);
  int dead = hosts[2] / 4;
  // Every 100 ms a tick, every 500 ms a heartbeat from the others.
  auto run = [&](int ms) {
    for (int t = 0; t < ms; t += 100) {
      now_ += std::chrono::milliseconds(90);  // Tick adds 10
      if (t % 500 == 0) {
        for (int r = 0; r < 4; ++r) {
          if (r != dead) Heartbeat(r);
        }
      }
      Tick();
    }
  };
  run(2500);
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kPlaced);  // not yet
  EXPECT_EQ(bus_->hosts()[hosts[2]].reason, "");
  run(1000);
  EXPECT_EQ(bus_->hosts()[hosts[2]].reason, "heartbeat lost");
  EXPECT_FALSE(sched_->fleet().host(HostId(hosts[2])).healthy);
  const auto* job = sched_->Find(je.job);
  // Requeued and, in the same tick, placed again on healthy hosts with a new epoch.
  EXPECT_EQ(job->epoch, je.epoch + 1);
  for (int h : SliceHosts(je.job)) EXPECT_NE(h / 4, dead);
  auto out = Out();
  EXPECT_GE(Count(out, bus::Envelope::kKill), 1);
  EXPECT_EQ(Count(out, bus::Envelope::kLaunch), 2);
  // A message from the timed-out agent is answered with Reregister.
  Heartbeat(dead);
  out = Out();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].second.has_reregister());
  Register(dead);
  EXPECT_EQ(bus_->hosts()[hosts[2]].reason, "");
  EXPECT_TRUE(sched_->fleet().host(HostId(hosts[2])).healthy);
}

TEST_F(BusLogicTest, BadMessagesAreDroppedAndCountedByReason) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  Out();
  ASSERT_TRUE(bus_->OnMessage("a0", "\xff\xfe random bytes \x01", now_).ok());
  EXPECT_EQ(Dropped("malformed"), 1);
  ASSERT_TRUE(bus_->OnMessage("a0", std::string((1 << 20) + 1, 'x'), now_).ok());
  EXPECT_EQ(Dropped("oversized"), 1);
  bus::Envelope hb;
  hb.mutable_heartbeat()->set_agent_id("stranger");
  ASSERT_TRUE(bus_->OnMessage("stranger", Bytes(hb), now_).ok());
  EXPECT_EQ(Dropped("unknown_agent"), 1);
  auto out = Out();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].second.has_reregister());
  bus::Envelope reg = RegisterMsg(0);
  reg.mutable_register_()->add_hosts(99);
  ASSERT_TRUE(bus_->OnMessage("a0", Bytes(reg), now_).ok());
  EXPECT_EQ(Dropped("unknown_host"), 1);
  reg = RegisterMsg(1);  // claims a0's name from another identity
  ASSERT_TRUE(bus_->OnMessage("a0", Bytes(reg), now_).ok());
  EXPECT_EQ(Dropped("invalid"), 1);
  std::vector<int> hosts = SliceHosts(je.job);
  bus::Envelope prog;
  prog.mutable_progress()->mutable_job()->set_job_id(je.job.value());
  prog.mutable_progress()->mutable_job()->set_epoch(je.epoch + 5);
  ASSERT_TRUE(bus_->OnMessage("a" + std::to_string(hosts[0] / 4), Bytes(prog), now_).ok());
  EXPECT_EQ(Dropped("stale_epoch"), 1);
  prog.mutable_progress()->mutable_job()->set_job_id(777);
  ASSERT_TRUE(bus_->OnMessage("a" + std::to_string(hosts[0] / 4), Bytes(prog), now_).ok());
  EXPECT_EQ(Dropped("unknown_job"), 1);
  bus::Envelope log;
  log.mutable_log()->mutable_job()->set_job_id(je.job.value());
  log.mutable_log()->mutable_job()->set_epoch(je.epoch);
  log.mutable_log()->set_data(std::string(65 << 10, 'x'));
  ASSERT_TRUE(bus_->OnMessage("a" + std::to_string(hosts[0] / 4), Bytes(log), now_).ok());
  EXPECT_EQ(Dropped("oversized"), 2);
  // An exit for a host this agent does not serve.
  int foreign_row = (hosts[0] / 4 + 2) % 4;
  Exited(foreign_row, je, bus::Exited::COMPLETED, {hosts[0]});
  EXPECT_EQ(Dropped("unknown_host"), 2);
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kPlaced);  // nothing of it applied
}

// An agent may end a job only from the job's launcher host; others only release their hosts of
// the slice (an agent naming a host of its own cannot end another user's job).
TEST_F(BusLogicTest, OnlyTheLauncherHostGivesTheVerdictAndOnlySliceHostsRelease) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  Out();
  std::vector<int> hosts = SliceHosts(je.job);
  const int launcher_row = hosts[0] / 4, other_row = hosts[2] / 4;
  const int outsider_row = (std::max(launcher_row, other_row) + 1) % 4;
  ASSERT_NE(outsider_row, launcher_row);
  ASSERT_NE(outsider_row, other_row);
  Exited(outsider_row, je, bus::Exited::FAILED, {outsider_row * 4});
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kPlaced);
  EXPECT_EQ(Dropped("unknown_host"), 1);
  Exited(outsider_row, je, bus::Exited::RELEASED, {outsider_row * 4});
  EXPECT_EQ(Dropped("unknown_host"), 2);
  Exited(other_row, je, bus::Exited::FAILED, {hosts[2], hosts[3]});  // in the slice, not launcher
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kPlaced);
  EXPECT_EQ(Dropped("unknown_host"), 3);
  Exited(other_row, je, bus::Exited::RELEASED, {hosts[2], hosts[3]});
  Exited(launcher_row, je, bus::Exited::COMPLETED, {hosts[0], hosts[1]});
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kSucceeded);
  for (int h : hosts) EXPECT_FALSE(sched_->fleet().host(HostId(h)).allocation.has_value());
  EXPECT_EQ(Dropped("unknown_host"), 3);
}

// A failure while another agent's hosts have not reported their processes gone may be that
// agent's death: the verdict waits, unacknowledged, for them. Released: it stands (a restart).
// Gone silent: the host goes down, the job is requeued without a restart charged, and the
// launcher's resent verdict is stale. Neither within a heartbeat timeout and interval: it stands.
TEST_F(BusLogicTest, AFailureWaitsForTheOtherAgentsHostsBeforeItCostsARestart) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  Out();
  const std::vector<int> hosts = SliceHosts(je.job);
  const int launcher = hosts[0] / 4, other = hosts[2] / 4;
  ASSERT_NE(launcher, other);
  auto failed = [&] { Exited(launcher, je, bus::Exited::FAILED, {hosts[0], hosts[1]}, "exit 255"); };
  auto acked = [&] {  // the launcher's exits acknowledged since the last call
    int n = 0;
    for (const BusOutgoing& m : bus_->TakeAcks()) {
      bus::Envelope e;
      EXPECT_TRUE(e.ParseFromString(m.bytes));
      if (m.agent_id == "a" + std::to_string(launcher)) n += e.ack().exits_size();
    }
    return n;
  };
  failed();
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kPlaced);  // held
  EXPECT_EQ(Dropped("failure_held"), 1);
  EXPECT_EQ(acked(), 0);
  const auto out = Out();  // the other agent is told to stop the job's processes
  ASSERT_EQ(Count(out, bus::Envelope::kKill), 1);
  EXPECT_EQ(out[0].first, "a" + std::to_string(other));
  failed();  // a resend: held, no second Kill
  EXPECT_EQ(Count(Out(), bus::Envelope::kKill), 0);
  // The other agent's processes end: the next resend stands, and costs a restart.
  Exited(other, je, bus::Exited::RELEASED, {hosts[2], hosts[3]});
  failed();
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kQueued);
  EXPECT_EQ(sched_->Find(je.job)->restarts, 1);
  EXPECT_EQ(acked(), 1);

  // Again, and the other agent dies: requeued for the host, no restart charged.
  now_ += std::chrono::seconds(60);  // past the retry backoff
  Tick();
  je = JobEpoch{je.job, sched_->Find(je.job)->epoch};
  ASSERT_EQ(sched_->Find(je.job)->state, core::JobState::kPlaced);
  const std::vector<int> again = SliceHosts(je.job);
  const int launcher2 = again[0] / 4, dead = again[2] / 4;
  ASSERT_NE(launcher2, dead);
  Out();
  Exited(launcher2, je, bus::Exited::FAILED, {again[0], again[1]}, "exit 255");
  for (int t = 0; t < 3500; t += 100) {  // heartbeats from all but the dead agent, resends
    now_ += std::chrono::milliseconds(90);
    if (t % 500 == 0) {
      for (int r = 0; r < 4; ++r) {
        if (r != dead) Heartbeat(r);
      }
      if (sched_->Find(je.job)->epoch == je.epoch) {
        Exited(launcher2, je, bus::Exited::FAILED, {again[0], again[1]}, "exit 255");
      }
    }
    Tick();
  }
  const core::JobRecord* job = sched_->Find(je.job);
  EXPECT_GT(job->epoch, je.epoch);
  EXPECT_EQ(job->restarts, 1) << job->reason;  // the first failure only
  EXPECT_FALSE(sched_->fleet().host(HostId(again[2])).healthy);
  Exited(launcher2, je, bus::Exited::FAILED, {again[0], again[1]}, "exit 255");  // stale now
  EXPECT_EQ(sched_->Find(je.job)->restarts, 1);
}

TEST_F(BusLogicTest, AHeldFailureStandsAfterAHeartbeatTimeout) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  const std::vector<int> hosts = SliceHosts(je.job);
  const int launcher = hosts[0] / 4;
  Exited(launcher, je, bus::Exited::FAILED, {hosts[0], hosts[1]}, "exit 1");
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kPlaced);
  now_ += std::chrono::milliseconds(3000 + 1000 - 1);  // the timeout and interval, but 1 ms
  Exited(launcher, je, bus::Exited::FAILED, {hosts[0], hosts[1]}, "exit 1");
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kPlaced);
  now_ += std::chrono::milliseconds(1);
  Exited(launcher, je, bus::Exited::FAILED, {hosts[0], hosts[1]}, "exit 1");
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kQueued);
  EXPECT_EQ(sched_->Find(je.job)->restarts, 1);
  EXPECT_EQ(Dropped("failure_held"), 2);
}

// The job's checkpoint size comes as the scalar checkpoint_bytes; a size no job has is dropped.
TEST_F(BusLogicTest, ACheckpointSizeIsTakenFromItsProgressScalar) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  const std::string agent = "a" + std::to_string(SliceHosts(je.job)[0] / 4);
  auto report = [&](int64_t step, double bytes) {
    bus::Envelope e;
    auto* p = e.mutable_progress();
    p->mutable_job()->set_job_id(je.job.value());
    p->mutable_job()->set_epoch(je.epoch);
    p->set_step(step);
    (*p->mutable_scalars())[std::string(kCheckpointBytesScalar)] = bytes;
    ASSERT_TRUE(bus_->OnMessage(agent, Bytes(e), now_).ok());
  };
  report(5, 3e9);
  EXPECT_EQ(sched_->Find(je.job)->checkpoint_bytes, int64_t{3'000'000'000});
  EXPECT_EQ(sched_->Find(je.job)->step, 5);
  for (double bad : {-1.0, 1e300, std::nan("")}) {
    report(6, bad);
    EXPECT_EQ(sched_->Find(je.job)->step, 5);  // the whole report is dropped
  }
  EXPECT_EQ(Dropped("invalid"), 3);
  EXPECT_EQ(sched_->Find(je.job)->checkpoint_bytes, int64_t{3'000'000'000});
}

TEST_F(BusLogicTest, ProgressIsBoundedAndStreamedAtMostOncePerSecond) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  std::string agent = "a" + std::to_string(SliceHosts(je.job)[0] / 4);
  for (int i = 1; i <= 2100; ++i) {
    bus::Envelope e;
    auto* p = e.mutable_progress();
    p->mutable_job()->set_job_id(je.job.value());
    p->mutable_job()->set_epoch(je.epoch);
    p->set_step(i);
    p->set_loss(1.0 / i);
    ASSERT_TRUE(bus_->OnMessage(agent, Bytes(e), now_).ok());
    now_ += std::chrono::milliseconds(1);
  }
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kRunning);
  EXPECT_EQ(sched_->Find(je.job)->step, 2100);
  const auto& pts = bus_->ProgressOf(je.job)->points();
  ASSERT_EQ(pts.size(), ProgressSeries::kMaxPoints);
  EXPECT_EQ(pts.front().step, 101);
  auto due = bus_->TakeDueProgress(now_);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].second.step, 2100);  // the newest
  EXPECT_TRUE(bus_->TakeDueProgress(now_ + std::chrono::milliseconds(500)).empty());
}

TEST_F(BusLogicTest, RestartAdoptsWhatRunsWithoutLaunchingTwice) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  std::vector<int> hosts = SliceHosts(je.job);
  Heartbeat(hosts[0] / 4, {{je, {hosts[0], hosts[1]}}});
  ASSERT_EQ(sched_->Find(je.job)->state, core::JobState::kStarting);
  Restart();
  EXPECT_TRUE(bus_->reconciling());
  now_ += std::chrono::milliseconds(100);
  Tick();  // no pass while reconciling
  EXPECT_EQ(Count(Out(), bus::Envelope::kLaunch), 0);
  for (int r = 0; r < 4; ++r) {
    std::vector<std::pair<JobEpoch, std::vector<int>>> running;
    std::vector<int> mine;
    for (int h : hosts) {
      if (h / 4 == r) mine.push_back(h);
    }
    if (!mine.empty()) running.push_back({je, mine});
    Register(r, running);
  }
  EXPECT_FALSE(bus_->reconciling());
  Tick();
  EXPECT_EQ(Count(Out(), bus::Envelope::kLaunch), 0);
  EXPECT_EQ(sched_->Find(je.job)->epoch, je.epoch);
  EXPECT_TRUE(core::HoldsHosts(sched_->Find(je.job)->state));
  EXPECT_EQ(bus_->unhealthy_hosts(), 0);
}

TEST_F(BusLogicTest, RestartRequeuesWhatIsNotRunningAndKillsWhatItDoesNotKnow) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  std::vector<int> hosts = SliceHosts(je.job);
  Restart();
  // The launcher's agent runs nothing of the job but an unknown epoch of job 555.
  int row = hosts[0] / 4;
  JobEpoch ghost{JobId(555), 3};
  int ghost_host = row * 4 + 3;
  if (ghost_host == hosts[0] || ghost_host == hosts[1]) ghost_host = row * 4;
  Register(row, {{ghost, {ghost_host}}});
  const auto* job = sched_->Find(je.job);
  EXPECT_EQ(job->state, core::JobState::kQueued);
  EXPECT_NE(job->reason.str().find("not running"), std::string::npos) << job->reason;
  // It was still PLACED: its Launch may never have left (audit L11), so no restart is charged.
  EXPECT_NE(job->reason.str().find("launch never started"), std::string::npos) << job->reason;
  EXPECT_EQ(job->restarts, 0);
  EXPECT_LE(job->not_before, now_);
  auto out = Out();
  EXPECT_EQ(Count(out, bus::Envelope::kKill), 1);
  EXPECT_EQ(bus_->hosts()[ghost_host].reason, "stale processes");
  EXPECT_FALSE(sched_->fleet().host(HostId(ghost_host)).healthy);
  Heartbeat(row);  // the ghost is gone
  EXPECT_EQ(bus_->hosts()[ghost_host].reason, "");
  EXPECT_TRUE(sched_->fleet().host(HostId(ghost_host)).healthy);
}

// A job that had started and is gone after a restart was killed: a restart is charged.
TEST_F(BusLogicTest, RestartChargesARestartToAStartedJobThatIsGone) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  ASSERT_TRUE(sched_->ReportStarted(je, now_).has_value());
  ASSERT_EQ(sched_->Find(je.job)->state, core::JobState::kStarting);
  Restart();
  RegisterAll();
  const auto* job = sched_->Find(je.job);
  EXPECT_EQ(job->state, core::JobState::kQueued);
  EXPECT_EQ(job->restarts, 1) << job->reason;
}

TEST_F(BusLogicTest, RegisterLooksOnlyAtThePlacementsOfItsOwnHosts) {
  RegisterAll();
  for (int i = 0; i < 200; ++i) {
    auto id = sched_->Submit(Spec("alice", "v2-8", false), now_);
    ASSERT_TRUE(id.has_value());
    Tick();
    const auto* job = sched_->Find(*id);
    ASSERT_EQ(job->state, core::JobState::kPlaced);
    ASSERT_TRUE(sched_->ReportExited({*id, job->epoch}, std::nullopt,
                                     core::ExitKind::kSucceeded, "", now_));
  }
  JobEpoch je = PlaceV232();
  Restart();
  ASSERT_GT(sched_->jobs().size(), 200u);
  RegisterAll();  // nothing runs: the v2-32 is requeued
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kQueued);
  // One job looked up per host at most (16), not every job ever submitted per host (16 x 201).
  EXPECT_LE(bus_->reconciler().jobs_examined(), 16);
}

TEST_F(BusLogicTest, RestartWithNothingRunningFreesEveryHostOfTheSlice) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  std::vector<int> hosts = SliceHosts(je.job);
  Restart();
  RegisterAll();  // in row order: the launcher's agent first
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kQueued);
  for (int h : hosts) {
    EXPECT_FALSE(sched_->fleet().host(HostId(h)).allocation.has_value()) << "host " << h;
  }
}

TEST_F(BusLogicTest, AStalledCallerFirstHandlesTheMessagesThatQueuedUp) {
  RegisterAll();
  now_ += std::chrono::milliseconds(5000);  // the scheduler thread was blocked for 5 s
  Tick();
  EXPECT_EQ(bus_->connected_agents(), 4);   // nobody judged yet
  for (int r = 0; r < 4; ++r) Heartbeat(r);  // what queued up meanwhile
  Tick();
  EXPECT_EQ(bus_->connected_agents(), 4);
  EXPECT_EQ(bus_->unhealthy_hosts(), 0);
}

TEST_F(BusLogicTest, ReconcileTimeoutFailsHostsWhoseAgentNeverCame) {
  RegisterAll();
  JobEpoch je = PlaceV232();
  Restart();
  EXPECT_TRUE(bus_->reconciling());
  for (int t = 0; t <= 3000; t += 100) {
    now_ += std::chrono::milliseconds(90);
    Tick();
  }
  EXPECT_FALSE(bus_->reconciling());
  EXPECT_EQ(sched_->Find(je.job)->state, core::JobState::kQueued);
  EXPECT_EQ(bus_->hosts()[SliceHosts(je.job).empty() ? 0 : 0].reason, "no agent");
}

// Audit H6: a0 is enrolled for its row (hosts 0-3). Right after a restart it registers the
// whole pod, as an impostor with its key would: refused and counted, no Welcome, no host taken
// and so no launch for any of them; the real agents then register theirs.
TEST_F(BusLogicTest, AnAgentRegistersOnlyTheHostsItWasEnrolledFor) {
  bus_->SetEnrolledHosts([](const std::string& id) -> std::optional<HostEnrolment> {
    if (id == "a0") return HostEnrolment{"", {0, 1, 2, 3}};
    return std::nullopt;  // enrolled without --hosts (or a configured key): any host
  });
  bus::Envelope greedy = RegisterMsg(0);
  for (int h = 4; h < 16; ++h) greedy.mutable_register_()->add_hosts(h);
  ASSERT_TRUE(bus_->OnMessage("a0", Bytes(greedy), now_).ok());
  EXPECT_EQ(Dropped("host_not_enrolled"), 1);
  EXPECT_TRUE(Out().empty());  // no Welcome
  EXPECT_EQ(bus_->connected_agents(), 0);
  EXPECT_EQ(bus_->unhealthy_hosts(), 16);
  // A job placed now has no host to go to: nothing is launched anywhere.
  ASSERT_TRUE(sched_->Submit(Spec("alice", "v2-8", false), now_).has_value());
  Tick();
  EXPECT_EQ(Count(Out(), bus::Envelope::kLaunch), 0);

  Register(0);  // its own row
  RegisterAll();
  EXPECT_EQ(Dropped("host_not_enrolled"), 1);
  EXPECT_EQ(bus_->connected_agents(), 4);
  EXPECT_EQ(bus_->unhealthy_hosts(), 0);
  EXPECT_EQ(bus_->agents().at("a0").hosts,
            (std::vector<HostId>{HostId(0), HostId(1), HostId(2), HostId(3)}));
}

// Audit M9: a Launch the agents refused or lost (they heartbeat, without the epoch) held the
// slice PLACED for ever. 30 s after it was sent the epoch ends as a failure, with a Kill for
// whatever did start and the hosts freed; a job whose agents list it is left alone.
TEST_F(BusLogicTest, ALaunchNoAgentStartedEndsAfterTheAckTimeout) {
  RegisterAll();
  JobEpoch lost = PlaceV232();
  Out();
  std::vector<int> hosts = SliceHosts(lost.job);
  auto beat_for = [&](int seconds, bool listing) {
    for (int t = 0; t < seconds * 10; ++t) {
      now_ += std::chrono::milliseconds(90);  // Tick adds 10
      if (t % 5 == 0) {
        for (int r = 0; r < 4; ++r) {
          std::vector<int> mine;
          for (int h : hosts) {
            if (h / 4 == r) mine.push_back(h);
          }
          if (listing && !mine.empty()) {
            Heartbeat(r, {{lost, mine}});
          } else {
            Heartbeat(r);
          }
        }
      }
      Tick();
    }
  };
  beat_for(29, /*listing=*/false);
  EXPECT_EQ(sched_->Find(lost.job)->state, core::JobState::kPlaced);  // not yet
  EXPECT_EQ(Count(Out(), bus::Envelope::kKill), 0);
  beat_for(2, /*listing=*/false);
  const core::JobRecord* job = sched_->Find(lost.job);
  EXPECT_EQ(job->restarts, 1);  // a failure: max_restarts ends a launch that never works
  EXPECT_TRUE(job->epoch > lost.epoch || job->state == core::JobState::kQueued)
      << core::JobStateName(job->state);
  auto events = repo_.EventsOf(lost.job);
  ASSERT_TRUE(events.has_value());
  bool named = false;
  for (const core::JobEvent& e : *events) {
    named |= e.reason.find("never started the launch") != std::string::npos;
  }
  EXPECT_TRUE(named);
  auto out = Out();
  EXPECT_GE(Count(out, bus::Envelope::kKill), 2);  // to the agents of the old slice
  // Requeued, and placed again after its retry backoff (30 s).
  for (int i = 0; i < 45 && sched_->Find(lost.job)->epoch == lost.epoch; ++i) {
    beat_for(1, /*listing=*/false);
  }
  job = sched_->Find(lost.job);
  ASSERT_GT(job->epoch, lost.epoch);
  EXPECT_EQ(Count(Out(), bus::Envelope::kLaunch), 2);  // the new epoch, on two agents

  // The new epoch's agents list it: nothing happens after the timeout.
  lost = {lost.job, job->epoch};
  hosts = SliceHosts(lost.job);
  beat_for(35, /*listing=*/true);
  EXPECT_EQ(sched_->Find(lost.job)->epoch, lost.epoch);
  EXPECT_EQ(sched_->Find(lost.job)->state, core::JobState::kStarting);
  EXPECT_EQ(Count(Out(), bus::Envelope::kKill), 0);
}

// A fleet: pod "big" (2x2 v2 hosts, fleet ids 0-3) and two v2-8 devices "dev-0" (fleet id 4)
// and "dev-1" (5). Each agent serves one pod and names its hosts by that pod's own ids: both
// devices' agents say "host 0".
class BusLogicFleetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fleet = pod::Fleet::Create({{"big", pod::Generation::kV2, 2, 2, "zone-a"},
                                     {"dev-0", pod::Generation::kV2, 1, 1, "zone-b"},
                                     {"dev-1", pod::Generation::kV2, 1, 1, "zone-b"}});
    ASSERT_TRUE(fleet.has_value()) << fleet.error().message();
    core::SchedulerConfig sc;
    sc.min_runtime_before_preemption = Duration::zero();
    auto s = core::Scheduler::Create(std::move(*fleet), sc, &repo_, now_);
    ASSERT_TRUE(s.has_value()) << s.error().message();
    sched_ = std::move(*s);
    BusLogic::Options o;
    o.bus.heartbeat_timeout_ms = 3000;
    o.scheduler_id = "s1";
    bus_ = std::make_unique<BusLogic>(o, sched_.get(), [] { return std::string("tok"); });
    ASSERT_TRUE(bus_->Start(now_).ok());
  }
  void Send(const std::string& agent, const bus::Envelope& e) {
    ASSERT_TRUE(bus_->OnMessage(agent, e.SerializeAsString(), now_).ok());
  }
  void Register(const std::string& agent, const std::string& pod, std::vector<int> hosts) {
    bus::Envelope e;
    e.mutable_register_()->set_agent_id(agent);
    e.mutable_register_()->set_pod(pod);
    for (int h : hosts) e.mutable_register_()->add_hosts(h);
    e.mutable_register_()->set_rsh_endpoint("tcp://127.0.0.1:4" + std::to_string(hosts.size()));
    Send(agent, e);
  }
  std::vector<std::pair<std::string, bus::Envelope>> Out() {
    std::vector<std::pair<std::string, bus::Envelope>> out;
    for (auto& m : bus_->TakeOutgoing()) {
      bus::Envelope e;
      EXPECT_TRUE(e.ParseFromString(m.bytes));
      out.emplace_back(m.agent_id, e);
    }
    return out;
  }
  int64_t Dropped(const std::string& reason) {
    auto it = bus_->dropped().find(reason);
    return it == bus_->dropped().end() ? 0 : it->second;
  }
  JobId Place(const std::string& type, int slices = 1) {
    core::JobSpec spec = Spec("alice", type, false);
    spec.slices = slices;
    auto id = sched_->Submit(spec, now_);
    EXPECT_TRUE(id.has_value());
    now_ += std::chrono::milliseconds(10);
    EXPECT_TRUE(bus_->OnTimer(now_).ok());
    bus_->Dispatch(sched_->Tick(now_));
    EXPECT_EQ(sched_->Find(*id)->state, core::JobState::kPlaced);
    return *id;
  }

  core::InMemoryJobRepository repo_;
  std::unique_ptr<core::Scheduler> sched_;
  std::unique_ptr<BusLogic> bus_;
  TimePoint now_ = At(1000);
};

TEST_F(BusLogicFleetTest, EachAgentNamesItsPodsOwnHostsAndLaunchesSpeakThem) {
  EXPECT_EQ(bus_->unhealthy_hosts(), 6);
  Register("big-a", "big", {0, 1, 2, 3});
  Register("d0", "dev-0", {0});
  Register("d1", "dev-1", {0});  // the same pod id as d0's host: another host of the fleet
  EXPECT_EQ(bus_->unhealthy_hosts(), 0);
  EXPECT_EQ(bus_->hosts()[4].agent_id, "d0");
  EXPECT_EQ(bus_->hosts()[5].agent_id, "d1");
  Out();

  // A v2-32 can only go to "big"; its Launch names big's hosts 0-3, to big's agent alone.
  const JobId big = Place("v2-32");
  EXPECT_EQ(sched_->Find(big)->placement->pod, 0);
  auto out = Out();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, "big-a");
  EXPECT_EQ(out[0].second.launch().env().at("POD_SLICE"), "big:0,0:2x2");

  // A v2-8 then goes to a device: the Launch names its fleet id, with where the agent's pod
  // starts among them (its host 0); the env says "host 0".
  const JobId small = Place("v2-8");
  const int pod = sched_->Find(small)->placement->pod;
  ASSERT_TRUE(pod == 1 || pod == 2);
  const std::string agent = pod == 1 ? "d0" : "d1";
  out = Out();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, agent);
  const bus::Launch& l = out[0].second.launch();
  ASSERT_EQ(l.hosts_size(), 1);
  EXPECT_EQ(l.hosts(0), 3 + pod);
  EXPECT_EQ(l.first_host(), 3 + pod);
  EXPECT_EQ(l.rsh_endpoints().count(3 + pod), 1u);
  EXPECT_EQ(l.env().at("POD_HOSTS"), "0");
  EXPECT_EQ(l.env().at("POD_SLICE"), sched_->fleet().pod(pod).name() + ":0,0:1x1");
  // Ports come from the fleet's host (no two pods' host 0 share a block on one machine).
  EXPECT_EQ(l.env().at("MASTER_PORT"), std::to_string(20000 + (4 + pod - 1) * kPortSlotsPerHost));

  // The device's agent reports by its own id, and the job ends on the right host.
  bus::Envelope running;
  running.mutable_heartbeat()->set_agent_id(agent);
  auto* r = running.mutable_heartbeat()->add_running();
  r->mutable_job()->set_job_id(small.value());
  r->mutable_job()->set_epoch(sched_->Find(small)->epoch);
  r->add_hosts(0);
  r->add_ranks_up_hosts(0);
  Send(agent, running);
  EXPECT_EQ(sched_->Find(small)->state, core::JobState::kRunning);
  bus::Envelope exited;
  exited.mutable_exited()->mutable_job()->set_job_id(small.value());
  exited.mutable_exited()->mutable_job()->set_epoch(sched_->Find(small)->epoch);
  exited.mutable_exited()->set_reason(bus::Exited::COMPLETED);
  exited.mutable_exited()->add_hosts(0);
  Send(agent, exited);
  EXPECT_EQ(sched_->Find(small)->state, core::JobState::kSucceeded);
  EXPECT_FALSE(sched_->fleet().host(HostId(3 + pod)).allocation.has_value());
  EXPECT_EQ(sched_->Find(big)->state, core::JobState::kPlaced) << "big's job is untouched";

  // The other device's agent cannot speak for it: its "host 0" is another host.
  exited.mutable_exited()->mutable_job()->set_job_id(big.value());
  exited.mutable_exited()->mutable_job()->set_epoch(sched_->Find(big)->epoch);
  Send(pod == 1 ? "d1" : "d0", exited);
  EXPECT_EQ(sched_->Find(big)->state, core::JobState::kPlaced);
  EXPECT_EQ(Dropped("unknown_host"), 1);
}

// A job of two v2-8 slices goes to both devices of zone-b, which both number their host "0": one
// Launch to each agent, naming the hosts by fleet ids (4, 5) with each agent's own first_host;
// the env has each slice, the pods' ids and MEGASCALE_*. It runs once both slices' ranks are up,
// and ends by the launcher's verdict (the first slice's agent) and the other's release.
TEST_F(BusLogicFleetTest, AMultisliceJobIsLaunchedToEverySlicesAgentInFleetIds) {
  Register("big-a", "big", {0, 1, 2, 3});
  Register("d0", "dev-0", {0});
  Register("d1", "dev-1", {0});
  Out();
  const JobId job = Place("v2-8", 2);
  const core::JobRecord& placed = *sched_->Find(job);
  ASSERT_EQ(placed.more_slices.size(), 1u);
  auto out = Out();
  ASSERT_EQ(out.size(), 2u);
  std::map<std::string, bus::Launch> launches;
  for (const auto& [agent, e] : out) launches[agent] = e.launch();
  ASSERT_TRUE(launches.contains("d0") && launches.contains("d1"));
  EXPECT_EQ(launches["d0"].first_host(), 4);
  EXPECT_EQ(launches["d1"].first_host(), 5);
  const bus::Launch& l = launches["d0"];
  const int first = placed.placement->pod;  // 1 or 2: the launcher's device
  EXPECT_EQ(std::vector<int32_t>(l.hosts().begin(), l.hosts().end()),
            (std::vector<int32_t>{3 + first, first == 1 ? 5 : 4}));
  EXPECT_EQ(l.rsh_endpoints().size(), 2u);
  EXPECT_EQ(l.env().at("POD_HOSTS"), "0,0");
  EXPECT_EQ(l.env().at("POD_SLICES"), first == 1 ? "dev-0:0,0:1x1;dev-1:0,0:1x1"
                                                 : "dev-1:0,0:1x1;dev-0:0,0:1x1");
  EXPECT_EQ(l.env().at("POD_NUM_SLICES"), "2");
  EXPECT_EQ(l.env().at("MEGASCALE_NUM_SLICES"), "2");
  EXPECT_EQ(l.env().at("WORLD_SIZE"), "2");
  EXPECT_EQ(l.env().at("MEGASCALE_COORDINATOR_ADDRESS"), l.env().at("MASTER_ADDR"));

  const std::string launcher = first == 1 ? "d0" : "d1", other = first == 1 ? "d1" : "d0";
  auto beat = [&](const std::string& agent) {
    bus::Envelope e;
    e.mutable_heartbeat()->set_agent_id(agent);
    auto* r = e.mutable_heartbeat()->add_running();
    r->mutable_job()->set_job_id(job.value());
    r->mutable_job()->set_epoch(placed.epoch);
    r->add_hosts(0);
    r->add_ranks_up_hosts(0);
    Send(agent, e);
  };
  beat(launcher);
  EXPECT_EQ(sched_->Find(job)->state, core::JobState::kStarting) << "one slice's ranks are up";
  beat(other);
  EXPECT_EQ(sched_->Find(job)->state, core::JobState::kRunning);

  bus::Envelope exited;
  exited.mutable_exited()->mutable_job()->set_job_id(job.value());
  exited.mutable_exited()->mutable_job()->set_epoch(placed.epoch);
  exited.mutable_exited()->set_reason(bus::Exited::COMPLETED);
  exited.mutable_exited()->add_hosts(0);
  Send(other, exited);  // not the launcher: no verdict
  EXPECT_EQ(sched_->Find(job)->state, core::JobState::kRunning);
  EXPECT_EQ(Dropped("unknown_host"), 1);
  Send(launcher, exited);
  EXPECT_EQ(sched_->Find(job)->state, core::JobState::kSucceeded);
  exited.mutable_exited()->set_reason(bus::Exited::RELEASED);
  Send(other, exited);
  EXPECT_FALSE(sched_->fleet().host(HostId(4)).allocation.has_value());
  EXPECT_FALSE(sched_->fleet().host(HostId(5)).allocation.has_value());
}

TEST_F(BusLogicFleetTest, AnAgentOfAPodTheFleetDoesNotHaveOrOfHostsItsPodLacksIsRefused) {
  Register("x", "dev-7", {0});
  EXPECT_EQ(Dropped("unknown_pod"), 1);
  Register("y", "dev-0", {1});  // a device has host 0 only
  EXPECT_EQ(Dropped("unknown_host"), 1);
  Register("z", "big", {4});  // fleet id 4 is dev-0's host, not big's
  EXPECT_EQ(Dropped("unknown_host"), 2);
  EXPECT_TRUE(Out().empty()) << "no Welcome";
  EXPECT_EQ(bus_->connected_agents(), 0);
  EXPECT_EQ(bus_->unhealthy_hosts(), 6);

  // Enrolled for host 0 of dev-0: host 0 of dev-1 is another machine's (audit H6 on a fleet).
  bus_->SetEnrolledHosts([](const std::string& id) -> std::optional<HostEnrolment> {
    if (id == "d0") return HostEnrolment{"dev-0", {0}};
    return std::nullopt;
  });
  Register("d0", "dev-1", {0});
  EXPECT_EQ(Dropped("host_not_enrolled"), 1);
  Register("d0", "dev-0", {0});
  EXPECT_EQ(Dropped("host_not_enrolled"), 1);
  EXPECT_EQ(bus_->hosts()[4].agent_id, "d0");
  EXPECT_EQ(bus_->unhealthy_hosts(), 5);
}

}  // namespace
}  // namespace podsched::daemon
