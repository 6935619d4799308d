#include "scheduler/daemon/bus_logic.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/check.h"
#include "common/host_list.h"
#include "scheduler/daemon/bus_wire.h"
#include "scheduler/daemon/exit_verdict.h"

namespace podsched::daemon {
namespace {

constexpr size_t kMaxMessageBytes = 1 << 20;
constexpr size_t kMaxLogData = 64 << 10;
constexpr size_t kMaxText = 256;
constexpr int kMaxRunning = 4096;

std::string RandomToken() {
  unsigned char bytes[16];
  PODSCHED_CHECK(RAND_bytes(bytes, sizeof bytes) == 1);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

// Expected failures of a core call on bad input; anything else is the store failing.
bool IsInputError(const Status& s) {
  return s.code() == StatusCode::kNotFound || s.code() == StatusCode::kInvalidArgument ||
         s.code() == StatusCode::kFailedPrecondition;
}

}  // namespace

BusLogic::BusLogic(Options options, core::Scheduler* scheduler, TokenSource tokens)
    : options_(std::move(options)),
      scheduler_(scheduler),
      tokens_(tokens ? std::move(tokens) : TokenSource(RandomToken)),
      registry_(scheduler->fleet().num_hosts()),
      reconciler_(scheduler),
      composer_({options_.checkpoint_stores, options_.log_url, options_.bus.job_port_first,
                 options_.bus.job_port_last,
                 PortsPerHost(options_.bus.job_port_first, options_.bus.job_port_last,
                              scheduler->fleet().num_hosts()),
                 options_.unix_user_of}) {
  if (options_.bus.reconcile_timeout_ms <= 0) {
    options_.bus.reconcile_timeout_ms = options_.bus.heartbeat_timeout_ms;
  }
}

Status BusLogic::Start(TimePoint now) {
  last_timer_ = now;
  reconciler_.Start(now + std::chrono::milliseconds(options_.bus.reconcile_timeout_ms));
  for (int i = 0; i < scheduler_->fleet().num_hosts(); ++i) {
    if (Status s = UpdateHost(HostId(i), now); !s.ok()) return s;
  }
  return Status::Ok();
}

// ---- health ----

Status BusLogic::UpdateHost(HostId host, TimePoint now) {
  HostHealth& h = registry_.health(host);
  std::string want = registry_.DesiredReason(host, options_.bus.require_agents);
  // During the reconcile window an allocated host waits for its agent instead of failing its job.
  if (!want.empty() && reconciler_.Awaiting(host)) want = "";
  if (want == h.reason) return Status::Ok();
  bool was_up = h.reason.empty();
  h.reason = want;
  if (was_up && !want.empty()) return Apply(scheduler_->HostDown(host, now), "invalid");
  if (!was_up && want.empty()) return Apply(scheduler_->HostUp(host, now), "invalid");
  return Status::Ok();
}

Status BusLogic::OnTimer(TimePoint now) {
  auto timeout = std::chrono::milliseconds(options_.bus.heartbeat_timeout_ms);
  bool stalled = now - last_timer_ >= std::max<Duration>(timeout / 2, 3 * options_.tick_interval);
  last_timer_ = now;
  for (auto& [je, pending] : launches_) {
    if (pending.sent == TimePoint{}) pending.sent = now;
  }
  std::erase_if(exit_watch_, [&](const auto& entry) {  // epochs that ended without a verdict here
    return LiveEpoch(*scheduler_, entry.first) == nullptr;
  });
  if (stalled) return Status::Ok();
  for (HostId h : registry_.ExpireSilent(now, timeout)) {
    if (Status s = UpdateHost(h, now); !s.ok()) return s;
  }
  for (HostId h : reconciler_.Expire(now)) {
    if (Status s = UpdateHost(h, now); !s.ok()) return s;
  }
  return Status::Ok();
}

size_t BusLogic::LargestLaunchBytes(const core::JobSpec& spec) const {
  auto type = scheduler_->fleet().ParseType(spec.accelerator);
  if (!type) return 0;
  // The longest name of a pod that can hold the type: the job may land on any of them.
  std::string longest;
  for (int p : scheduler_->fleet().PodsThatCanHold(*type)) {
    const std::string& name = scheduler_->fleet().pod(p).name();
    if (name.size() > longest.size()) longest = name;
  }
  return composer_.LargestLaunchBytes(spec, *type, longest);
}

// ---- incoming ----

Status BusLogic::OnMessage(std::string_view agent_id, std::string_view bytes, TimePoint now) {
  if (bytes.size() > kMaxMessageBytes) {
    Drop("oversized");
    return Status::Ok();
  }
  bus::Envelope e;
  if (!e.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      e.body_case() == bus::Envelope::BODY_NOT_SET) {
    Drop("malformed");
    return Status::Ok();
  }
  ++received_[std::string(TypeName(e.body_case()))];
  std::string id(agent_id);
  if (e.body_case() == bus::Envelope::kRegister) return OnRegister(id, e, now);
  AgentInfo* agent = registry_.FindConnected(id);
  if (agent == nullptr) {
    // A restarted scheduler (or a timed-out agent): the agent tells us again what it runs.
    Drop("unknown_agent");
    if (ValidAgentId(id)) {
      bus::Envelope r;
      r.mutable_reregister();
      Send(id, r);
    }
    return Status::Ok();
  }
  AgentHostsToFleet(scheduler_->fleet(), agent->pod_index, e);
  switch (e.body_case()) {
    case bus::Envelope::kHeartbeat:
      return OnHeartbeat(*agent, e.heartbeat(), now);
    case bus::Envelope::kExited:
      agent->last_heard = now;
      return OnExited(*agent, e.exited(), now);
    case bus::Envelope::kProgress:
      agent->last_heard = now;
      return OnProgress(*agent, e.progress(), now);
    case bus::Envelope::kLog:
      agent->last_heard = now;
      OnLog(*agent, e.log(), now);
      return Status::Ok();
    default:  // scheduler -> agent messages have no business arriving here
      Drop("invalid");
      return Status::Ok();
  }
}

Status BusLogic::OnRegister(const std::string& id, bus::Envelope& e, TimePoint now) {
  const bus::Register& m = e.register_();
  if (!ValidAgentId(id) || m.agent_id() != id || m.rsh_endpoint().size() > kMaxText ||
      m.hostname().size() > kMaxText || m.version().size() > kMaxText ||
      m.hosts_size() == 0 || m.running_size() > kMaxRunning ||
      m.unacked_exits_size() > kMaxRunning) {
    Drop("invalid");
    return Status::Ok();
  }
  // An agent serves hosts of one pod of the fleet, and names them by that pod's ids.
  const pod::Fleet& fleet = scheduler_->fleet();
  const std::optional<int> pod_index = fleet.IndexOf(m.pod());
  if (!pod_index) {
    Drop("unknown_pod");
    return Status::Ok();
  }
  const pod::Pod& pod = fleet.pod(*pod_index);
  if (m.hosts_size() > pod.num_hosts()) {
    Drop("invalid");
    return Status::Ok();
  }
  // An agent enrolled for some hosts registers only those: otherwise one stolen key (or a root
  // on one worker) could claim every unheld host after a restart and receive every launch.
  std::optional<HostEnrolment> enrolled;
  if (enrolled_hosts_) enrolled = enrolled_hosts_(id);
  if (enrolled && !enrolled->pod.empty() && enrolled->pod != m.pod()) {
    Drop("host_not_enrolled");
    return Status::Ok();
  }
  for (int32_t h : m.hosts()) {
    if (!pod.Contains(HostId(h))) {
      Drop("unknown_host");
      return Status::Ok();
    }
    if (enrolled && !std::binary_search(enrolled->hosts.begin(), enrolled->hosts.end(), h)) {
      Drop("host_not_enrolled");
      return Status::Ok();
    }
  }
  // From here on every host is the fleet's.
  AgentHostsToFleet(fleet, *pod_index, e);
  std::set<HostId> hosts;
  for (int32_t h : m.hosts()) {
    if (registry_.ClaimedByOther(id, HostId(h))) {
      Drop("invalid");  // served by another live agent
      return Status::Ok();
    }
    hosts.insert(HostId(h));
  }
  AgentInfo info;
  info.agent_id = id;
  info.pod = m.pod();
  info.pod_index = *pod_index;
  info.rsh_endpoint = m.rsh_endpoint();
  info.hostname = m.hostname();
  info.version = m.version();
  // A re-registering agent may serve other hosts now: the ones it dropped have no agent.
  std::vector<HostId> dropped_hosts;
  AgentInfo& agent = registry_.Register(std::move(info), hosts, now, &dropped_hosts);

  bus::Envelope welcome;
  welcome.mutable_welcome()->set_scheduler_id(options_.scheduler_id);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(options_.bus.heartbeat_interval_ms);
  Send(id, welcome);

  // Exits first: a host whose exit is reported is not "missing" below.
  Reconciler::AgentReport report;
  for (const bus::Exited& x : m.unacked_exits()) {
    for (int32_t h : x.hosts()) report.accounted.insert({FromProto(x.job()), HostId(h)});
    if (Status s = OnExited(agent, x, now); !s.ok()) return s;
  }
  for (const bus::RunningJob& r : m.running()) {
    report.running.insert(FromProto(r.job()));
    for (int32_t h : r.hosts()) report.accounted.insert({FromProto(r.job()), HostId(h)});
  }
  if (Status s = OnRunning(agent, m.running(), /*registering=*/true, now); !s.ok()) return s;

  // Allocated to a live epoch here, yet neither running nor exited: the processes are gone
  // (the agent or the scheduler restarted). The launcher's host decides the job's fate. Each
  // verdict is applied before the next host is judged: it may end the placement.
  for (HostId h : hosts) {
    std::optional<Reconciler::Missing> missing = reconciler_.MissingOn(h, report);
    if (!missing) continue;
    // Still PLACED: no host ever reported the processes started. The Launch may never have
    // left (podsched crashed after committing PLACED): not the job's failure (audit L11).
    const core::JobRecord* job = scheduler_->Find(missing->job.job);
    const core::ExitKind kind = job != nullptr && job->state == core::JobState::kPlaced
                                    ? core::ExitKind::kNeverStarted
                                    : core::ExitKind::kKilled;
    Status s = missing->launcher
                   ? Apply(scheduler_->ReportExited(missing->job, h, kind,
                                                    "not running after a restart", now),
                           "unknown_job")
                   : Apply(scheduler_->ReportHostReleased(missing->job, h, now), "unknown_job");
    if (!s.ok()) return s;
  }
  for (HostId h : dropped_hosts) {
    if (Status s = UpdateHost(h, now); !s.ok()) return s;
  }
  reconciler_.Registered(agent.hosts);
  for (HostId h : agent.hosts) {
    if (Status s = UpdateHost(h, now); !s.ok()) return s;
  }
  return Status::Ok();
}

Status BusLogic::OnHeartbeat(AgentInfo& agent, const bus::Heartbeat& m, TimePoint now) {
  if (m.agent_id() != agent.agent_id || m.running_size() > kMaxRunning ||
      m.unacked_exits_size() > kMaxRunning) {
    Drop("invalid");
    return Status::Ok();
  }
  agent.last_heard = now;
  for (const bus::Exited& x : m.unacked_exits()) {
    if (Status s = OnExited(agent, x, now); !s.ok()) return s;
  }
  return OnRunning(agent, m.running(), /*registering=*/false, now);
}

Status BusLogic::OnRunning(AgentInfo& agent,
                           const google::protobuf::RepeatedPtrField<bus::RunningJob>& running,
                           bool registering, TimePoint now) {
  agent.running.clear();
  std::set<HostId> still_stale;
  for (const bus::RunningJob& r : running) {
    JobEpoch je = FromProto(r.job());
    if (!std::all_of(r.hosts().begin(), r.hosts().end(),
                     [&](int32_t h) { return registry_.Serves(agent, HostId(h)); })) {
      Drop("unknown_host");
      continue;
    }
    agent.running.push_back(je);
    if (auto pending = launches_.find(je); pending != launches_.end()) {
      for (int32_t h : r.hosts()) pending->second.reported.insert(HostId(h));
    }
    if (const core::JobRecord* job = LiveEpoch(*scheduler_, je)) {
      if (job->state == core::JobState::kPlaced) {  // adopted, or started: PLACED -> STARTING
        if (Status s = Apply(scheduler_->ReportStarted(je, now), "unknown_job"); !s.ok()) return s;
      }
      if (Status s = OnRanksUp(je, r.ranks_up_hosts(), now); !s.ok()) return s;
      continue;
    }
    // Not an epoch we want: kill it. At registration (we did not know this agent) the hosts stay
    // down until the processes are gone; later it is a job we are already winding down.
    bus::Envelope kill;
    ToProto(je, kill.mutable_kill()->mutable_job());
    kill.mutable_kill()->set_reason("not an epoch the scheduler runs");
    Send(agent.agent_id, kill);
    for (int32_t h : r.hosts()) {
      if (registry_.NoteUnwanted(HostId(h), je, registering)) still_stale.insert(HostId(h));
    }
  }
  for (HostId h : agent.hosts) {
    if (!still_stale.contains(h)) registry_.ClearUnwanted(h);
    if (Status s = UpdateHost(h, now); !s.ok()) return s;
  }
  return registering ? Status::Ok() : CheckLaunchesOf(agent, now);
}

Status BusLogic::CheckLaunchesOf(const AgentInfo& agent, TimePoint now) {
  struct Lost {
    JobEpoch je;
    std::vector<HostId> slice, missing;
    bool first;  // the epoch's first lost hosts: it gets the Kill and the verdict
  };
  std::vector<Lost> lost;
  for (auto it = launches_.begin(); it != launches_.end();) {
    PendingLaunch& pending = it->second;
    const core::JobRecord* job = scheduler_->Find(it->first.job);
    const bool current = job != nullptr && job->epoch == it->first.epoch;
    // Still waiting for its agents: starting, or preempted (or cancelled) before it started,
    // whose exit only agents that got the Launch would report.
    const bool starting = current && (job->state == core::JobState::kPlaced ||
                                      job->state == core::JobState::kStarting ||
                                      job->state == core::JobState::kPreempting);
    const bool settled = std::all_of(pending.slice.begin(), pending.slice.end(), [&](HostId h) {
      return pending.reported.contains(h) || pending.lost.contains(h);
    });
    // Judged: its epoch still starting, or one already judged whose other hosts are yet to be
    // freed. An epoch that moved on otherwise (RUNNING, ended) is the exits' and the timers'
    // business; one that ran is no longer here (settled, or erased when it became RUNNING).
    if (job == nullptr || settled || (!starting && pending.lost.empty())) {
      it = launches_.erase(it);
      continue;
    }
    if (pending.sent == TimePoint{} || now - pending.sent < options_.launch_ack_timeout) {
      ++it;
      continue;
    }
    Lost l{it->first, pending.slice, {}, pending.lost.empty()};
    for (HostId h : pending.slice) {
      if (registry_.Serves(agent, h) && !pending.reported.contains(h) && !pending.lost.contains(h)) {
        l.missing.push_back(h);
        pending.lost.insert(h);
      }
    }
    if (!l.missing.empty()) lost.push_back(std::move(l));
    ++it;
  }
  // Applied after the walk: a verdict may place jobs, and so add launches.
  for (const Lost& l : lost) {
    std::vector<int32_t> ids;
    for (HostId h : l.missing) ids.push_back(h.value());
    const std::string reason = "the agent " + agent.agent_id + " of host(s) " +
                               FormatHostRanges(ids) + " never started the launch " +
                               std::to_string(static_cast<int64_t>(
                                   ToSeconds(options_.launch_ack_timeout))) +
                               " s after it was sent (it refused or lost it: see its log)";
    if (l.first) {  // whatever did start elsewhere in the slice ends, and reports its exit
      bus::Envelope kill;
      ToProto(l.je, kill.mutable_kill()->mutable_job());
      kill.mutable_kill()->set_reason(reason);
      SendToHosts(l.slice, kill);
    }
    // Nothing of the epoch runs on these hosts: they are free. The launcher's host gives the
    // verdict (a failure, so that max_restarts ends a launch that can never start).
    // A preempted epoch's end is its preemption completing, not a failure.
    const core::JobRecord* job = scheduler_->Find(l.je.job);
    const core::ExitKind verdict = job != nullptr && job->state == core::JobState::kPreempting
                                       ? core::ExitKind::kNeverStarted
                                       : core::ExitKind::kFailed;
    for (HostId h : l.missing) {
      Status s = h == l.slice.front()
                     ? Apply(scheduler_->ReportExited(l.je, h, verdict, reason, now), "unknown_job")
                     : Apply(scheduler_->ReportHostReleased(l.je, h, now), "unknown_job");
      if (!s.ok()) return s;
    }
  }
  return Status::Ok();
}

// The agents' hosts whose ranks are all up, joined per epoch: once every host of the slice is
// among them, the job is RUNNING. Agents repeat the hosts in every heartbeat, so a restarted
// podsched rebuilds this from the next beats.
Status BusLogic::OnRanksUp(const JobEpoch& je,
                           const google::protobuf::RepeatedField<int32_t>& hosts, TimePoint now) {
  const core::JobRecord* job = LiveEpoch(*scheduler_, je);
  if (job == nullptr || hosts.empty() || !job->placement) return Status::Ok();
  if (job->state != core::JobState::kPlaced && job->state != core::JobState::kStarting) {
    ranks_up_.erase(je.job);
    return Status::Ok();
  }
  auto& [epoch, up] = ranks_up_[je.job];
  if (epoch != je.epoch) up.clear();
  epoch = je.epoch;
  const std::vector<HostId> held = core::HostsOfJob(scheduler_->fleet(), *job);  // every slice
  for (int32_t h : hosts) {
    if (std::find(held.begin(), held.end(), HostId(h)) != held.end()) up.insert(HostId(h));
  }
  if (up.size() < held.size()) return Status::Ok();
  ranks_up_.erase(je.job);
  return Apply(scheduler_->ReportRunning(je, now), "unknown_job");
}

Status BusLogic::OnExited(AgentInfo& agent, const bus::Exited& m, TimePoint now) {
  JobEpoch je = FromProto(m.job());
  if (m.hosts_size() == 0 || !std::all_of(m.hosts().begin(), m.hosts().end(), [&](int32_t h) {
        return registry_.Serves(agent, HostId(h));
      })) {
    Drop("unknown_host");
    return Status::Ok();
  }
  const core::JobRecord* job = scheduler_->Find(je.job);
  if (job == nullptr) {
    Drop("unknown_job");
    acks_[agent.agent_id].push_back(je);  // nothing to do; stop the resends
    return Status::Ok();
  }
  const bool live = LiveEpoch(*scheduler_, je) != nullptr;
  const bool past_grace = live && job->state == core::JobState::kPreempting &&
                          job->preempt_deadline != TimePoint{} && now >= job->preempt_deadline;
  std::optional<ExitVerdict> verdict = VerdictOf(m, past_grace);
  if (!verdict) {
    Drop("invalid");
    return Status::Ok();
  }
  if (live) {
    // Of the live epoch, only the job's hosts (every slice's) report, and only the launcher host
    // (the first, where mpirun or `podworker launch` runs) gives the verdict: an agent cannot
    // end another user's job by naming a host of its own.
    const std::vector<HostId> held = core::HostsOfJob(scheduler_->fleet(), *job);
    const bool in_slice = std::all_of(m.hosts().begin(), m.hosts().end(), [&](int32_t h) {
      return std::find(held.begin(), held.end(), HostId(h)) != held.end();
    });
    const bool from_launcher =
        std::find(m.hosts().begin(), m.hosts().end(), held.front().value()) != m.hosts().end();
    if (!in_slice || (!verdict->released && !from_launcher)) {
      Drop("unknown_host");
      acks_[agent.agent_id].push_back(je);  // a refusal is final: stop the resends
      return Status::Ok();
    }
  }
  if (verdict->released) {
    if (live) {
      for (int32_t h : m.hosts()) exit_watch_[je].released.insert(HostId(h));
    }
    for (int32_t h : m.hosts()) {
      if (Status s = Apply(scheduler_->ReportHostReleased(je, HostId(h), now), "invalid"); !s.ok()) {
        return s;
      }
    }
  } else if (live && verdict->kind == core::ExitKind::kFailed && HoldFailure(je, *job, m, now)) {
    ++dropped_["failure_held"];  // not acknowledged: resent with the agent's next heartbeat
    return Status::Ok();
  } else {
    exit_watch_.erase(je);
    if (live && m.last_checkpoint_step() > job->last_checkpoint_step) {
      int64_t ckpt = m.last_checkpoint_step();
      Status s = Apply(scheduler_->ReportProgress(je, std::max(job->step, ckpt), ckpt, now),
                       "invalid");
      if (!s.ok()) return s;
    }
    for (int32_t h : m.hosts()) {
      Status s = Apply(scheduler_->ReportExited(je, HostId(h), verdict->kind, verdict->reason, now),
                       "invalid");
      if (!s.ok()) return s;
    }
  }
  if (!live) exit_watch_.erase(je);
  acks_[agent.agent_id].push_back(je);
  return Status::Ok();
}

bool BusLogic::HoldFailure(JobEpoch je, const core::JobRecord& job, const bus::Exited& m,
                           TimePoint now) {
  ExitWatch& watch = exit_watch_[je];
  std::vector<HostId> waiting;
  for (HostId h : core::HostsOfJob(scheduler_->fleet(), job)) {
    const bool reporting = std::find(m.hosts().begin(), m.hosts().end(), h.value()) != m.hosts().end();
    if (!reporting && !watch.released.contains(h)) waiting.push_back(h);
  }
  if (waiting.empty()) return false;
  if (watch.failure_held == TimePoint{}) {
    // The job failed either way: its other hosts stop now (as the core's Kill would once the
    // verdict stands), and a live agent then reports them RELEASED at once.
    watch.failure_held = now;
    bus::Envelope e;
    ToProto(je, e.mutable_kill()->mutable_job());
    e.mutable_kill()->set_reason("the launcher host reported a failure");
    SendToHosts(waiting, e);
  }
  const auto limit = std::chrono::milliseconds(options_.bus.heartbeat_timeout_ms +
                                               options_.bus.heartbeat_interval_ms);
  return now - watch.failure_held < limit;
}

Status BusLogic::OnProgress(AgentInfo& agent, const bus::Progress& m, TimePoint now) {
  JobEpoch je = FromProto(m.job());
  if (scheduler_->Find(je.job) == nullptr) {
    Drop("unknown_job");
    return Status::Ok();
  }
  const core::JobRecord* job = LiveEpoch(*scheduler_, je);
  if (job == nullptr) {
    Drop("stale_epoch");
    return Status::Ok();
  }
  if (!ServesSliceOf(agent, *job)) {
    Drop("unknown_host");
    return Status::Ok();
  }
  // The size of the job's checkpoints, when it says (docs/jobspec.md: the scalar
  // checkpoint_bytes): what crossing zones moves (core::JobRecord::checkpoint_bytes).
  std::optional<int64_t> checkpoint_bytes;
  if (auto it = m.scalars().find(std::string(kCheckpointBytesScalar)); it != m.scalars().end()) {
    if (!(it->second >= 0 && it->second <= 0x1p53)) {
      Drop("invalid");
      return Status::Ok();
    }
    checkpoint_bytes = static_cast<int64_t>(it->second);
  }
  Result<core::Actions> r =
      scheduler_->ReportProgress(je, m.step(), m.last_checkpoint_step(), now, checkpoint_bytes);
  if (!r) {
    if (IsInputError(r.error())) {
      Drop("invalid");
      return Status::Ok();
    }
    return r.error();
  }
  Dispatch(*r);
  ProgressSample sample{now,      je.epoch,       m.step(),
                        m.total_steps(), m.loss(), m.accuracy(),
                        m.examples_per_second(), m.last_checkpoint_step(), {}};
  for (const auto& [name, value] : m.scalars()) {
    if (sample.scalars.size() >= kMaxProgressScalars) break;
    if (name.size() <= 32 && std::isfinite(value)) sample.scalars[name] = value;
  }
  output_.AddProgress(je.job, sample);
  return Status::Ok();
}

void BusLogic::OnLog(AgentInfo& agent, const bus::Log& m, TimePoint now) {
  JobEpoch je = FromProto(m.job());
  const core::JobRecord* job = scheduler_->Find(je.job);
  if (m.data().size() > kMaxLogData) return Drop("oversized");
  if (job == nullptr) return Drop("unknown_job");
  if (je.epoch != job->epoch || m.offset() < 0) return Drop("stale_epoch");
  if (!job->placement) return Drop("stale_epoch");
  if (!ServesSliceOf(agent, *job)) return Drop("unknown_host");
  output_.AppendLog(je.job, je.epoch, m.offset(), m.data(), now);
}

// ---- outgoing ----

Status BusLogic::Apply(Result<core::Actions> r, std::string_view drop_reason_on_error) {
  if (!r) {
    if (IsInputError(r.error())) {
      Drop(drop_reason_on_error);
      return Status::Ok();
    }
    return r.error();
  }
  Dispatch(*r);
  return Status::Ok();
}

void BusLogic::Dispatch(const core::Actions& actions) {
  for (const core::Action& action : actions) {
    if (const auto* plan = std::get_if<core::LaunchPlan>(&action)) {
      reconciler_.Placed(*plan);
      launches_[plan->job] = PendingLaunch{TimePoint{}, plan->hosts, {}, {}};
      bus::Envelope e;
      *e.mutable_launch() = composer_.Compose(*plan, registry_.RshEndpoints(plan->hosts), tokens_());
      // One Launch per agent of any slice; each learns where its pod's ids start among the
      // Launch's fleet ids.
      for (const std::string& agent_id : registry_.AgentsServing(plan->hosts)) {
        const AgentInfo& agent = registry_.agents().at(agent_id);
        e.mutable_launch()->set_first_host(scheduler_->fleet().first_host(agent.pod_index));
        Send(agent_id, e);
      }
    } else if (const auto* preempt = std::get_if<core::PreemptAction>(&action)) {
      bus::Envelope e;
      ToProto(preempt->job, e.mutable_preempt()->mutable_job());
      e.mutable_preempt()->set_grace_seconds(static_cast<int32_t>(ToSeconds(preempt->grace)));
      e.mutable_preempt()->set_reason(preempt->reason);
      SendToHosts(preempt->hosts, e);
    } else if (const auto* kill = std::get_if<core::KillAction>(&action)) {
      bus::Envelope e;
      ToProto(kill->job, e.mutable_kill()->mutable_job());
      e.mutable_kill()->set_reason(kill->reason);
      SendToHosts(kill->hosts, e);
    }
  }
}

void BusLogic::SendToHosts(const std::vector<HostId>& hosts, const bus::Envelope& e) {
  for (const std::string& agent_id : registry_.AgentsServing(hosts)) Send(agent_id, e);
}

void BusLogic::Send(const std::string& agent_id, const bus::Envelope& e) {
  ++sent_[std::string(TypeName(e.body_case()))];
  outgoing_.push_back(BusOutgoing{agent_id, e.SerializeAsString()});
}

std::vector<BusOutgoing> BusLogic::TakeAcks() {
  std::vector<BusOutgoing> out;
  for (auto& [agent_id, exits] : std::exchange(acks_, {})) {
    bus::Envelope e;
    for (JobEpoch je : exits) ToProto(je, e.mutable_ack()->add_exits());
    ++sent_["ack"];
    out.push_back(BusOutgoing{agent_id, e.SerializeAsString()});
  }
  return out;
}

// ---- queries ----

bool BusLogic::ServesSliceOf(const AgentInfo& agent, const core::JobRecord& job) const {
  const std::vector<HostId> hosts = core::HostsOfJob(scheduler_->fleet(), job);
  return std::any_of(hosts.begin(), hosts.end(),
                     [&](HostId h) { return registry_.Serves(agent, h); });
}

int64_t BusLogic::unhealthy_hosts() const {
  int64_t n = 0;
  for (int i = 0; i < scheduler_->fleet().num_hosts(); ++i) {
    if (!scheduler_->fleet().host(HostId(i)).healthy) ++n;
  }
  return n;
}

}  // namespace podsched::daemon
