// LaunchComposer: the core's LaunchPlan as the Launch message every agent of the slice receives
// (docs/bus.md "Launch"). It is the one owner of the job contract (docs/jobspec.md, "The launch
// contract"): the POD_* variables and the framework variables that are the same for every rank.
// What differs per rank (RANK, LOCAL_RANK, NODE_RANK, JAX_PROCESS_ID, TF_CONFIG) is derived from
// these by `podworker rank` (worker/agent/rank_env.h); podworker adds only what it alone knows
// (POD_PROGRESS_ENDPOINT, POD_RSH_*, POD_HOST, POD_PREEMPT_FILE, PODWORKER_TAG).
//
// Ports: every host of the fleet owns a block of PortsPerHost(range, hosts) ports of the
// configured range (at most kPortSlotsPerHost, at least kMinPortSlotsPerHost), slot 0
// MASTER_PORT, slot 1 the JAX coordinator, slot 2 + L the port of local rank L (a job with more
// ranks per host than its block has rank slots gets no POD_RANK_ADDRS, hence no TF_CONFIG). A host is
// held by one live job at a time, so no two live jobs are given the same port on a machine, and
// the ports of a running job follow from its hosts alone (nothing to persist or rebuild).
//
// Pure: no I/O, no clock, no randomness (the caller brings the rsh token). Thread-safe (const).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "bus.pb.h"
#include "common/ids.h"
#include "scheduler/daemon/checkpoint_stores.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/core/spec.h"

namespace podsched::daemon {

inline constexpr int kPortSlotsPerHost = 2 + core::kMaxRanksPerHost;
inline constexpr int kMinPortSlotsPerHost = 2 + 8;  // 8 ranks: a TPU host's cores

// The largest Launch accepted at submission: 900 KiB, room below the agents' 1 MiB message limit
// for what LargestLaunchBytes cannot foresee (a longer checkpoint URL or log URL of a later
// configuration).
inline constexpr size_t kMaxLaunchBytes = 900 << 10;

// The block of each of `hosts` hosts in [first, last].
inline int PortsPerHost(int first, int last, int hosts) {
  const int per_host = hosts > 0 ? (last - first + 1) / hosts : kPortSlotsPerHost;
  return per_host < kPortSlotsPerHost ? per_host : kPortSlotsPerHost;
}

class LaunchComposer {
 public:
  struct Options {
    // The stores: a launch's POD_CHECKPOINT_URL is the job's store (LaunchPlan::checkpoint_store),
    // else the spec's, else the default store.
    CheckpointStores checkpoint_stores;
    std::string log_url;                 // Launch.log_url
    int port_first = 20000;              // the job port range (BusConfig::job_port_*)
    int port_last = 32767;
    int ports_per_host = kPortSlotsPerHost;  // PortsPerHost of the range and the pod
    // The Unix account of an API user (Launch.unix_user); unset: the user's name.
    std::function<std::string(const UserName&)> unix_user_of{};
  };

  explicit LaunchComposer(Options options) : options_(std::move(options)) {}

  // The Launch for `plan`: hosts in rank order (by their pod's ids, as its agents know them;
  // `rsh_endpoints` is keyed by fleet ids), ranks per host, argv (command + args), the
  // launcher, Env(plan, rsh_endpoints), `rsh_endpoints` (the hosts whose agent is known; others
  // are left out), `rsh_token`, grace and log_url.
  bus::Launch Compose(const core::LaunchPlan& plan,
                      const std::map<HostId, std::string>& rsh_endpoints,
                      const std::string& rsh_token) const;

  // The Launch's env: the spec's env, then the job contract on top (a spec cannot override it):
  //   POD_JOB_ID, POD_EPOCH, POD_ACCELERATOR ("v2-32"), POD_SLICE ("pod0:COL,ROW:WxH", origin
  //   host and size in hosts), POD_HOSTS ("4,5,12,13", the pod's ids, rank order), POD_HOST_ADDRS (each host's
  //   address, rank order), POD_RANK_ADDRS (each rank's ADDR:PORT, rank order), POD_LAUNCHER,
  //   POD_CHECKPOINT_URL (the spec's, else the default), POD_CHECKPOINT_DIR (its path, when it
  //   is file://, plus "/job-ID"), POD_RESTART_COUNT (restarts + preemptions so far),
  //   WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, JAX_COORDINATOR_ADDRESS,
  //   JAX_NUM_PROCESSES; for a task of a job array POD_ARRAY_ID (the array's id) and
  //   POD_ARRAY_INDEX (the task's index).
  // A host's address is the IP of its agent's rsh endpoint (podworker --advertise); a host
  // without a known agent gets "0.0.0.0" (its Launch cannot reach it anyway).
  std::map<std::string, std::string> Env(const core::LaunchPlan& plan,
                                         const std::map<HostId, std::string>& rsh_endpoints) const;

  // The port of `slot` in `host`'s block.
  int Port(HostId host, int slot) const;

  // The most bytes the bus Envelope of a Launch of `spec` can take on a slice of `type` in
  // `pod_name`: its command, args and env plus the contract at the longest ids, addresses,
  // ports and token. Checked at submission against kMaxLaunchBytes, because an agent refuses
  // (and libzmq disconnects) a message over its 1 MiB ZMQ_MAXMSGSIZE, and such a job would hold
  // its hosts PLACED (audit M9).
  size_t LargestLaunchBytes(const core::JobSpec& spec, const pod::AcceleratorType& type,
                            const std::string& pod_name) const;

 private:
  Options options_;
};

}  // namespace podsched::daemon
