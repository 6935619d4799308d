// What the dashboard needs beyond the resources (docs/dashboard.md): its files, the cookie
// sessions (login, logout), who the caller is, and the cluster's recent history.
#pragma once

#include "scheduler/daemon/api_handler.h"

namespace podsched::daemon {

// Every path outside /api/, /healthz and /metrics: the dashboard's static files (web_assets.h).
HttpResponse DashboardFile(const ApiView& view, ApiCalls& calls, const Principal& who,
                           const ApiRequest& request);
// POST /api/v1/login and /api/v1/logout (web_session.h); any other method is 405.
HttpResponse LoginRoute(const ApiView& view, ApiCalls& calls, const Principal& who,
                        const ApiRequest& request);
HttpResponse LogoutRoute(const ApiView& view, ApiCalls& calls, const Principal& who,
                         const ApiRequest& request);
// GET /api/v1/stats: utilization and preemptions over time (usage_history.h).
HttpResponse ClusterStats(const ApiView& view, ApiCalls& calls, const Principal& who,
                          const ApiRequest& request);

}  // namespace podsched::daemon
