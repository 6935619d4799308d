// The jobs resource (docs/api.md, "Resources"): /api/v1/jobs and /api/v1/jobs/{id}[/verb].
//
// A job the caller may not see (visibility.h) is "not found", like a job that does not exist.
#pragma once

#include "scheduler/daemon/api_handler.h"

namespace podsched::daemon {

// POST /api/v1/jobs: JobSpec -> 201 SubmitResponse with a Location header.
HttpResponse SubmitJob(const ApiView& view, ApiCalls& calls, const Principal& who,
                       const ApiRequest& request);
// GET /api/v1/jobs?state=&user=&class=&array=&page_size=&page_token=&history=: from the job
// snapshot, off the scheduler thread; with history=true, on it (the store is read).
ApiAnswer ListJobs(const ApiView& view, const Principal& who, const ApiRequest& request);
// GET /api/v1/jobs/{id}: the Job with its spec; from the job snapshot when it can.
ApiAnswer GetJob(const ApiView& view, const Principal& who, const ApiRequest& request);
// POST /api/v1/jobs/{id}/cancel and /preempt: the Job after the call; 409 if it already ended.
HttpResponse CancelJob(const ApiView& view, ApiCalls& calls, const Principal& who,
                       const ApiRequest& request);
HttpResponse PreemptJob(const ApiView& view, ApiCalls& calls, const Principal& who,
                        const ApiRequest& request);
// GET /api/v1/jobs/{id}/events: the job's history from the store.
HttpResponse JobEvents(const ApiView& view, ApiCalls& calls, const Principal& who,
                       const ApiRequest& request);
// GET /api/v1/jobs/{id}/logs?since=&limit=: whole lines of the job's output (in memory).
HttpResponse JobLogs(const ApiView& view, ApiCalls& calls, const Principal& who,
                     const ApiRequest& request);
// GET /api/v1/jobs/{id}/progress: the job's progress reports (in memory).
HttpResponse JobProgress(const ApiView& view, ApiCalls& calls, const Principal& who,
                         const ApiRequest& request);

}  // namespace podsched::daemon
