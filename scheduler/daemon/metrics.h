// Counters and a histogram of the daemon, formatted as Prometheus text exposition (version
// 0.0.4): every family has # HELP and # TYPE lines, histogram buckets are cumulative and end with
// le="+Inf", followed by _sum and _count.
//
// Not thread-safe: the scheduler thread owns it (every request passes through that thread).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace podsched::daemon {

// One pod's hosts by state, each host counted once: held (by a job), else unhealthy, else
// draining, else free (podsched_pod_hosts).
struct PodHostCounts {
  std::string pod, zone;
  int64_t held = 0, unhealthy = 0, draining = 0, free = 0;
};

// Values read from the scheduler at scrape time.
struct MetricGauges {
  std::vector<PodHostCounts> pods;  // the fleet, in order
  std::map<std::string, int64_t> jobs_by_state;  // every state name, zeros included
  int64_t cores_on_demand = 0;
  int64_t cores_preemptible = 0;
  int64_t queue_length = 0;
  int64_t jobs_quarantined = 0;  // ended jobs left out at load (Scheduler::quarantined)
  int64_t jobs_forgotten = 0;    // ended jobs dropped from memory since start (retention)
  int64_t stream_clients = 0;
  int64_t scheduler_passes = 0;
  double defrag_lost_core_seconds = 0;  // SchedulerStats::defrag_lost_core_seconds
};

// The reasons BusLogic drops a bus message for (podsched_bus_dropped_total, docs/bus.md); the
// bus thread's "unroutable", "route_not_bound", "overloaded" and "overloaded_control" are counted
// apart (BusGauges).
inline constexpr std::string_view kBusDropReasons[] = {
    "malformed",   "oversized", "unknown_agent", "unknown_host",
    "stale_epoch", "unknown_job", "invalid",     "host_not_enrolled", "unknown_pod"};

// The worker bus's counters and gauges (BusLogic), read at scrape time.
struct BusGauges {
  std::map<std::string, int64_t> received, sent, dropped;  // by message type / drop reason
  int64_t agents_connected = 0;
  int64_t hosts_unhealthy = 0;
  int64_t unroutable = 0;  // sends to an agent the ROUTER no longer knows
  int64_t rejected_keys = 0;  // CURVE clients refused (key not enrolled nor configured)
  int64_t rejected_agent_ids = 0;  // messages under an agent id the key is not bound to
  int64_t unbound_routes = 0;      // messages to an agent whose route's key was revoked
  int64_t overloaded = 0;          // Log/Progress dropped before the scheduler thread (BusInbox)
  int64_t control_overloaded = 0;  // Register/Heartbeat/Exited dropped there (a stalled thread)
};
std::string FormatBusMetrics(const BusGauges& gauges);

// The cause of a preemption from the reason the core gives a PREEMPTING transition: "on_demand",
// "priority", "reclaim", "lifetime", "manual", "defrag" (moved to defragment); "" when the
// transition is a cancellation.
std::string_view PreemptionCause(std::string_view reason);

class Metrics {
 public:
  static constexpr std::array<double, 12> kPassBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0};

  void CountRequest(int status) { ++requests_by_code_[status]; }
  void CountPreemption(std::string_view cause) { ++preemptions_[std::string(cause)]; }
  // A refused credential, by AuthFailureName (auth.h).
  void CountAuthFailure(std::string_view reason) { ++auth_failures_[std::string(reason)]; }
  void ObservePass(double seconds);

  std::string Format(const MetricGauges& gauges) const;

 private:
  std::map<int, int64_t> requests_by_code_;
  std::map<std::string, int64_t> preemptions_;
  std::map<std::string, int64_t> auth_failures_;
  std::array<int64_t, kPassBuckets.size()> pass_buckets_{};  // not cumulative here
  int64_t pass_count_ = 0;
  double pass_sum_ = 0;
};

}  // namespace podsched::daemon
