#include "scheduler/daemon/system_api.h"

#include <string>

namespace podsched::daemon {

HttpResponse Health(const ApiView& view, ApiCalls&, const Principal&, const ApiRequest&) {
  HttpResponse r;
  r.body = view.fatal ? R"({"status":"failing"})" : R"({"status":"ok"})";
  r.status = view.fatal ? 503 : 200;
  return r;
}

HttpResponse MetricsText(const ApiView& view, ApiCalls&, const Principal&, const ApiRequest&) {
  const core::Scheduler& scheduler = view.scheduler;
  MetricGauges g;
  // O(1): the core keeps these counts as jobs change (an unauthenticated scrape must not cost
  // a walk over every job ever kept; audit H1).
  for (int s = 0; s < core::kJobStateCount; ++s) {
    const auto state = static_cast<core::JobState>(s);
    g.jobs_by_state[std::string(core::JobStateName(state))] = scheduler.JobsIn(state);
  }
  g.queue_length = scheduler.JobsIn(core::JobState::kQueued);
  // Bounded by the fleet's hosts, not by the jobs.
  const pod::Fleet& fleet = scheduler.fleet();
  for (int i = 0; i < fleet.size(); ++i) {
    const pod::Pod& pod = fleet.pod(i);
    PodHostCounts c{pod.name(), fleet.zone(i)};
    for (int h = 0; h < pod.num_hosts(); ++h) {
      const pod::HostStatus& s = pod.host(HostId(h));
      ++(s.allocation ? c.held : !s.healthy ? c.unhealthy : s.draining ? c.draining : c.free);
    }
    g.pods.push_back(std::move(c));
  }
  g.cores_on_demand = scheduler.CoresHeld().on_demand_cores;
  g.cores_preemptible = scheduler.CoresHeld().preemptible_cores;
  g.jobs_quarantined = static_cast<int64_t>(scheduler.quarantined().size());
  g.jobs_forgotten = scheduler.stats().forgotten;
  g.stream_clients = view.stream_clients;
  g.scheduler_passes = scheduler.stats().passes;
  g.defrag_lost_core_seconds = scheduler.stats().defrag_lost_core_seconds;
  BusGauges b;
  b.received = view.bus.received();
  b.sent = view.bus.sent();
  b.dropped = view.bus.dropped();
  b.agents_connected = view.bus.connected_agents();
  b.hosts_unhealthy = view.bus.unhealthy_hosts();
  if (view.bus_io) {
    BusIoCounters io = view.bus_io();
    b.unroutable = io.unroutable;
    b.rejected_keys = io.rejected_keys;
    b.rejected_agent_ids = io.rejected_agent_ids;
    b.unbound_routes = io.unbound_routes;
    b.overloaded = io.overloaded;
    b.control_overloaded = io.control_overloaded;
  }
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = view.metrics.Format(g) + FormatBusMetrics(b);
  return r;
}

}  // namespace podsched::daemon
