// Users and quotas: GET /api/v1/users (admin), GET and PUT /api/v1/quotas (docs/api.md).
#pragma once

#include "scheduler/daemon/api_handler.h"

namespace podsched::daemon {

// The configured users with their active job counts. Admin only.
HttpResponse ListUsers(const ApiView& view, ApiCalls& calls, const Principal& who,
                       const ApiRequest& request);
// The caller's quota and usage; an admin's list has every user the daemon knows (configured,
// given a quota, or owning a job).
HttpResponse ListQuotas(const ApiView& view, ApiCalls& calls, const Principal& who,
                        const ApiRequest& request);
// Quota{user, on_demand_cores, preemptible_cores} -> the admin's QuotaList. Admin only.
HttpResponse PutQuota(const ApiView& view, ApiCalls& calls, const Principal& who,
                      const ApiRequest& request);

}  // namespace podsched::daemon
