#include "scheduler/daemon/router.h"

#include "common/check.h"
#include "scheduler/daemon/api_response.h"

namespace podsched::daemon {
namespace {

bool IsWildcard(std::string_view segment) {
  return segment.size() >= 2 && segment.front() == '{' && segment.back() == '}';
}

bool UnderPrefix(std::string_view path, std::string_view prefix) {
  return path == prefix || path.starts_with(std::string(prefix) + "/");
}

}  // namespace

Router::Router(std::vector<Route> routes, ApiHandler outside_api)
    : outside_api_{"", "", Access::kAnyone, outside_api} {
  PODSCHED_CHECK(outside_api != nullptr);
  for (const Route& r : routes) {
    PODSCHED_CHECK((r.handler != nullptr) != (r.reader != nullptr) && r.pattern.starts_with('/'));
    routes_.push_back(Compiled{r, SplitPath(r.pattern)});
  }
}

RouteMatch Router::Match(std::string_view method, std::string_view path) const {
  const bool api = UnderPrefix(path, "/api");
  const std::vector<std::string> segments = SplitPath(path);
  RouteMatch match;
  std::string allowed;  // the methods of the routes whose pattern matches
  for (const Compiled& c : routes_) {
    std::vector<std::string> params;
    if (!api || !UnderPrefix(c.route.pattern, "/api")) {
      if (path != c.route.pattern) continue;
    } else {
      if (c.segments.size() != segments.size()) continue;
      bool same = true;
      for (size_t i = 0; i < segments.size() && same; ++i) {
        if (IsWildcard(c.segments[i])) {
          params.push_back(segments[i]);
        } else {
          same = c.segments[i] == segments[i];
        }
      }
      if (!same) continue;
    }
    if (c.route.method.empty() || c.route.method == method) {
      match.route = &c.route;
      match.params = std::move(params);
      return match;
    }
    allowed += (allowed.empty() ? "" : " or ") + std::string(c.route.method);
  }
  match.needs_auth = UnderPrefix(path, "/api/v1");
  if (!allowed.empty()) {
    match.error = ErrorResponse(
        405, "method_not_allowed",
        std::string(method) + " is not allowed on " + std::string(path) + "; use " + allowed);
  } else if (match.needs_auth) {
    match.error = ErrorResponse(404, "not_found", "no such resource: " + std::string(path));
  } else if (api) {
    match.error =
        ErrorResponse(404, "not_found",
                      "no such resource: " + std::string(path) + " (the API lives under /api/v1)");
  } else {
    match.route = &outside_api_;
  }
  return match;
}

}  // namespace podsched::daemon
