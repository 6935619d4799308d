// LaunchComposer: the core's LaunchPlan as the Launch message every agent of the slice receives
// (docs/bus.md "Launch"). It is the one owner of the job contract's POD_* variables: podworker
// adds only what it alone knows (POD_PROGRESS_ENDPOINT, POD_RSH_*, POD_HOST, PODWORKER_TAG).
//
// Pure: no I/O, no clock, no randomness (the caller brings the rsh token). Thread-safe (const).
#pragma once

#include <map>
#include <string>

#include "bus.pb.h"
#include "common/ids.h"
#include "scheduler/core/scheduler.h"

namespace podsched::daemon {

class LaunchComposer {
 public:
  struct Options {
    std::string default_checkpoint_url;  // POD_CHECKPOINT_URL when the spec's env has none
    std::string log_url;                 // Launch.log_url
  };

  explicit LaunchComposer(Options options) : options_(std::move(options)) {}

  // The Launch for `plan`: hosts in rank order, ranks per host, argv (command + args), Env(plan),
  // `rsh_endpoints` (the hosts whose agent is known; others are left out), `rsh_token`, grace
  // and log_url.
  bus::Launch Compose(const core::LaunchPlan& plan,
                      const std::map<HostId, std::string>& rsh_endpoints,
                      const std::string& rsh_token) const;

  // The Launch's env: the spec's env, then the job contract on top (a spec cannot override it):
  //   POD_JOB_ID, POD_EPOCH, POD_ACCELERATOR ("v2-32"), POD_SLICE ("pod0:COL,ROW:WxH", origin
  //   host and size in hosts), POD_HOSTS ("4,5,12,13", rank order), POD_CHECKPOINT_URL (the
  //   spec's, else the default), POD_RESTART_COUNT (restarts + preemptions so far); for a task
  //   of a job array POD_ARRAY_ID (the array's id) and POD_ARRAY_INDEX (the task's index).
  std::map<std::string, std::string> Env(const core::LaunchPlan& plan) const;

 private:
  Options options_;
};

}  // namespace podsched::daemon
