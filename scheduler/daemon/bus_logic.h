// BusLogic: the scheduler's side of the worker bus (docs/bus.md), without sockets.
//
// In: (agent identity, Envelope bytes, now) from the bus, the core's actions, and timer ticks.
// Out: calls into the core (ReportStarted/Progress/Exited/HostReleased, HostDown/HostUp) and
// messages to agents (TakeOutgoing), Acks only once the caller has made the core's changes durable
// (TakeAcks after the commit).
//
// A coordinator over parts that each own one thing: AgentRegistry (agents, the hosts they serve,
// host health), Reconciler (what a Register means for the placements on its hosts, and the
// window after a restart), LaunchComposer (a LaunchPlan as a Launch with the job's env contract)
// and JobOutput (log tails, progress series, the progress stream). BusLogic validates messages,
// counts them by type and drops by reason, and makes the core calls the parts decide on.
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
#include <utility>
#include <vector>

#include "bus.pb.h"
#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/daemon/agent_keys.h"
#include "scheduler/daemon/agent_registry.h"
#include "scheduler/daemon/config.h"
#include "scheduler/daemon/job_output.h"
#include "scheduler/daemon/launch_composer.h"
#include "scheduler/daemon/reconciler.h"

namespace podsched::daemon {

struct BusOutgoing {
  std::string agent_id;
  std::string bytes;  // a serialized bus::Envelope
};


// The progress scalar that says how big a job's checkpoints are (bytes; docs/jobspec.md).
inline constexpr std::string_view kCheckpointBytesScalar = "checkpoint_bytes";

class BusLogic {
 public:
  // Random hex tokens for rsh (default: 128 bits from OpenSSL RAND_bytes).
  using TokenSource = std::function<std::string()>;

  struct Options {
    BusConfig bus;
    CheckpointStores checkpoint_stores;  // where POD_CHECKPOINT_URL points (LaunchComposer)
    std::string log_url;                 // Launch.log_url
    std::string scheduler_id;            // Welcome.scheduler_id
    std::function<std::string(const UserName&)> unix_user_of;  // LaunchComposer's
    Duration tick_interval = std::chrono::milliseconds(200);  // how often OnTimer is called
    // A heartbeating agent that has not listed a Launch's epoch this long after it was sent
    // never started it (it refused or lost it): the epoch ends, a failure (audit M9).
    Duration launch_ack_timeout = std::chrono::seconds(30);
  };

  // `scheduler` must outlive this.
  BusLogic(Options options, core::Scheduler* scheduler, TokenSource tokens = {});

  // The hosts (and their pod) an agent id was enrolled for (BusServer::EnrolledHostsOf);
  // nullopt: any host. A Register naming any other host, or another pod, is refused whole and
  // counted as "host_not_enrolled" (audit H6). Unset: every agent may register any host.
  using EnrolledHosts = std::function<std::optional<HostEnrolment>(const std::string&)>;
  void SetEnrolledHosts(EnrolledHosts lookup) { enrolled_hosts_ = std::move(lookup); }

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
  // Turns the core's actions into Launch / Preempt / Kill messages. Every action the core returns
  // must pass here (the reconciler learns each placement from its LaunchPlan).
  void Dispatch(const core::Actions& actions);

  bool reconciling() const { return reconciler_.reconciling(); }
  // Messages to send now (Launch, Preempt, Kill, Welcome, Reregister).
  std::vector<BusOutgoing> TakeOutgoing() { return std::exchange(outgoing_, {}); }
  // Acks of Exited reports whose effect the caller has just committed.
  std::vector<BusOutgoing> TakeAcks();
  // Progress reports to stream: at most one per job per second (the newest one).
  std::vector<std::pair<JobId, ProgressSample>> TakeDueProgress(TimePoint now) {
    return output_.TakeDueProgress(now);
  }

  const std::map<std::string, AgentInfo>& agents() const { return registry_.agents(); }
  const std::vector<HostHealth>& hosts() const { return registry_.hosts(); }
  const LogTail* LogsOf(JobId job) const { return output_.LogsOf(job); }
  const ProgressSeries* ProgressOf(JobId job) const { return output_.ProgressOf(job); }
  const std::map<std::string, int64_t>& received() const { return received_; }
  const std::map<std::string, int64_t>& sent() const { return sent_; }
  const std::map<std::string, int64_t>& dropped() const { return dropped_; }
  int64_t connected_agents() const { return registry_.connected_agents(); }
  int64_t unhealthy_hosts() const;
  const Reconciler& reconciler() const { return reconciler_; }
  // LaunchComposer::LargestLaunchBytes of `spec` on this pod; 0 when its accelerator is not a
  // type of the pod (the core refuses it with the reason).
  size_t LargestLaunchBytes(const core::JobSpec& spec) const;
  // Where jobs' checkpoints go (the API checks a spec's own URL against them).
  const CheckpointStores& checkpoint_stores() const { return options_.checkpoint_stores; }

