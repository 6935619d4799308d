#include "scheduler/daemon/bus_logic.h"

#include <openssl/rand.h>

#include <algorithm>

#include "common/check.h"

namespace podsched::daemon {
namespace {

constexpr size_t kMaxMessageBytes = 1 << 20;
constexpr size_t kMaxLogData = 64 << 10;
constexpr size_t kMaxText = 256;
constexpr int kMaxRunning = 4096;

bool ValidAgentId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

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

JobEpoch FromProto(const bus::JobEpoch& je) { return JobEpoch{JobId(je.job_id()), je.epoch()}; }

void ToProto(JobEpoch je, bus::JobEpoch* out) {
  out->set_job_id(je.job.value());
  out->set_epoch(je.epoch);
}

std::string_view TypeName(bus::Envelope::BodyCase c) {
  switch (c) {
    case bus::Envelope::kRegister: return "register";
    case bus::Envelope::kHeartbeat: return "heartbeat";
    case bus::Envelope::kLaunch: return "launch";
    case bus::Envelope::kPreempt: return "preempt";
    case bus::Envelope::kKill: return "kill";
    case bus::Envelope::kProgress: return "progress";
    case bus::Envelope::kExited: return "exited";
    case bus::Envelope::kWelcome: return "welcome";
    case bus::Envelope::kReregister: return "reregister";
    case bus::Envelope::kAck: return "ack";
    case bus::Envelope::kLog: return "log";
    case bus::Envelope::BODY_NOT_SET: break;
  }
  return "none";
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
      hosts_(static_cast<size_t>(scheduler->pod().num_hosts())),
      stale_(static_cast<size_t>(scheduler->pod().num_hosts())) {
  if (options_.bus.reconcile_timeout_ms <= 0) {
    options_.bus.reconcile_timeout_ms = options_.bus.heartbeat_timeout_ms;
  }
}

Status BusLogic::Start(TimePoint now) {
  last_timer_ = now;
  for (const auto& [id, job] : scheduler_->jobs()) {
    if (!core::HoldsHosts(job.state) || !job.placement) continue;
    for (HostId h : scheduler_->pod().HostsIn(*job.placement)) awaiting_.insert(h);
  }
  if (!awaiting_.empty()) {
    reconciling_ = true;
    reconcile_deadline_ = now + std::chrono::milliseconds(options_.bus.reconcile_timeout_ms);
  }
  for (int i = 0; i < scheduler_->pod().num_hosts(); ++i) {
    if (Status s = UpdateHost(HostId(i), now); !s.ok()) return s;
  }
  return Status::Ok();
}

// ---- health ----

std::string BusLogic::DesiredReason(HostId host) const {
  const HostHealth& h = hosts_[static_cast<size_t>(host.value())];
  if (h.agent_id.empty()) return options_.bus.require_agents ? "no agent" : "";
  auto it = agents_.find(h.agent_id);
  if (it == agents_.end() || !it->second.connected) {
    return options_.bus.require_agents ? "heartbeat lost" : "";
  }
  if (!stale_[static_cast<size_t>(host.value())].empty()) return "stale processes";
  return "";
}

Status BusLogic::UpdateHost(HostId host, TimePoint now) {
  HostHealth& h = hosts_[static_cast<size_t>(host.value())];
  std::string want = DesiredReason(host);
  // During the reconcile window an allocated host waits for its agent instead of failing its job.
  if (reconciling_ && !want.empty() && awaiting_.contains(host)) want = "";
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
  if (stalled) return Status::Ok();
  for (auto& [id, agent] : agents_) {
    if (!agent.connected || now - agent.last_heard < timeout) continue;
    agent.connected = false;
    for (HostId h : agent.hosts) {
      if (Status s = UpdateHost(h, now); !s.ok()) return s;
    }
  }
  if (reconciling_ && now >= reconcile_deadline_) {
    reconciling_ = false;
    std::set<HostId> missing = std::exchange(awaiting_, {});
    for (HostId h : missing) {
      if (Status s = UpdateHost(h, now); !s.ok()) return s;
    }
  }
  return Status::Ok();
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
  if (e.body_case() == bus::Envelope::kRegister) return OnRegister(id, e.register_(), now);
  auto it = agents_.find(id);
  if (it == agents_.end() || !it->second.connected) {
    // A restarted scheduler (or a timed-out agent): the agent tells us again what it runs.
    Drop("unknown_agent");
    if (ValidAgentId(id)) {
      bus::Envelope r;
      r.mutable_reregister();
      Send(id, r);
    }
    return Status::Ok();
  }
  AgentInfo& agent = it->second;
  switch (e.body_case()) {
    case bus::Envelope::kHeartbeat:
      return OnHeartbeat(id, e.heartbeat(), now);
    case bus::Envelope::kExited:
      agent.last_heard = now;
      return OnExited(agent, e.exited(), now);
    case bus::Envelope::kProgress:
      agent.last_heard = now;
      return OnProgress(agent, e.progress(), now);
    case bus::Envelope::kLog:
      agent.last_heard = now;
      OnLog(agent, e.log(), now);
      return Status::Ok();
    default:  // scheduler -> agent messages have no business arriving here
      Drop("invalid");
      return Status::Ok();
  }
}

Status BusLogic::OnRegister(const std::string& id, const bus::Register& m, TimePoint now) {
  const pod::Pod& pod = scheduler_->pod();
  if (!ValidAgentId(id) || m.agent_id() != id || m.rsh_endpoint().size() > kMaxText ||
      m.hostname().size() > kMaxText || m.version().size() > kMaxText ||
      m.hosts_size() == 0 || m.hosts_size() > pod.num_hosts() || m.running_size() > kMaxRunning ||
      m.unacked_exits_size() > kMaxRunning) {
    Drop("invalid");
    return Status::Ok();
  }
  if (m.pod() != pod.name()) {
    Drop("invalid");
    return Status::Ok();
  }
  std::set<HostId> hosts;
  for (int32_t h : m.hosts()) {
    if (!pod.Contains(HostId(h))) {
      Drop("unknown_host");
      return Status::Ok();
    }
    const std::string& owner = hosts_[static_cast<size_t>(h)].agent_id;
    if (!owner.empty() && owner != id && agents_.at(owner).connected) {
      Drop("invalid");  // served by another live agent
      return Status::Ok();
    }
    hosts.insert(HostId(h));
  }
  // A re-registering agent may serve other hosts now: the ones it dropped have no agent.
  std::vector<HostId> dropped_hosts;
  if (auto old = agents_.find(id); old != agents_.end()) {
    for (HostId h : old->second.hosts) {
      if (!hosts.contains(h)) dropped_hosts.push_back(h);
    }
  }
  for (HostId h : hosts) {
    const std::string& owner = hosts_[static_cast<size_t>(h.value())].agent_id;
    if (!owner.empty() && owner != id) {
      auto& other = agents_.at(owner).hosts;
      other.erase(std::remove(other.begin(), other.end(), h), other.end());
    }
  }
  for (HostId h : dropped_hosts) hosts_[static_cast<size_t>(h.value())].agent_id.clear();
  AgentInfo& agent = agents_[id];
  agent.agent_id = id;
  agent.pod = m.pod();
  agent.hosts.assign(hosts.begin(), hosts.end());
  agent.rsh_endpoint = m.rsh_endpoint();
  agent.hostname = m.hostname();
  agent.version = m.version();
  agent.last_heard = now;
  agent.connected = true;
  for (HostId h : hosts) {
    hosts_[static_cast<size_t>(h.value())].agent_id = id;
    stale_[static_cast<size_t>(h.value())].clear();
  }

  bus::Envelope welcome;
  welcome.mutable_welcome()->set_scheduler_id(options_.scheduler_id);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(options_.bus.heartbeat_interval_ms);
  Send(id, welcome);

  // Exits first: a host whose exit is reported is not "missing" below.
  std::set<std::pair<JobEpoch, HostId>> accounted;
  for (const bus::Exited& x : m.unacked_exits()) {
    for (int32_t h : x.hosts()) accounted.insert({FromProto(x.job()), HostId(h)});
    if (Status s = OnExited(agent, x, now); !s.ok()) return s;
  }
  for (const bus::RunningJob& r : m.running()) {
    for (int32_t h : r.hosts()) accounted.insert({FromProto(r.job()), HostId(h)});
  }
  if (Status s = OnRunning(agent, m.running(), /*registering=*/true, now); !s.ok()) return s;

  // Allocated to a live epoch here, yet neither running nor exited: the processes are gone
  // (the agent or the scheduler restarted). The launcher's host decides the job's fate.
  for (HostId h : hosts) {
    for (const auto& [jid, job] : scheduler_->jobs()) {
      if (!core::HoldsHosts(job.state) || !job.placement) continue;
      std::vector<HostId> slice = pod.HostsIn(*job.placement);
      if (std::find(slice.begin(), slice.end(), h) == slice.end()) continue;
      JobEpoch je{jid, job.epoch};
      if (accounted.contains({je, h})) continue;
      // A host other than the launcher may not have started its part yet while mpirun runs.
      if (h != slice.front()) {
        bool launcher_runs = std::any_of(m.running().begin(), m.running().end(), [&](auto& r) {
          return FromProto(r.job()) == je;
        });
        if (launcher_runs) continue;
        if (Status s = Apply(scheduler_->ReportHostReleased(je, h, now), "unknown_job"); !s.ok()) {
          return s;
        }
      } else if (Status s = Apply(scheduler_->ReportExited(je, h, core::ExitKind::kKilled,
                                                           "not running after a restart", now),
                                  "unknown_job");
                 !s.ok()) {
        return s;
      }
      break;
    }
  }
  for (HostId h : dropped_hosts) {
    if (Status s = UpdateHost(h, now); !s.ok()) return s;
  }
  for (HostId h : hosts) {
    awaiting_.erase(h);
    if (Status s = UpdateHost(h, now); !s.ok()) return s;
  }
  if (reconciling_ && awaiting_.empty()) reconciling_ = false;
  return Status::Ok();
}

Status BusLogic::OnHeartbeat(const std::string& id, const bus::Heartbeat& m, TimePoint now) {
  AgentInfo& agent = agents_.at(id);
  if (m.agent_id() != id || m.running_size() > kMaxRunning ||
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
                     [&](int32_t h) { return Serves(agent, HostId(h)); })) {
      Drop("unknown_host");
      continue;
    }
    agent.running.push_back(je);
    if (const core::JobRecord* job = Current(je)) {
      if (job->state == core::JobState::kPlaced) {  // adopted, or started: PLACED -> STARTING
        if (Status s = Apply(scheduler_->ReportStarted(je, now), "unknown_job"); !s.ok()) return s;
      }
      continue;
    }
    // Not an epoch we want: kill it. At registration (we did not know this agent) the hosts stay
    // down until the processes are gone; later it is a job we are already winding down.
    bus::Envelope kill;
    ToProto(je, kill.mutable_kill()->mutable_job());
    kill.mutable_kill()->set_reason("not an epoch the scheduler runs");
    Send(agent.agent_id, kill);
    for (int32_t h : r.hosts()) {
      auto& stale = stale_[static_cast<size_t>(h)];
      if (registering) stale.insert(je);
      if (stale.contains(je)) still_stale.insert(HostId(h));
    }
  }
  for (HostId h : agent.hosts) {
    auto& stale = stale_[static_cast<size_t>(h.value())];
    if (!still_stale.contains(h)) stale.clear();
    if (Status s = UpdateHost(h, now); !s.ok()) return s;
  }
  return Status::Ok();
}

Status BusLogic::OnExited(AgentInfo& agent, const bus::Exited& m, TimePoint now) {
  JobEpoch je = FromProto(m.job());
  if (m.hosts_size() == 0 || !std::all_of(m.hosts().begin(), m.hosts().end(), [&](int32_t h) {
        return Serves(agent, HostId(h));
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
  std::string message = m.message().substr(0, 1024);
  core::ExitKind kind = core::ExitKind::kFailed;
  std::string reason;
  switch (m.reason()) {
    case bus::Exited::COMPLETED:
      kind = core::ExitKind::kSucceeded;
      break;
    case bus::Exited::PREEMPTED:
      kind = core::ExitKind::kPreempted;
      reason = "preempted (exit 75)";
      break;
    case bus::Exited::KILLED_AFTER_GRACE:
      kind = core::ExitKind::kKilled;
      reason = "killed after the grace period (SIGTERM not honoured)";
      break;
    case bus::Exited::KILLED:
      kind = core::ExitKind::kKilled;
      reason = "killed";
      // The core's own Kill at the end of a preemption's grace period races the agent's grace
      // timer; either way the program outlived its grace period.
      if (Current(je) && job->state == core::JobState::kPreempting &&
          job->preempt_deadline != TimePoint{} && now >= job->preempt_deadline) {
        reason = "killed after the grace period (SIGTERM not honoured)";
      }
      break;
    case bus::Exited::FAILED:
      reason = m.exit_code() < 0 ? "killed by signal " + std::to_string(-m.exit_code())
                                 : "exit code " + std::to_string(m.exit_code());
      break;
    case bus::Exited::RELEASED:
      break;
    default:
      Drop("invalid");
      return Status::Ok();
  }
  if (!message.empty() && m.reason() != bus::Exited::RELEASED) reason += ": " + message;
  if (m.reason() == bus::Exited::RELEASED) {
    for (int32_t h : m.hosts()) {
      if (Status s = Apply(scheduler_->ReportHostReleased(je, HostId(h), now), "invalid"); !s.ok()) {
        return s;
      }
    }
  } else {
    if (Current(je) && m.last_checkpoint_step() > job->last_checkpoint_step) {
      int64_t ckpt = m.last_checkpoint_step();
      Status s = Apply(scheduler_->ReportProgress(je, std::max(job->step, ckpt), ckpt, now),
                       "invalid");
      if (!s.ok()) return s;
    }
    for (int32_t h : m.hosts()) {
      Status s = Apply(scheduler_->ReportExited(je, HostId(h), kind, reason, now), "invalid");
      if (!s.ok()) return s;
    }
  }
  acks_[agent.agent_id].push_back(je);
  return Status::Ok();
}

Status BusLogic::OnProgress(AgentInfo& agent, const bus::Progress& m, TimePoint now) {
  JobEpoch je = FromProto(m.job());
  const core::JobRecord* job = scheduler_->Find(je.job);
  if (job == nullptr) {
    Drop("unknown_job");
    return Status::Ok();
  }
  if (Current(je) == nullptr) {
    Drop("stale_epoch");
    return Status::Ok();
  }
  std::vector<HostId> slice = scheduler_->pod().HostsIn(*job->placement);
  if (!std::any_of(slice.begin(), slice.end(), [&](HostId h) { return Serves(agent, h); })) {
    Drop("unknown_host");
    return Status::Ok();
  }
  Result<core::Actions> r =
      scheduler_->ReportProgress(je, m.step(), m.last_checkpoint_step(), now);
  if (!r) {
    if (IsInputError(r.error())) {
      Drop("invalid");
      return Status::Ok();
    }
    return r.error();
  }
  Dispatch(*r);
  ProgressSample p{now,       je.epoch,   m.step(), m.total_steps(), m.loss(), m.accuracy(),
                   m.examples_per_second(), m.last_checkpoint_step()};
  progress_[je.job].Add(p);
  streamed_[je.job].pending = p;
  return Status::Ok();
}

void BusLogic::OnLog(AgentInfo& agent, const bus::Log& m, TimePoint now) {
  JobEpoch je = FromProto(m.job());
  const core::JobRecord* job = scheduler_->Find(je.job);
  if (m.data().size() > kMaxLogData) return Drop("oversized");
  if (job == nullptr) return Drop("unknown_job");
  if (je.epoch != job->epoch || m.offset() < 0) return Drop("stale_epoch");
  if (!job->placement) return Drop("stale_epoch");
  std::vector<HostId> slice = scheduler_->pod().HostsIn(*job->placement);
  if (!std::any_of(slice.begin(), slice.end(), [&](HostId h) { return Serves(agent, h); })) {
    return Drop("unknown_host");
  }
  logs_[je.job].Append(je.epoch, m.offset(), m.data(), now);
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

std::map<std::string, std::string> BusLogic::JobEnv(const core::JobRecord& job,
                                                    const std::vector<HostId>& hosts) const {
  std::map<std::string, std::string> env = job.spec.env;
  std::string ckpt = options_.default_checkpoint_url;
  if (auto it = job.spec.env.find("POD_CHECKPOINT_URL"); it != job.spec.env.end()) {
    ckpt = it->second;
  }
  std::string host_list;
  for (HostId h : hosts) host_list += (host_list.empty() ? "" : ",") + std::to_string(h.value());
  const pod::Placement& p = *job.placement;
  env["POD_JOB_ID"] = std::to_string(job.id.value());
  env["POD_EPOCH"] = std::to_string(job.epoch);
  env["POD_ACCELERATOR"] = job.spec.accelerator;
  env["POD_SLICE"] = scheduler_->pod().name() + ":" + std::to_string(p.origin.col) + "," +
                     std::to_string(p.origin.row) + ":" + std::to_string(p.shape.cols) + "x" +
                     std::to_string(p.shape.rows);
  env["POD_HOSTS"] = host_list;
  env["POD_CHECKPOINT_URL"] = ckpt;
  env["POD_RESTART_COUNT"] = std::to_string(job.restarts + job.preemptions);
  return env;
}

void BusLogic::Dispatch(const core::Actions& actions) {
  for (const core::Action& action : actions) {
    if (const auto* launch = std::get_if<core::LaunchAction>(&action)) {
      const core::JobRecord* job = scheduler_->Find(launch->job.job);
      if (job == nullptr || !job->placement) continue;
      bus::Envelope e;
      bus::Launch* l = e.mutable_launch();
      ToProto(launch->job, l->mutable_job());
      for (HostId h : launch->hosts) {
        l->add_hosts(h.value());
        const std::string& agent_id = hosts_[static_cast<size_t>(h.value())].agent_id;
        if (auto it = agents_.find(agent_id); it != agents_.end()) {
          (*l->mutable_rsh_endpoints())[h.value()] = it->second.rsh_endpoint;
        }
      }
      l->set_ranks_per_host(job->spec.ranks_per_host);
      l->add_command(job->spec.command);
      for (const auto& a : job->spec.args) l->add_command(a);
      for (const auto& [k, v] : JobEnv(*job, launch->hosts)) (*l->mutable_env())[k] = v;
      l->set_rsh_token(tokens_());
      l->set_grace_seconds(static_cast<int32_t>(ToSeconds(job->spec.grace_period)));
      l->set_log_url(options_.log_url);
      SendToHosts(launch->hosts, e);
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
  std::set<std::string> done;
  for (HostId h : hosts) {
    const std::string& agent_id = hosts_[static_cast<size_t>(h.value())].agent_id;
    if (agent_id.empty() || !done.insert(agent_id).second) continue;
    Send(agent_id, e);
  }
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

std::vector<std::pair<JobId, ProgressSample>> BusLogic::TakeDueProgress(TimePoint now) {
  std::vector<std::pair<JobId, ProgressSample>> out;
  for (auto& [job, st] : streamed_) {
    if (!st.pending || now - st.last_sent < std::chrono::seconds(1)) continue;
    out.emplace_back(job, *st.pending);
    st.pending.reset();
    st.last_sent = now;
  }
  return out;
}

// ---- queries ----

const core::JobRecord* BusLogic::Current(JobEpoch je) const {
  const core::JobRecord* job = scheduler_->Find(je.job);
  if (job == nullptr || job->epoch != je.epoch || !core::HoldsHosts(job->state) ||
      !job->placement) {
    return nullptr;
  }
  return job;
}

bool BusLogic::Serves(const AgentInfo& agent, HostId host) const {
  return scheduler_->pod().Contains(host) &&
         hosts_[static_cast<size_t>(host.value())].agent_id == agent.agent_id;
}

const LogTail* BusLogic::LogsOf(JobId job) const {
  auto it = logs_.find(job);
  return it == logs_.end() ? nullptr : &it->second;
}

const ProgressSeries* BusLogic::ProgressOf(JobId job) const {
  auto it = progress_.find(job);
  return it == progress_.end() ? nullptr : &it->second;
}

int64_t BusLogic::connected_agents() const {
  return std::count_if(agents_.begin(), agents_.end(),
                       [](const auto& a) { return a.second.connected; });
}

int64_t BusLogic::unhealthy_hosts() const {
  int64_t n = 0;
  for (int i = 0; i < scheduler_->pod().num_hosts(); ++i) {
    if (!scheduler_->pod().host(HostId(i)).healthy) ++n;
  }
  return n;
}

}  // namespace podsched::daemon
