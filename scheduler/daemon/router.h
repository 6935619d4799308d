// Router: the route table's lookup. A route is a method, a path pattern and a handler; Match
// finds the route of a request or the error to answer instead.
//
// Patterns are paths whose segments are literals or `{name}` wildcards matching any one segment
// ("/api/v1/jobs/{id}/cancel"). Under /api/ a path matches segment by segment (so "/api/v1/jobs/"
// and "/api/v1/jobs" are one resource); outside it the path must equal the pattern, and every path
// no route claims is the dashboard's (`outside_api`).
//
// Errors: a path under /api/v1 that no pattern matches is 404, one whose patterns do not take the
// method is 405 naming the methods that would do; both are answered only to an authenticated
// caller (needs_auth), so they reveal nothing to anonymous clients. Paths under /api/ but not
// /api/v1 are 404 at once, pointing at /api/v1.
//
// Immutable after construction; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/daemon/api_handler.h"
#include "scheduler/daemon/http_types.h"

namespace podsched::daemon {

enum class Access {
  kAnyone,  // no credentials needed (health, metrics, login, the dashboard's files)
  kUser,    // an authenticated caller, rate limited per user
};

// Exactly one of `handler` and `reader` is set.
struct Route {
  std::string_view method;  // "GET", "POST", ...; empty: any method (the handler decides)
  std::string_view pattern;
  Access access = Access::kUser;
  ApiHandler handler = nullptr;
  ApiReader reader = nullptr;  // a read the job snapshot can serve (api_handler.h)
};

struct RouteMatch {
  const Route* route = nullptr;     // the route to run; nullptr: answer `error`
  std::vector<std::string> params;  // the values of the pattern's {...} segments, in order
  HttpResponse error;
  bool needs_auth = false;  // `error` goes only to an authenticated caller
};

class Router {
 public:
  Router(std::vector<Route> routes, ApiHandler outside_api);
  // `path` is the percent-decoded path of the target (ParsedTarget::path).
  RouteMatch Match(std::string_view method, std::string_view path) const;

 private:
  struct Compiled {
    Route route;
    std::vector<std::string> segments;  // "{...}" marks a wildcard
  };
  std::vector<Compiled> routes_;
  Route outside_api_;
};

}  // namespace podsched::daemon
