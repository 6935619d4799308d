// The daemon's own endpoints, open to anyone: GET /healthz and GET /metrics (docs/api.md).
#pragma once

#include "scheduler/daemon/api_handler.h"

namespace podsched::daemon {

// {"status":"ok"}, or 503 {"status":"failing"} once a commit failed. Any method.
HttpResponse Health(const ApiView& view, ApiCalls& calls, const Principal& who,
                    const ApiRequest& request);
// Prometheus text: the request and pass counters, gauges read from the core, the bus's counters.
HttpResponse MetricsText(const ApiView& view, ApiCalls& calls, const Principal& who,
                         const ApiRequest& request);

}  // namespace podsched::daemon
