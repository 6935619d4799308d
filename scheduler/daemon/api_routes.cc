#include "scheduler/daemon/api_routes.h"

#include "scheduler/daemon/accounts_api.h"
#include "scheduler/daemon/admin_api.h"
#include "scheduler/daemon/agents_api.h"
#include "scheduler/daemon/dashboard_api.h"
#include "scheduler/daemon/jobs_api.h"
#include "scheduler/daemon/pods_api.h"
#include "scheduler/daemon/system_api.h"

namespace podsched::daemon {

Router ApiRouter() {
  constexpr Access kAnyone = Access::kAnyone;
  constexpr Access kUser = Access::kUser;
  return Router(
      {
          {"", "/healthz", kAnyone, Health},
          {"GET", "/metrics", kAnyone, MetricsText},
          {"", "/api/v1/login", kAnyone, LoginRoute},
          {"", "/api/v1/logout", kAnyone, LogoutRoute},
          {"", "/api/v1/whoami", kUser, WhoAmI},
          {"GET", "/api/v1/jobs", kUser, nullptr, ListJobs},
          {"POST", "/api/v1/jobs", kUser, SubmitJob},
          {"GET", "/api/v1/jobs/{id}", kUser, nullptr, GetJob},
          {"POST", "/api/v1/jobs/{id}/cancel", kUser, CancelJob},
          {"POST", "/api/v1/jobs/{id}/preempt", kUser, PreemptJob},
          {"GET", "/api/v1/jobs/{id}/events", kUser, JobEvents},
          {"GET", "/api/v1/jobs/{id}/logs", kUser, JobLogs},
          {"GET", "/api/v1/jobs/{id}/progress", kUser, JobProgress},
          {"GET", "/api/v1/pods", kUser, ListPods},
          {"GET", "/api/v1/pods/{name}", kUser, GetPod},
          {"GET", "/api/v1/agents", kUser, ListAgents},
          {"GET", "/api/v1/quotas", kUser, ListQuotas},
          {"PUT", "/api/v1/quotas", kUser, PutQuota},
          {"GET", "/api/v1/users", kUser, ListUsers},
          {"POST", "/api/v1/users", kUser, AddUser},
          {"POST", "/api/v1/users/{name}/disable", kUser, DisableUser},
          {"POST", "/api/v1/users/{name}/enable", kUser, EnableUser},
          {"GET", "/api/v1/tokens", kUser, ListTokens},
          {"POST", "/api/v1/tokens", kUser, CreateToken},
          {"POST", "/api/v1/tokens/{id}/revoke", kUser, RevokeToken},
          {"GET", "/api/v1/stats", kUser, ClusterStats},
      },
      DashboardFile);
}

}  // namespace podsched::daemon
