// Conversions between the scheduler core's types and the API's protobuf messages.
//
// Pure; thread-safe.
#pragma once

#include <string>

#include "api.pb.h"
#include "common/clock.h"
#include "common/status.h"
#include "scheduler/daemon/checkpoint_stores.h"
#include "scheduler/core/job.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/daemon/job_output.h"
#include "scheduler/daemon/job_snapshot.h"

namespace podsched::daemon {

// "2026-12-02T11:02:44.123456Z"; empty for the zero time point.
std::string Rfc3339(TimePoint t);

// A submission from the API into a core spec for `user`. Checks what the core does not: control
// characters in text fields, negative durations, the dependency syntax. The core validates the
// rest (ValidateSpec). The spec's `array` is not part of the core spec: the caller parses it
// (core::ParseArraySpec) and submits the tasks. A checkpoint URL the spec names must lie in the
// user's prefix of one of `stores` (CheckUserUrl). Without one, the spec gets the user's prefix
// of the default store, unless zones have stores: then the job's first launch chooses
// (CheckpointStores::Choose). `stores` with no default URL: no checks, no default.
Result<core::JobSpec> SpecFromProto(const api::JobSpec& in, const std::string& user,
                                    const CheckpointStores& stores);
api::JobSpec SpecToProto(const core::JobSpec& spec);

// Dollars spent so far: the slice's price for its class times the time held (closed epochs plus
// the current one when the job holds hosts). `type`: the job's parsed accelerator (null: 0).
double CostUsd(const core::JobRecord& job, const pod::AcceleratorType* type, TimePoint now);

// The job object of the API (with its spec when `with_spec`) in `fleet`, `type` as for CostUsd.
api::Job JobToProto(const core::JobRecord& job, const pod::Fleet& fleet,
                    const pod::AcceleratorType* type, TimePoint now, bool with_spec);
// The same for a job of `scheduler`: the type it parsed when the job came in, while the job is in
// memory; the spec's is parsed only for a job read back from the store (FindStored, history).
api::Job JobToProto(const core::JobRecord& job, const core::Scheduler& scheduler, TimePoint now,
                    bool with_spec);
// What a single-job reply adds for a job of a sweep: its dependencies with their state and its
// array's progress.
void AddSweepDetails(const core::Scheduler& scheduler, const core::JobRecord& job, api::Job* out);
api::JobEvent EventToProto(const core::JobEvent& event);
// The pods of the fleet (every one, or only pod `only`), in fleet order: each with its zone, its
// hosts (by the pod's own ids), the jobs holding them, its headroom, the hosts held by class,
// and up to `max_pending` of the queued jobs whose type it can hold (pending_total counts them
// all). One walk over the scheduler's jobs for all of them.
std::vector<api::Pod> PodsToProto(const core::Scheduler& scheduler, std::optional<int> only,
                                  int max_pending);
api::ProgressPoint ProgressToProto(const ProgressSample& p);

// The JSON of an api::JobList holding `page` of `snapshot`, byte for byte what ToJson of that
// message gives, but each job's text is made once per committed row (JobSnapshot::Entry::Json)
// unless the job holds hosts (its cost grows with `now`). Thread-safe.
std::string JobListJson(const JobSnapshot& snapshot, const JobSnapshot::Page& page, TimePoint now);

}  // namespace podsched::daemon