 private:
  // `e` holds a Register; its hosts are rewritten to the fleet's ids once they are checked.
  Status OnRegister(const std::string& id, bus::Envelope& e, TimePoint now);
  Status OnHeartbeat(AgentInfo& agent, const bus::Heartbeat& m, TimePoint now);
  Status OnRunning(AgentInfo& agent, const google::protobuf::RepeatedPtrField<bus::RunningJob>& running,
                   bool registering, TimePoint now);
  Status OnExited(AgentInfo& agent, const bus::Exited& m, TimePoint now);
  Status OnProgress(AgentInfo& agent, const bus::Progress& m, TimePoint now);
  void OnLog(AgentInfo& agent, const bus::Log& m, TimePoint now);

  // Applies a core call's result: dispatches its actions, returns a commit failure.
  Status Apply(Result<core::Actions> r, std::string_view drop_reason_on_error);
  // Recomputes the host's health reason and tells the core on a change.
  Status UpdateHost(HostId host, TimePoint now);
  // True when `agent` serves at least one host of the job's current placement.
  bool ServesSliceOf(const AgentInfo& agent, const core::JobRecord& job) const;
  Status OnRanksUp(const JobEpoch& je, const google::protobuf::RepeatedField<int32_t>& hosts,
                   TimePoint now);
  void Send(const std::string& agent_id, const bus::Envelope& e);
  void SendToHosts(const std::vector<HostId>& hosts, const bus::Envelope& e);
  // `reason`: one of kBusDropReasons (metrics.h).
  void Drop(std::string_view reason) { ++dropped_[std::string(reason)]; }
  // Ends the epochs whose Launch `agent` never started (launch_ack_timeout after it was sent,
  // the agent heartbeating without it).
  Status CheckLaunchesOf(const AgentInfo& agent, TimePoint now);

  Options options_;
  EnrolledHosts enrolled_hosts_;
  // Launches not yet seen RUNNING: when each was sent (zero until the next OnTimer stamps it),
  // its slice, the hosts whose agents have listed the epoch since, and those judged lost.
  struct PendingLaunch {
    TimePoint sent{};
    std::vector<HostId> slice;  // rank order: slice[0] runs the launcher
    std::set<HostId> reported, lost;
  };
  std::map<JobEpoch, PendingLaunch> launches_;
  core::Scheduler* scheduler_;
  TokenSource tokens_;
  AgentRegistry registry_;
  Reconciler reconciler_;
  LaunchComposer composer_;
  JobOutput output_;
  TimePoint last_timer_{};
  std::vector<BusOutgoing> outgoing_;
  std::map<std::string, std::vector<JobEpoch>> acks_;
  // Per job: the epoch and the hosts reported with all ranks up, until it is RUNNING.
  std::map<JobId, std::pair<int64_t, std::set<HostId>>> ranks_up_;
  // A failure verdict while hosts of another agent have not reported their processes gone may be
  // that agent's death (mpirun loses a daemon; exec ranks lose a peer), not the job's fault: it
  // waits, unacknowledged (the launcher's agent resends it every heartbeat), and those hosts get
  // a Kill, until they report RELEASED (then it stands), go down (then HostDown requeued the job
  // without charging a restart, and the verdict is stale), or a heartbeat timeout and interval
  // passed (it stands).
  // Per live epoch: the hosts that reported RELEASED, and when a failure was first held.
  struct ExitWatch {
    std::set<HostId> released;
    TimePoint failure_held{};
  };
  std::map<JobEpoch, ExitWatch> exit_watch_;
  // Whether the failure verdict `m` of live epoch `je` waits (see exit_watch_).
  bool HoldFailure(JobEpoch je, const core::JobRecord& job, const bus::Exited& m, TimePoint now);
  std::map<std::string, int64_t> received_, sent_, dropped_;
};

}  // namespace podsched::daemon
