// The pods resource: GET /api/v1/pods and /api/v1/pods/{name} (docs/api.md, "Resources").
//
// Every host carries the bus's view of its health. A user sees other users' allocations and
// hosts as held, without job id and user, and only their own pending jobs (visibility.h).
#pragma once

#include "scheduler/daemon/api_handler.h"

namespace podsched::daemon {

HttpResponse ListPods(const ApiView& view, ApiCalls& calls, const Principal& who,
                      const ApiRequest& request);
HttpResponse GetPod(const ApiView& view, ApiCalls& calls, const Principal& who,
                    const ApiRequest& request);

}  // namespace podsched::daemon
