#include "scheduler/daemon/metrics.h"

#include <sstream>

#include "scheduler/daemon/auth.h"

namespace podsched::daemon {

std::string_view PreemptionCause(std::string_view reason) {
  if (reason == "cancelled") return "";
  if (reason.find("(defragmentation") != std::string_view::npos) return "defrag";
  if (reason.find("(on-demand)") != std::string_view::npos) return "on_demand";
  if (reason.find("(higher priority)") != std::string_view::npos) return "priority";
  if (reason.find("reclaim") != std::string_view::npos) return "reclaim";
  if (reason.find("lifetime") != std::string_view::npos) return "lifetime";
  return "manual";
}

std::string FormatBusMetrics(const BusGauges& g) {
  std::ostringstream out;
  auto family = [&out](std::string_view name, std::string_view type, std::string_view help) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  };
  auto count = [](const std::map<std::string, int64_t>& m, std::string_view key) {
    auto it = m.find(std::string(key));
    return it == m.end() ? int64_t{0} : it->second;
  };
  family("podsched_bus_messages_total", "counter", "Valid bus messages received from agents, by type.");
  for (std::string_view t : {"register", "heartbeat", "progress", "exited", "log"}) {
    out << "podsched_bus_messages_total{type=\"" << t << "\"} " << count(g.received, t) << '\n';
  }
  family("podsched_bus_sent_total", "counter", "Bus messages sent to agents, by type.");
  for (std::string_view t : {"welcome", "reregister", "launch", "preempt", "kill", "ack"}) {
    out << "podsched_bus_sent_total{type=\"" << t << "\"} " << count(g.sent, t) << '\n';
  }
  family("podsched_bus_dropped_total", "counter", "Bus messages dropped, by reason.");
  for (std::string_view r : kBusDropReasons) {
    out << "podsched_bus_dropped_total{reason=\"" << r << "\"} " << count(g.dropped, r) << '\n';
  }
  out << "podsched_bus_dropped_total{reason=\"unroutable\"} " << g.unroutable << '\n';
  out << "podsched_bus_dropped_total{reason=\"route_not_bound\"} " << g.unbound_routes << '\n';
  out << "podsched_bus_dropped_total{reason=\"overloaded\"} " << g.overloaded << '\n';
  out << "podsched_bus_dropped_total{reason=\"overloaded_control\"} " << g.control_overloaded
      << '\n';
  family("podsched_bus_rejected_keys_total", "counter",
         "CURVE handshakes refused: the agent's key is neither enrolled nor in "
         "bus.curve_agent_keys.");
  out << "podsched_bus_rejected_keys_total " << g.rejected_keys << '\n';
  family("podsched_bus_rejected_agent_ids_total", "counter",
         "Bus messages dropped: sent under an agent id the CURVE key is not bound to, or with a "
         "key revoked since the connection was made.");
  out << "podsched_bus_rejected_agent_ids_total " << g.rejected_agent_ids << '\n';
  family("podsched_agents_connected", "gauge", "Agents heard from within the heartbeat timeout.");
  out << "podsched_agents_connected " << g.agents_connected << '\n';
  family("podsched_hosts_unhealthy", "gauge", "Hosts marked unhealthy.");
  out << "podsched_hosts_unhealthy " << g.hosts_unhealthy << '\n';
  return out.str();
}

void Metrics::ObservePass(double seconds) {
  for (size_t i = 0; i < kPassBuckets.size(); ++i) {
    if (seconds <= kPassBuckets[i]) {
      ++pass_buckets_[i];
      break;
    }
  }
  ++pass_count_;
  pass_sum_ += seconds;
}

