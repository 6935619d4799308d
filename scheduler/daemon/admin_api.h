// Quotas: GET and PUT /api/v1/quotas (docs/api.md). Users and tokens: accounts_api.h.
#pragma once

#include "scheduler/daemon/api_handler.h"

namespace podsched::daemon {

// The caller's quota and usage; an admin's list has every user the daemon knows (configured,
// given a quota, or owning a job).
HttpResponse ListQuotas(const ApiView& view, ApiCalls& calls, const Principal& who,
                        const ApiRequest& request);
// Quota{user, on_demand_cores, preemptible_cores} -> the admin's QuotaList. Admin only.
HttpResponse PutQuota(const ApiView& view, ApiCalls& calls, const Principal& who,
                      const ApiRequest& request);

}  // namespace podsched::daemon
