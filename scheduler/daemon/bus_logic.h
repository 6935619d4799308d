// BusLogic: the scheduler's side of the worker bus (docs/bus.md), without sockets.
//
// In: (agent identity, Envelope bytes, now) from the bus, the core's actions, and timer ticks.
// Out: calls into the core (ReportStarted/Progress/Exited/HostReleased, HostDown/HostUp) and
// messages to agents (TakeOutgoing), Acks only once the caller has made the core's changes durable
// (TakeAcks after the commit). It keeps the agent registry (agent -> hosts, rsh endpoint, last
// heartbeat), the health of every host with its reason, the bounded output tail and progress
// series of each job, and drop counters by reason.
//
// After a restart (Start with jobs holding hosts) it reconciles: reconciling() is true, and the
// caller runs no scheduling pass, until every allocated host's agent has registered or the
// reconcile timeout has passed.
//
// Errors returned are only the core's commit failures (fatal for the caller); bad input is dropped
// and counted, never an error. Not thread-safe: the scheduler thread owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "bus.pb.h"
#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/daemon/config.h"
#include "scheduler/daemon/job_output.h"

namespace podsched::daemon {

struct BusOutgoing {
  std::string agent_id;
  std::string bytes;  // a serialized bus::Envelope
};

// Drop reasons of podsched_bus_dropped_total (docs/bus.md).
inline constexpr std::string_view kDropReasons[] = {
    "malformed", "oversized", "unknown_agent", "unknown_host", "stale_epoch", "unknown_job",
    "invalid"};

struct AgentInfo {
  std::string agent_id;
  std::string pod;
  std::vector<HostId> hosts;
  std::string rsh_endpoint;
  std::string hostname;
  std::string version;
  TimePoint last_heard{};
  bool connected = false;
  std::vector<JobEpoch> running;
};

struct HostHealth {
  std::string agent_id;  // serving agent (possibly disconnected); empty: none
  std::string reason;    // empty: healthy as far as the bus is concerned
};

class BusLogic {
 public:
  // Random hex tokens for rsh (default: 128 bits from OpenSSL RAND_bytes).
  using TokenSource = std::function<std::string()>;

  struct Options {
    BusConfig bus;
    std::string default_checkpoint_url;  // POD_CHECKPOINT_URL when the spec has none
    std::string log_url;                 // Launch.log_url
    std::string scheduler_id;            // Welcome.scheduler_id
    Duration tick_interval = std::chrono::milliseconds(200);  // how often OnTimer is called
  };

  // `scheduler` must outlive this.
  BusLogic(Options options, core::Scheduler* scheduler, TokenSource tokens = {});

  // Once after the scheduler loaded: hosts without an agent become unhealthy, and a reconcile
  // window opens if jobs hold hosts.
  Status Start(TimePoint now);
  // One message as the ROUTER received it: identity frame and payload.
  Status OnMessage(std::string_view agent_id, std::string_view bytes, TimePoint now);
  // A message the bus thread could not frame ([identity][payload] with extra frames).
  void CountMalformed() { Drop("malformed"); }
  // Heartbeat timeouts and the end of the reconcile window. After a gap of half the heartbeat
  // timeout (and three tick intervals) since the previous call, the caller's thread was stalled
  // (e.g. by a slow fsync): it judges nobody, so the messages that queued up meanwhile are
  // handled first.
  Status OnTimer(TimePoint now);
  // Turns the core's actions into Launch / Preempt / Kill messages.
  void Dispatch(const core::Actions& actions);

  bool reconciling() const { return reconciling_; }
  // Messages to send now (Launch, Preempt, Kill, Welcome, Reregister).
  std::vector<BusOutgoing> TakeOutgoing() { return std::exchange(outgoing_, {}); }
  // Acks of Exited reports whose effect the caller has just committed.
  std::vector<BusOutgoing> TakeAcks();
  // Progress reports to stream: at most one per job per second (the newest one).
  std::vector<std::pair<JobId, ProgressSample>> TakeDueProgress(TimePoint now);

  const std::map<std::string, AgentInfo>& agents() const { return agents_; }
  const std::vector<HostHealth>& hosts() const { return hosts_; }
  const LogTail* LogsOf(JobId job) const;
  const ProgressSeries* ProgressOf(JobId job) const;
  const std::map<std::string, int64_t>& received() const { return received_; }
  const std::map<std::string, int64_t>& sent() const { return sent_; }
  const std::map<std::string, int64_t>& dropped() const { return dropped_; }
  int64_t connected_agents() const;
  int64_t unhealthy_hosts() const;

  // The job contract's environment of a Launch (docs/bus.md "Launch"); exposed for tests.
  std::map<std::string, std::string> JobEnv(const core::JobRecord& job,
                                            const std::vector<HostId>& hosts) const;

 private:
  Status OnRegister(const std::string& id, const bus::Register& m, TimePoint now);
  Status OnHeartbeat(const std::string& id, const bus::Heartbeat& m, TimePoint now);
  Status OnRunning(AgentInfo& agent, const google::protobuf::RepeatedPtrField<bus::RunningJob>& running,
                   bool registering, TimePoint now);
  Status OnExited(AgentInfo& agent, const bus::Exited& m, TimePoint now);
  Status OnProgress(AgentInfo& agent, const bus::Progress& m, TimePoint now);
  void OnLog(AgentInfo& agent, const bus::Log& m, TimePoint now);

  // Applies a core call's result: dispatches its actions, returns a commit failure.
  Status Apply(Result<core::Actions> r, std::string_view drop_reason_on_error);
  // Recomputes the host's health reason and tells the core on a change.
  Status UpdateHost(HostId host, TimePoint now);
  std::string DesiredReason(HostId host) const;
  // The job's current epoch if it holds hosts and `je` is it.
  const core::JobRecord* Current(JobEpoch je) const;
  bool Serves(const AgentInfo& agent, HostId host) const;
  void Send(const std::string& agent_id, const bus::Envelope& e);
  void SendToHosts(const std::vector<HostId>& hosts, const bus::Envelope& e);
  void Drop(std::string_view reason) { ++dropped_[std::string(reason)]; }

  Options options_;
  core::Scheduler* scheduler_;
  TokenSource tokens_;
  std::map<std::string, AgentInfo> agents_;
  std::vector<HostHealth> hosts_;                   // by HostId
  std::vector<std::set<JobEpoch>> stale_;           // per host: unwanted processes seen
  TimePoint last_timer_{};
  bool reconciling_ = false;
  TimePoint reconcile_deadline_{};
  std::set<HostId> awaiting_;                       // allocated hosts not yet registered
  std::vector<BusOutgoing> outgoing_;
  std::map<std::string, std::vector<JobEpoch>> acks_;
  std::map<JobId, LogTail> logs_;
  std::map<JobId, ProgressSeries> progress_;
  struct StreamState {
    TimePoint last_sent{};
    std::optional<ProgressSample> pending;
  };
  std::map<JobId, StreamState> streamed_;
  std::map<std::string, int64_t> received_, sent_, dropped_;
};

}  // namespace podsched::daemon