std::string Metrics::Format(const MetricGauges& g) const {
  std::ostringstream out;
  auto family = [&out](std::string_view name, std::string_view type, std::string_view help) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  };
  family("podsched_jobs", "gauge",
         "Jobs in memory by state: ended ones for scheduler.ended_job_retention_hours.");
  for (const auto& [state, n] : g.jobs_by_state) {
    out << "podsched_jobs{state=\"" << state << "\"} " << n << '\n';
  }
  family("podsched_cores_in_use", "gauge", "TensorCores held by jobs, by price class.");
  out << "podsched_cores_in_use{class=\"on-demand\"} " << g.cores_on_demand << '\n';
  out << "podsched_cores_in_use{class=\"preemptible\"} " << g.cores_preemptible << '\n';
  family("podsched_pod_hosts", "gauge",
         "Hosts of each pod of the fleet by state: held by a job, else unhealthy, else draining, "
         "else free.");
  for (const PodHostCounts& p : g.pods) {
    // Pod and zone names are 1-64 of [A-Za-z0-9._-] (pod::IsPodName): nothing to escape.
    const std::string labels = "pod=\"" + p.pod + "\",zone=\"" + p.zone + "\",state=\"";
    out << "podsched_pod_hosts{" << labels << "held\"} " << p.held << '\n';
    out << "podsched_pod_hosts{" << labels << "unhealthy\"} " << p.unhealthy << '\n';
    out << "podsched_pod_hosts{" << labels << "draining\"} " << p.draining << '\n';
    out << "podsched_pod_hosts{" << labels << "free\"} " << p.free << '\n';
  }
  family("podsched_queue_length", "gauge", "Jobs waiting in the queue.");
  out << "podsched_queue_length " << g.queue_length << '\n';
  family("podsched_jobs_quarantined", "gauge",
         "Ended jobs left out at start: unreadable, or not valid on the configured pod (logged).");
  out << "podsched_jobs_quarantined " << g.jobs_quarantined << '\n';
  family("podsched_jobs_forgotten_total", "counter",
         "Ended jobs dropped from memory after their retention (kept in the store).");
  out << "podsched_jobs_forgotten_total " << g.jobs_forgotten << '\n';
  family("podsched_stream_clients", "gauge", "Open event-stream connections.");
  out << "podsched_stream_clients " << g.stream_clients << '\n';
  family("podsched_scheduling_passes_total", "counter", "Scheduling passes run.");
  out << "podsched_scheduling_passes_total " << g.scheduler_passes << '\n';
  family("podsched_preemptions_total", "counter", "Preemptions started, by cause.");
  for (std::string_view cause :
       {"on_demand", "priority", "reclaim", "lifetime", "manual", "defrag"}) {
    auto it = preemptions_.find(std::string(cause));
    out << "podsched_preemptions_total{cause=\"" << cause << "\"} "
        << (it == preemptions_.end() ? 0 : it->second) << '\n';
  }
  family("podsched_defrag_lost_core_seconds_total", "counter",
         "Work lost by jobs moved to defragment (cores x seconds since their last checkpoint).");
  out << "podsched_defrag_lost_core_seconds_total " << g.defrag_lost_core_seconds << '\n';
  family("podsched_scheduling_pass_seconds", "histogram",
         "Duration of scheduler ticks that ran a scheduling pass.");
  int64_t cumulative = 0;
  for (size_t i = 0; i < kPassBuckets.size(); ++i) {
    cumulative += pass_buckets_[i];
    out << "podsched_scheduling_pass_seconds_bucket{le=\"" << kPassBuckets[i] << "\"} "
        << cumulative << '\n';
  }
  out << "podsched_scheduling_pass_seconds_bucket{le=\"+Inf\"} " << pass_count_ << '\n';
  out << "podsched_scheduling_pass_seconds_sum " << pass_sum_ << '\n';
  out << "podsched_scheduling_pass_seconds_count " << pass_count_ << '\n';
  family("podsched_auth_failures_total", "counter",
         "Refused API credentials, by reason (missing, malformed, unknown, revoked, expired, "
         "disabled, session, csrf).");
  for (AuthFailure reason : kAuthFailures) {
    auto it = auth_failures_.find(std::string(AuthFailureName(reason)));
    out << "podsched_auth_failures_total{reason=\"" << AuthFailureName(reason) << "\"} "
        << (it == auth_failures_.end() ? 0 : it->second) << '\n';
  }
  family("podsched_api_requests_total", "counter", "API requests by HTTP status code.");
  for (const auto& [code, n] : requests_by_code_) {
    out << "podsched_api_requests_total{code=\"" << code << "\"} " << n << '\n';
  }
  return out.str();
}

}  // namespace podsched::daemon
