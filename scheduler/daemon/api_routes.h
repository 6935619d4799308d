// The API's route table: every method and path podsched answers (docs/api.md, "Resources"),
// with its handler. GET /api/v1/events/stream is not here: the HTTP server opens streams through
// Engine::OpenStream (event_streams.h).
#pragma once

#include "scheduler/daemon/router.h"

namespace podsched::daemon {

// The router over the table; paths outside the API go to the dashboard.
Router ApiRouter();

}  // namespace podsched::daemon
