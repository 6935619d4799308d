#include "scheduler/daemon/router.h"

#include <gtest/gtest.h>

#include "scheduler/daemon/api_routes.h"

namespace podsched::daemon {
namespace {

HttpResponse Named(std::string_view name) {
  HttpResponse r;
  r.body = std::string(name);
  return r;
}
HttpResponse A(const ApiView&, ApiCalls&, const Principal&, const ApiRequest&) {
  return Named("a");
}
HttpResponse B(const ApiView&, ApiCalls&, const Principal&, const ApiRequest&) {
  return Named("b");
}
HttpResponse C(const ApiView&, ApiCalls&, const Principal&, const ApiRequest&) {
  return Named("c");
}
HttpResponse Web(const ApiView&, ApiCalls&, const Principal&, const ApiRequest&) {
  return Named("web");
}

class RouterTest : public ::testing::Test {
 protected:
  Router router_{{{"GET", "/api/v1/things", Access::kUser, A},
                  {"POST", "/api/v1/things", Access::kUser, B},
                  {"POST", "/api/v1/things/{id}/poke", Access::kUser, C},
                  {"", "/open", Access::kAnyone, A},
                  {"GET", "/metrics", Access::kAnyone, B}},
                 Web};

  // The handler of the route matched, nullptr when none.
  ApiHandler HandlerOf(std::string_view method, std::string_view path) const {
    RouteMatch m = router_.Match(method, path);
    return m.route == nullptr ? nullptr : m.route->handler;
  }
};

TEST_F(RouterTest, MatchesMethodAndPatternAndCapturesParameters) {
  RouteMatch m = router_.Match("POST", "/api/v1/things/42/poke");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.route->handler, &C);
  EXPECT_EQ(m.params, std::vector<std::string>{"42"});
  EXPECT_EQ(HandlerOf("GET", "/api/v1/things"), &A);
  EXPECT_EQ(HandlerOf("POST", "/api/v1/things/"), &B);  // segments, not bytes
  EXPECT_EQ(HandlerOf("PATCH", "/open"), &A);           // any method
}

TEST_F(RouterTest, ErrorsUnderTheApiWaitForAuthentication) {
  RouteMatch wrong_method = router_.Match("DELETE", "/api/v1/things");
  EXPECT_EQ(wrong_method.route, nullptr);
  EXPECT_EQ(wrong_method.error.status, 405);
  EXPECT_TRUE(wrong_method.needs_auth);
  EXPECT_NE(wrong_method.error.body.find("use GET or POST"), std::string::npos)
      << wrong_method.error.body;
  RouteMatch unknown = router_.Match("GET", "/api/v1/things/42/prod");
  EXPECT_EQ(unknown.error.status, 404);
  EXPECT_TRUE(unknown.needs_auth);
  EXPECT_EQ(router_.Match("GET", "/api/v1").error.status, 404);
}

TEST_F(RouterTest, OutsideTheApiPathsAreExactAndTheRestIsTheDashboard) {
  RouteMatch other_version = router_.Match("GET", "/api/v2/things");
  EXPECT_EQ(other_version.error.status, 404);
  EXPECT_FALSE(other_version.needs_auth);
  EXPECT_NE(other_version.error.body.find("/api/v1"), std::string::npos);
  RouteMatch post_metrics = router_.Match("POST", "/metrics");
  EXPECT_EQ(post_metrics.error.status, 405);
  EXPECT_FALSE(post_metrics.needs_auth);
  EXPECT_EQ(HandlerOf("GET", "/metrics/"), &Web);
  EXPECT_EQ(HandlerOf("GET", "/"), &Web);
  EXPECT_EQ(HandlerOf("GET", "/app.js"), &Web);
  ASSERT_NE(router_.Match("GET", "/api/v1/things").route, nullptr);
  EXPECT_EQ(router_.Match("GET", "/api/v1/things").route->access, Access::kUser);
  ASSERT_NE(router_.Match("GET", "/open").route, nullptr);
  EXPECT_EQ(router_.Match("GET", "/open").route->access, Access::kAnyone);
}

TEST(ApiRoutesTest, EveryDocumentedResourceHasARoute) {
  Router router = ApiRouter();
  for (auto [method, path] : std::vector<std::pair<std::string_view, std::string_view>>{
           {"GET", "/healthz"},
           {"GET", "/metrics"},
           {"POST", "/api/v1/login"},
           {"POST", "/api/v1/logout"},
           {"GET", "/api/v1/whoami"},
           {"GET", "/api/v1/jobs"},
           {"POST", "/api/v1/jobs"},
           {"GET", "/api/v1/jobs/7"},
           {"POST", "/api/v1/jobs/7/cancel"},
           {"POST", "/api/v1/jobs/7/preempt"},
           {"GET", "/api/v1/jobs/7/events"},
           {"GET", "/api/v1/jobs/7/logs"},
           {"GET", "/api/v1/jobs/7/progress"},
           {"GET", "/api/v1/pods"},
           {"GET", "/api/v1/pods/pod0"},
           {"GET", "/api/v1/agents"},
           {"GET", "/api/v1/quotas"},
           {"PUT", "/api/v1/quotas"},
           {"GET", "/api/v1/users"},
           {"GET", "/api/v1/stats"}}) {
    RouteMatch m = router.Match(method, path);
    EXPECT_NE(m.route, nullptr) << method << " " << path;
  }
}

}  // namespace
}  // namespace podsched::daemon
