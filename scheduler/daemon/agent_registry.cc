#include "scheduler/daemon/agent_registry.h"

#include <algorithm>

namespace podsched::daemon {

AgentRegistry::AgentRegistry(int num_hosts)
    : hosts_(static_cast<size_t>(num_hosts)), stale_(static_cast<size_t>(num_hosts)) {}

AgentInfo* AgentRegistry::FindConnected(const std::string& id) {
  auto it = agents_.find(id);
  return it == agents_.end() || !it->second.connected ? nullptr : &it->second;
}

bool AgentRegistry::ClaimedByOther(const std::string& id, HostId host) const {
  const std::string& owner = hosts_[Index(host)].agent_id;
  return !owner.empty() && owner != id && agents_.at(owner).connected;
}

AgentInfo& AgentRegistry::Register(AgentInfo info, const std::set<HostId>& hosts, TimePoint now,
                                   std::vector<HostId>* released) {
  released->clear();
  if (auto old = agents_.find(info.agent_id); old != agents_.end()) {
    for (HostId h : old->second.hosts) {
      if (!hosts.contains(h)) released->push_back(h);
    }
  }
  for (HostId h : hosts) {
    const std::string& owner = hosts_[Index(h)].agent_id;
    if (!owner.empty() && owner != info.agent_id) {
      auto& other = agents_.at(owner).hosts;
      other.erase(std::remove(other.begin(), other.end(), h), other.end());
    }
  }
  for (HostId h : *released) hosts_[Index(h)].agent_id.clear();
  AgentInfo& agent = agents_[info.agent_id];
  std::vector<JobEpoch> running = std::move(agent.running);
  agent = std::move(info);
  agent.running = std::move(running);
  agent.hosts.assign(hosts.begin(), hosts.end());
  agent.last_heard = now;
  agent.connected = true;
  for (HostId h : hosts) {
    hosts_[Index(h)].agent_id = agent.agent_id;
    stale_[Index(h)].clear();
  }
  return agent;
}

std::vector<HostId> AgentRegistry::ExpireSilent(TimePoint now, Duration timeout) {
  std::vector<HostId> lost;
  for (auto& [id, agent] : agents_) {
    if (!agent.connected || now - agent.last_heard < timeout) continue;
    agent.connected = false;
    lost.insert(lost.end(), agent.hosts.begin(), agent.hosts.end());
  }
  return lost;
}

bool AgentRegistry::Serves(const AgentInfo& agent, HostId host) const {
  return InPod(host) && hosts_[Index(host)].agent_id == agent.agent_id;
}

std::vector<std::string> AgentRegistry::AgentsServing(const std::vector<HostId>& hosts) const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (HostId h : hosts) {
    const std::string& agent_id = hosts_[Index(h)].agent_id;
    if (!agent_id.empty() && seen.insert(agent_id).second) out.push_back(agent_id);
  }
  return out;
}

std::map<HostId, std::string> AgentRegistry::RshEndpoints(const std::vector<HostId>& hosts) const {
  std::map<HostId, std::string> out;
  for (HostId h : hosts) {
    if (auto it = agents_.find(hosts_[Index(h)].agent_id); it != agents_.end()) {
      out[h] = it->second.rsh_endpoint;
    }
  }
  return out;
}

bool AgentRegistry::NoteUnwanted(HostId host, JobEpoch job, bool first_report) {
  std::set<JobEpoch>& stale = stale_[Index(host)];
  if (first_report) stale.insert(job);
  return stale.contains(job);
}

std::string AgentRegistry::DesiredReason(HostId host, bool require_agents) const {
  const HostHealth& h = hosts_[Index(host)];
  if (h.agent_id.empty()) return require_agents ? "no agent" : "";
  auto it = agents_.find(h.agent_id);
  if (it == agents_.end() || !it->second.connected) return require_agents ? "heartbeat lost" : "";
  if (!stale_[Index(host)].empty()) return "stale processes";
  return "";
}

int64_t AgentRegistry::connected_agents() const {
  return std::count_if(agents_.begin(), agents_.end(),
                       [](const auto& a) { return a.second.connected; });
}

}  // namespace podsched::daemon
