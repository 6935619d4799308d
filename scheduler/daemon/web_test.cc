// The dashboard's server side: static files (allow-list, path traversal, content types, security
// headers), cookie login/logout, the API accepting the session cookie, and CSRF rules.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api.pb.h"
#include "scheduler/daemon/engine.h"
#include "scheduler/daemon/engine_test_util.h"
#include "scheduler/daemon/json_util.h"
#include "scheduler/daemon/web_assets.h"
#include "scheduler/daemon/web_session.h"

namespace podsched::daemon {
namespace {
namespace fs = std::filesystem;

std::string Header(const HttpResponse& r, std::string_view name) {
  std::string value;
  for (const auto& [k, v] : r.headers) {
    if (k == name) value = v;  // the last one wins, as in the server
  }
  return value;
}

void WriteFile(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A web root in a temp dir: static/ with pages, a vendor file, and a secret beside static/.
class WebAssetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("podsched-web-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    WriteFile(root_ / "static/index.html", "<!doctype html><title>podsched</title>");
    WriteFile(root_ / "static/app.js", "export const x = 1;");
    WriteFile(root_ / "static/css/style.css", "body{}");
    WriteFile(root_ / "static/notes.md", "not served: unknown type");
    WriteFile(root_ / "static/.hidden.js", "hidden");
    WriteFile(root_ / "secret.txt", "SECRET");
    WriteFile(root_ / "package.json", "{}");
    WriteFile(root_ / "node_modules/uplot/dist/uPlot.esm.js", "export default 1;");
    fs::create_symlink(root_ / "secret.txt", root_ / "static/link.txt");
  }
  void TearDown() override { fs::remove_all(root_); }

  HttpResponse Get(const std::string& target, const std::string& method = "GET") {
    WebAssets web(root_.string());
    return web.Serve(method, ParseTarget(target).path, target);
  }

  fs::path root_;
};

TEST(WebPathTest, SafePaths) {
  for (std::string_view ok : {"/", "/index.html", "/js/app.js", "/vendor/uPlot.esm.js", "/a-b_c.1.css"}) {
    EXPECT_TRUE(IsSafeWebPath(ok)) << ok;
  }
  for (std::string_view bad : {"", "index.html", "/..", "/../x", "/a/../b", "/./a", "/.hidden",
                               "//etc/passwd", "/a//b", "/a/", "/a\\..\\b", "/a%2e", "/a b",
                               "/%2e%2e/x"}) {
    EXPECT_FALSE(IsSafeWebPath(bad)) << bad;
  }
  EXPECT_FALSE(IsSafeWebPath(std::string_view("/a\0b", 4)));
}

TEST_F(WebAssetsTest, ServesFilesWithTypesAndSecurityHeaders) {
  auto index = Get("/");
  ASSERT_EQ(index.status, 200) << index.body;
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_NE(index.body.find("<title>podsched"), std::string::npos);
  std::string csp = Header(index, "Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'self'"), std::string::npos);
  EXPECT_NE(csp.find("script-src 'self';"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(Header(index, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(Get("/app.js").content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(Get("/css/style.css").content_type, "text/css; charset=utf-8");
  EXPECT_EQ(Get("/app.js?v=2").status, 200);
  auto vendor = Get("/vendor/uPlot.esm.js");
  EXPECT_EQ(vendor.status, 200);
  EXPECT_EQ(vendor.body, "export default 1;");
  EXPECT_EQ(Get("/app.js", "POST").status, 405);
}

TEST_F(WebAssetsTest, RefusesTraversalEscapesAndUnlistedFiles) {
  for (std::string target :
       {"/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/..%2fsecret.txt",
        "/%2e%2e%2fsecret.txt", "/vendor/../../secret.txt", "/%252e%252e/secret.txt",
        "//etc/passwd", "/static/../secret.txt", "/.hidden.js", "/..\\secret.txt",
        "/%5c..%5csecret.txt", "/app.js%00.html"}) {
    auto r = Get(target);
    EXPECT_EQ(r.status, 400) << target << " " << r.body;
    EXPECT_EQ(r.body.find("SECRET"), std::string::npos) << target;
  }
  // Safe-looking paths that are not dashboard files.
  for (std::string target : {"/secret.txt", "/package.json", "/notes.md", "/link.txt",
                             "/vendor/uPlot.iife.js", "/vendor/package.json", "/missing.js",
                             "/node_modules/uplot/dist/uPlot.esm.js", "/etc/passwd"}) {
    auto r = Get(target);
    EXPECT_EQ(r.status, 404) << target << " " << r.body;
    EXPECT_EQ(r.body.find("SECRET"), std::string::npos) << target;
  }
}

TEST_F(WebAssetsTest, MissingVendorFileNamesTheFix) {
  fs::remove_all(root_ / "node_modules");
  auto r = Get("/vendor/uPlot.esm.js");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("npm ci"), std::string::npos) << r.body;
}

TEST(WebAssetsDisabledTest, SaysSo) {
  WebAssets web("");
  auto r = web.Serve("GET", "/", "/");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("web_root"), std::string::npos);
}

TEST(WebConfigTest, WebRootKey) {
  auto c = ParseConfig("web_root: /srv/podsched/web\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->web_root, "/srv/podsched/web");
  auto starter = ParseConfig(StarterConfigYaml());
  ASSERT_TRUE(starter.has_value()) << starter.error().message();
  EXPECT_EQ(starter->web_root, "");  // found at start (main.cc)
  EXPECT_FALSE(ParseConfig("web_root: [1]\n").has_value());
}

TEST(CookieTest, FindsValue) {
  EXPECT_EQ(CookieValue("a=1; podsched_session=abc; b=2", kSessionCookie), "abc");
  EXPECT_EQ(CookieValue("podsched_session=\"q\"", kSessionCookie), "q");
  EXPECT_EQ(CookieValue("xpodsched_session=abc", kSessionCookie), std::nullopt);
  EXPECT_EQ(CookieValue("", kSessionCookie), std::nullopt);
}

TEST(WebSessionsTest, ExpireAndBound) {
  WebSessions sessions(std::chrono::hours(1), 2);
  TimePoint t{std::chrono::seconds(1000)};
  std::string a = sessions.Create({"alice", false}, t);
  EXPECT_EQ(a.size(), 64u);
  ASSERT_TRUE(sessions.Find(a, t + std::chrono::minutes(59)));
  EXPECT_EQ(sessions.Find(a, t + std::chrono::minutes(59))->user, "alice");
  EXPECT_FALSE(sessions.Find(a, t + std::chrono::minutes(60)));
  std::string b = sessions.Create({"bob", false}, t);
  std::string c = sessions.Create({"carol", false}, t + std::chrono::seconds(1));
  std::string d = sessions.Create({"dan", false}, t + std::chrono::seconds(2));
  EXPECT_EQ(sessions.size(), 2u);
  EXPECT_FALSE(sessions.Find(b, t + std::chrono::seconds(3)));  // the oldest was dropped
  EXPECT_TRUE(sessions.Find(d, t + std::chrono::seconds(3)));
  EXPECT_NE(c, d);
}

// Audit L4: one user's logins evict only that user's oldest sessions, never another's.
TEST(WebSessionsTest, OneUsersLoginsEvictOnlyTheirOwnSessions) {
  WebSessions sessions(std::chrono::hours(1), 100, 3);
  TimePoint t{std::chrono::seconds(1000)};
  std::string bob = sessions.Create({"bob", false}, t);
  std::vector<std::string> mallory;
  for (int i = 0; i < 50; ++i) {
    mallory.push_back(sessions.Create({"mallory", false}, t + std::chrono::seconds(1 + i)));
  }
  EXPECT_EQ(sessions.size(), 4u);
  EXPECT_TRUE(sessions.Find(bob, t + std::chrono::seconds(60)));
  EXPECT_FALSE(sessions.Find(mallory[46], t + std::chrono::seconds(60)));
  for (int i = 47; i < 50; ++i) EXPECT_TRUE(sessions.Find(mallory[i], t + std::chrono::seconds(60)));
}

// Login, cookie auth and CSRF through the engine (no sockets).
class WebEngineTest : public testing::EngineFixture {
 protected:

  HttpResponse Call(HttpRequest r) {
    now_ += std::chrono::milliseconds(1);
    if (r.host.empty()) r.host = "127.0.0.1:8470";
    return engine_->Handle(r, now_);
  }

  HttpRequest Req(std::string method, std::string target, std::string cookie = "",
                  std::string body = "", bool xhr = true) {
    HttpRequest r;
    r.method = std::move(method);
    r.target = std::move(target);
    r.body = std::move(body);
    r.cookie = std::move(cookie);
    if (xhr) r.requested_with = "podsched-dashboard";
    return r;
  }

  // Logs in and returns the Cookie header to send.
  std::string LoginAs(const std::string& token) {
    auto r = Call(Req("POST", "/api/v1/login", "", R"({"token":")" + token + R"("})"));
    EXPECT_EQ(r.status, 200) << r.body;
    std::string set = Header(r, "Set-Cookie");
    return set.substr(0, set.find(';'));
  }

};

TEST_F(WebEngineTest, LoginSetsAHardenedSessionCookie) {
  auto r = Call(Req("POST", "/api/v1/login", "", R"({"token":"t-alice"})"));
  ASSERT_EQ(r.status, 200) << r.body;
  api::User user;
  ASSERT_TRUE(ParseJson(r.body, {}, &user).ok());
  EXPECT_EQ(user.name(), "alice");
  std::string set = Header(r, "Set-Cookie");
  EXPECT_TRUE(set.starts_with("podsched_session=")) << set;
  EXPECT_NE(set.find("; HttpOnly"), std::string::npos) << set;
  EXPECT_NE(set.find("; SameSite=Strict"), std::string::npos) << set;
  EXPECT_NE(set.find("; Path=/"), std::string::npos) << set;
  EXPECT_EQ(set.find("Secure"), std::string::npos) << set;   // plain http
  EXPECT_EQ(set.find("t-alice"), std::string::npos) << set;  // never the token itself
  EXPECT_NE(Header(r, "Content-Security-Policy"), "");

  HttpRequest https = Req("POST", "/api/v1/login", "", R"({"token":"t-alice"})");
  https.forwarded_proto = "https";
  EXPECT_NE(Header(Call(https), "Set-Cookie").find("; Secure"), std::string::npos);
}

TEST_F(WebEngineTest, LoginErrors) {
  auto wrong = Call(Req("POST", "/api/v1/login", "", R"({"token":"nope"})"));
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(Header(wrong, "Set-Cookie"), "");
  EXPECT_EQ(Call(Req("POST", "/api/v1/login", "", R"({"tok":"t-alice"})")).status, 400);
  EXPECT_EQ(Call(Req("POST", "/api/v1/login", "", "not json")).status, 400);
  EXPECT_EQ(Call(Req("GET", "/api/v1/login")).status, 405);
  // Login CSRF: no custom header, or another origin.
  EXPECT_EQ(Call(Req("POST", "/api/v1/login", "", R"({"token":"t-alice"})", false)).status, 403);
  HttpRequest cross = Req("POST", "/api/v1/login", "", R"({"token":"t-alice"})");
  cross.origin = "http://evil.example";
  EXPECT_EQ(Call(cross).status, 403);
}

TEST_F(WebEngineTest, CookieAuthenticatesTheApiWithCsrfRules) {
  std::string cookie = LoginAs("t-alice");
  auto who = Call(Req("GET", "/api/v1/whoami", cookie, "", false));  // GET needs no header
  ASSERT_EQ(who.status, 200) << who.body;
  EXPECT_NE(who.body.find("alice"), std::string::npos);
  std::string job = R"({"name":"j","accelerator":"v2-8","command":"train"})";
  auto no_header = Call(Req("POST", "/api/v1/jobs", cookie, job, false));
  EXPECT_EQ(no_header.status, 403) << no_header.body;
  EXPECT_NE(no_header.body.find("X-Requested-With"), std::string::npos);
  HttpRequest cross = Req("POST", "/api/v1/jobs", cookie, job);
  cross.origin = "http://evil.example";
  EXPECT_EQ(Call(cross).status, 403);
  HttpRequest same = Req("POST", "/api/v1/jobs", cookie, job);
  same.origin = "http://127.0.0.1:8470";
  EXPECT_EQ(Call(same).status, 201);
  // Bearer requests are not cookie requests: no CSRF header needed.
  HttpRequest bearer = Req("POST", "/api/v1/jobs", "", job, false);
  bearer.authorization = "Bearer t-alice";
  EXPECT_EQ(Call(bearer).status, 201);
  EXPECT_EQ(Call(Req("GET", "/api/v1/whoami", "podsched_session=forged")).status, 401);
}

TEST_F(WebEngineTest, LogoutEndsTheSession) {
  std::string cookie = LoginAs("t-admin");
  ASSERT_EQ(Call(Req("GET", "/api/v1/users", cookie)).status, 200);
  auto out = Call(Req("POST", "/api/v1/logout", cookie));
  EXPECT_EQ(out.status, 200);
  EXPECT_NE(Header(out, "Set-Cookie").find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(Call(Req("GET", "/api/v1/users", cookie)).status, 401);
}

TEST_F(WebEngineTest, SessionExpires) {
  std::string cookie = LoginAs("t-alice");
  now_ += std::chrono::hours(12);
  EXPECT_EQ(Call(Req("GET", "/api/v1/whoami", cookie)).status, 401);
}

TEST_F(WebEngineTest, StreamAcceptsTheCookie) {
  std::string cookie = LoginAs("t-alice");
  HttpRequest r = Req("GET", "/api/v1/events/stream", cookie);
  auto opened = engine_->OpenStream(r, now_, [](std::string) {});
  EXPECT_TRUE(std::holds_alternative<int64_t>(opened));
  r.cookie = "podsched_session=forged";
  auto refused = engine_->OpenStream(r, now_, [](std::string) {});
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(refused));
  EXPECT_EQ(std::get<HttpResponse>(refused).status, 401);
}

// Audit L5: a stream opened with the dashboard's cookie outlived a logout.
TEST_F(WebEngineTest, AStreamEndsWithTheSessionItWasOpenedWith) {
  const std::string cookie = LoginAs("t-alice"), other = LoginAs("t-alice");
  std::vector<std::string> frames, kept;
  ASSERT_TRUE(std::holds_alternative<int64_t>(engine_->OpenStream(
      Req("GET", "/api/v1/events/stream", cookie), now_, [&](std::string f) { frames.push_back(f); })));
  ASSERT_TRUE(std::holds_alternative<int64_t>(engine_->OpenStream(
      Req("GET", "/api/v1/events/stream", other), now_, [&](std::string f) { kept.push_back(f); })));
  engine_->Tick(now_);
  EXPECT_TRUE(frames.empty());
  ASSERT_EQ(Call(Req("POST", "/api/v1/logout", cookie)).status, 200);
  engine_->Tick(now_);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_TRUE(frames[0].starts_with("event: end\n")) << frames[0];
  EXPECT_NE(frames[0].find("logged out"), std::string::npos) << frames[0];
  EXPECT_EQ(frames[1], "");  // the end of the stream
  EXPECT_TRUE(kept.empty()) << "the other session's stream goes on";
  now_ += std::chrono::hours(12);  // that session expires: its stream ends too
  engine_->Tick(now_);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_TRUE(kept[0].starts_with("event: end\n")) << kept[0];
}

TEST_F(WebEngineTest, NonApiPathsGoToTheDashboard) {
  // No web_root configured here: the dashboard says so; the API's own 404s stay JSON.
  auto page = Call(Req("GET", "/"));
  EXPECT_EQ(page.status, 404);
  EXPECT_NE(page.body.find("web_root"), std::string::npos);
  EXPECT_NE(Header(page, "Content-Security-Policy"), "");
  EXPECT_EQ(Call(Req("GET", "/api/v2/jobs")).status, 404);
}

}  // namespace
}  // namespace podsched::daemon
