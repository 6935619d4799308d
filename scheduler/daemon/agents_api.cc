#include "scheduler/daemon/agents_api.h"

#include <chrono>

#include "api.pb.h"
#include "scheduler/daemon/api_response.h"

namespace podsched::daemon {

HttpResponse ListAgents(const ApiView& view, ApiCalls&, const Principal& who,
                        const ApiRequest& request) {
  if (!who.admin) return ErrorResponse(403, "permission_denied", "only an admin lists agents");
  api::AgentList out;
  for (const auto& [id, a] : view.bus.agents()) {
    auto* agent = out.add_agents();
    agent->set_agent_id(id);
    agent->set_pod(a.pod);
    // As the agent names them: by its pod's ids.
    for (HostId h : a.hosts) agent->add_hosts(view.scheduler.fleet().Locate(h).in_pod.value());
    agent->set_address(a.rsh_endpoint);
    agent->set_connected(a.connected);
    agent->set_last_heartbeat_ms_ago(
        std::chrono::duration_cast<std::chrono::milliseconds>(request.now - a.last_heard).count());
    for (JobEpoch je : a.running) agent->add_running_jobs(je.job.value());
  }
  return JsonResponse(out);
}

}  // namespace podsched::daemon
