// AgentRegistry: which podworker serves which host, what each agent last told us, and the bus's
// view of every host's health (docs/bus.md "Conversation").
//
// It records facts and answers questions; it never calls the core. The caller (BusLogic) turns a
// changed health reason into HostDown / HostUp. Pure; not thread-safe (the scheduler thread owns
// it).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"

namespace podsched::daemon {

struct AgentInfo {
  std::string agent_id;
  std::string pod;
  int pod_index = 0;          // of the fleet; the agent's messages name hosts by this pod's ids
  std::vector<HostId> hosts;  // sorted, the fleet's ids
  std::string rsh_endpoint;
  std::string hostname;
  std::string version;
  TimePoint last_heard{};
  bool connected = false;
  std::vector<JobEpoch> running;  // as of its last Register or Heartbeat
};

struct HostHealth {
  std::string agent_id;  // serving agent (possibly disconnected); empty: none
  std::string reason;    // empty: healthy as far as the bus is concerned
};

class AgentRegistry {
 public:
  explicit AgentRegistry(int num_hosts);

  // The agent `id` if it is registered and has not timed out; else nullptr.
  AgentInfo* FindConnected(const std::string& id);
  // True when a live agent other than `id` serves `host` (in the pod).
  bool ClaimedByOther(const std::string& id, HostId host) const;
  // `agent` (fields from its Register; hosts and connected are set here) serves exactly `hosts`
  // from now on: it takes them from any agent that served them, and hosts it served before but
  // not now are left without an agent (returned in `released`). Their stale processes are
  // forgotten (the Register reports them afresh).
  AgentInfo& Register(AgentInfo agent, const std::set<HostId>& hosts, TimePoint now,
                      std::vector<HostId>* released);
  // Connected agents not heard from for `timeout` are disconnected; returns their hosts.
  std::vector<HostId> ExpireSilent(TimePoint now, Duration timeout);

  bool Serves(const AgentInfo& agent, HostId host) const;
  // The agents serving any of `hosts`, each once, in the order of the hosts.
  std::vector<std::string> AgentsServing(const std::vector<HostId>& hosts) const;
  // The rsh endpoint of each of `hosts` whose agent is registered.
  std::map<HostId, std::string> RshEndpoints(const std::vector<HostId>& hosts) const;

  // Processes of an epoch the scheduler does not want on `host`. `first_report` (the agent's
  // Register) records them; later reports only tell whether they are still there. Returns true
  // while they are.
  bool NoteUnwanted(HostId host, JobEpoch job, bool first_report);
  void ClearUnwanted(HostId host) { stale_[Index(host)].clear(); }

  // The reason `host` should be unhealthy as far as agents are concerned: "no agent" and
  // "heartbeat lost" (only with `require_agents`), "stale processes"; "" when none.
  std::string DesiredReason(HostId host, bool require_agents) const;
  HostHealth& health(HostId host) { return hosts_[Index(host)]; }

  const std::map<std::string, AgentInfo>& agents() const { return agents_; }
  const std::vector<HostHealth>& hosts() const { return hosts_; }  // by HostId
  int64_t connected_agents() const;

 private:
  static size_t Index(HostId host) { return static_cast<size_t>(host.value()); }
  bool InPod(HostId host) const {
    return host.value() >= 0 && static_cast<size_t>(host.value()) < hosts_.size();
  }

  std::map<std::string, AgentInfo> agents_;
  std::vector<HostHealth> hosts_;          // by HostId
  std::vector<std::set<JobEpoch>> stale_;  // by HostId: unwanted processes seen
};

}  // namespace podsched::daemon
