// The agents resource: GET /api/v1/agents (admin only), every podworker the bus knows.
#pragma once

#include "scheduler/daemon/api_handler.h"

namespace podsched::daemon {

HttpResponse ListAgents(const ApiView& view, ApiCalls& calls, const Principal& who,
                        const ApiRequest& request);

}  // namespace podsched::daemon
