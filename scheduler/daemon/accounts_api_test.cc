// The token life cycle through the engine (no sockets): users and tokens over the API, who may
// do what, and a revocation or a disabled user taking effect at once for bearer requests,
// dashboard sessions and open event streams.
#include <gtest/gtest.h>

#include <list>

#include "api.pb.h"
#include "bus.pb.h"
#include "scheduler/daemon/engine_test_util.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {
namespace {

class AccountsApiTest : public testing::ApiFixture {
 protected:
  template <typename M>
  M Parse(const HttpResponse& r) {
    M m;
    EXPECT_TRUE(ParseJson(r.body, {}, &m).ok()) << r.body;
    return m;
  }
  api::NewToken AddUser(const std::string& body) {
    auto r = Call("POST", "/api/v1/users", "t-admin", body);
    EXPECT_EQ(r.status, 201) << r.body;
    return Parse<api::NewToken>(r);
  }
  // Logs in to the dashboard with `token`; the Cookie header to send.
  std::string Login(const std::string& token) {
    HttpRequest r{"POST", "/api/v1/login", "", R"({"token":")" + token + R"("})", "test"};
    r.requested_with = "podsched-dashboard";
    r.host = "127.0.0.1:8470";
    HttpResponse out = engine_->Handle(r, now_);
    EXPECT_EQ(out.status, 200) << out.body;
    for (const auto& [k, v] : out.headers) {
      if (k == "Set-Cookie") return v.substr(0, v.find(';'));
    }
    return "";
  }
  HttpResponse GetWithCookie(const std::string& cookie, const std::string& target) {
    HttpRequest r{"GET", target, "", "", "test"};
    r.cookie = cookie;
    return engine_->Handle(r, now_);
  }
  std::vector<std::string>* OpenStream(const std::string& token) {
    frames_.emplace_back();
    std::vector<std::string>* frames = &frames_.back();
    auto opened = engine_->OpenStream(
        HttpRequest{"GET", "/api/v1/events/stream", "Bearer " + token, "", "test"}, now_,
        [frames](std::string f) { frames->push_back(std::move(f)); });
    EXPECT_TRUE(std::holds_alternative<int64_t>(opened));
    return frames;
  }
  std::list<std::vector<std::string>> frames_;
};

TEST_F(AccountsApiTest, RevokingATokenEndsItsRequestsSessionsAndStreamsAtOnce) {
  api::NewToken carl = AddUser(R"({"name":"carl","unix_user":"carl_u"})");
  EXPECT_EQ(carl.user().name(), "carl");
  EXPECT_EQ(carl.user().unix_user(), "carl_u");
  EXPECT_EQ(carl.user().source(), "api");
  EXPECT_EQ(carl.token().state(), "active");
  const std::string secret = carl.secret();
  ASSERT_EQ(secret.size(), 48u);
  auto whoami = Parse<api::User>(Call("GET", "/api/v1/whoami", secret));
  EXPECT_EQ(whoami.name(), "carl");
  EXPECT_EQ(whoami.token_id(), carl.token().id());
  int64_t job = SubmitAs(secret);
  // A second token of carl's, made by the admin, stays valid when the first is revoked (one made
  // with the first would be revoked with it: AccountRegistry's M5 test).
  auto other = Call("POST", "/api/v1/tokens", "t-admin", R"({"user":"carl","label":"laptop"})");
  ASSERT_EQ(other.status, 201) << other.body;
  const std::string laptop = Parse<api::NewToken>(other).secret();

  const std::string cookie = Login(secret);
  EXPECT_EQ(GetWithCookie(cookie, "/api/v1/jobs").status, 200);
  std::vector<std::string>* stream = OpenStream(secret);
  std::vector<std::string>* laptop_stream = OpenStream(laptop);

  auto revoked = Call("POST", "/api/v1/tokens/" + std::to_string(carl.token().id()) + "/revoke",
                      "t-admin");
  ASSERT_EQ(revoked.status, 200) << revoked.body;
  EXPECT_EQ(Parse<api::Token>(revoked).state(), "revoked");

  auto refused = Call("GET", "/api/v1/jobs", secret);
  EXPECT_EQ(refused.status, 401);
  EXPECT_NE(refused.body.find("was revoked at"), std::string::npos) << refused.body;
  auto by_cookie = GetWithCookie(cookie, "/api/v1/jobs");
  EXPECT_EQ(by_cookie.status, 401);
  EXPECT_NE(by_cookie.body.find("its token was revoked"), std::string::npos) << by_cookie.body;
  ASSERT_GE(stream->size(), 2u);
  EXPECT_TRUE((*stream)[stream->size() - 2].starts_with("event: end\ndata: {"));
  EXPECT_NE((*stream)[stream->size() - 2].find("was revoked"), std::string::npos);
  EXPECT_EQ(stream->back(), "");  // the end of the stream
  EXPECT_TRUE(laptop_stream->empty());
  EXPECT_EQ(Call("GET", "/api/v1/jobs/" + std::to_string(job), laptop).status, 200);

  std::string metrics = Call("GET", "/metrics", "").body;
  EXPECT_NE(metrics.find("podsched_auth_failures_total{reason=\"revoked\"} 1"), std::string::npos);
  EXPECT_NE(metrics.find("podsched_auth_failures_total{reason=\"session\"} 1"), std::string::npos);
}

TEST_F(AccountsApiTest, DisablingAUserFailsAllTheirTokensAndLeavesTheirJobs) {
  api::NewToken dora = AddUser(R"({"name":"dora","role":"admin"})");
  int64_t job = SubmitAs(dora.secret());
  std::vector<std::string>* stream = OpenStream(dora.secret());
  auto off = Call("POST", "/api/v1/users/dora/disable", "t-admin");
  ASSERT_EQ(off.status, 200) << off.body;
  EXPECT_TRUE(Parse<api::User>(off).disabled());
  auto refused = Call("GET", "/api/v1/jobs", dora.secret());
  EXPECT_EQ(refused.status, 401);
  EXPECT_NE(refused.body.find("user dora is disabled"), std::string::npos) << refused.body;
  EXPECT_EQ(stream->back(), "");
  auto kept = Parse<api::Job>(Call("GET", "/api/v1/jobs/" + std::to_string(job), "t-admin"));
  EXPECT_EQ(kept.state(), "QUEUED");  // left alone
  ASSERT_EQ(Call("POST", "/api/v1/users/dora/enable", "t-admin").status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/jobs", dora.secret()).status, 200);

  auto users = Parse<api::UserList>(Call("GET", "/api/v1/users", "t-admin"));
  std::vector<std::string> listed;
  for (const auto& u : users.users()) listed.push_back(u.name() + ":" + u.source());
  EXPECT_EQ(listed, (std::vector<std::string>{"admin:config", "alice:config", "bob:config",
                                              "dora:api"}));
}

TEST_F(AccountsApiTest, UsersManageOnlyTheirOwnTokensAndBadInputIsRefused) {
  EXPECT_EQ(Call("POST", "/api/v1/users", "t-alice", R"({"name":"eve"})").status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/users/bob/disable", "t-alice").status, 403);
  EXPECT_EQ(Call("GET", "/api/v1/users", "t-alice").status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/tokens", "t-alice", R"({"user":"bob"})").status, 403);
  EXPECT_EQ(Call("GET", "/api/v1/tokens?user=bob", "t-alice").status, 403);
  auto bobs = Call("POST", "/api/v1/tokens", "t-admin", R"({"user":"bob","label":"ci"})");
  ASSERT_EQ(bobs.status, 201);
  const int64_t bob_token = Parse<api::NewToken>(bobs).token().id();
  // Another user's token is "not found" to alice, as an unknown one is.
  auto theirs = Call("POST", "/api/v1/tokens/" + std::to_string(bob_token) + "/revoke", "t-alice");
  EXPECT_EQ(theirs.status, 404);
  EXPECT_NE(theirs.body.find("no token " + std::to_string(bob_token)), std::string::npos);
  EXPECT_EQ(Call("POST", "/api/v1/tokens/999/revoke", "t-alice").status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/tokens/999/revoke", "t-admin").status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/tokens/x/revoke", "t-admin").status, 404);
  auto own = Call("POST", "/api/v1/tokens", "t-alice", R"({"expires_in_seconds":3600})");
  ASSERT_EQ(own.status, 201) << own.body;
  api::NewToken alice = Parse<api::NewToken>(own);
  EXPECT_FALSE(alice.token().expires().empty());
  auto list = Parse<api::TokenList>(Call("GET", "/api/v1/tokens", "t-alice"));
  ASSERT_EQ(list.tokens_size(), 1);
  EXPECT_EQ(list.tokens(0).id(), alice.token().id());
  EXPECT_EQ(Call("GET", "/api/v1/tokens", "t-alice").body.find(alice.secret()), std::string::npos);
  EXPECT_EQ(Parse<api::TokenList>(Call("GET", "/api/v1/tokens", "t-admin")).tokens_size(), 2);
  auto again = Call("POST", "/api/v1/tokens/" + std::to_string(alice.token().id()) + "/revoke",
                    "t-alice");
  EXPECT_EQ(again.status, 200) << again.body;
  auto twice = Call("POST", "/api/v1/tokens/" + std::to_string(alice.token().id()) + "/revoke",
                    "t-alice");
  EXPECT_EQ(twice.status, 409);
  EXPECT_NE(twice.body.find("already revoked"), std::string::npos);

  for (const char* bad : {R"({"name":"Eve"})", R"({"name":""})", R"({"name":"eve","role":"root"})",
                          R"({"name":"eve","unix_user":"Eve"})", R"({"nme":"eve"})"}) {
    auto r = Call("POST", "/api/v1/users", "t-admin", bad);
    EXPECT_EQ(r.status, 400) << bad << " " << r.body;
  }
  EXPECT_EQ(Call("POST", "/api/v1/users", "t-admin", R"({"name":"alice"})").status, 409);
  EXPECT_EQ(Call("POST", "/api/v1/users/alice/disable", "t-admin").status, 409);
  EXPECT_EQ(Call("POST", "/api/v1/users/nobody/disable", "t-admin").status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/tokens", "t-admin", R"({"user":"nobody"})").status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/tokens", "t-admin", R"({"expires_in_seconds":-5})").status, 400);
  EXPECT_EQ(Call("POST", "/api/v1/tokens", "t-admin", R"({"expires_in_seconds":30})").status, 400);
}

TEST_F(AccountsApiTest, AnExpiringTokenEndsItsStreamAtTheNextTick) {
  auto r = Call("POST", "/api/v1/tokens", "t-alice", R"({"expires_in_seconds":60})");
  ASSERT_EQ(r.status, 201);
  const std::string secret = Parse<api::NewToken>(r).secret();
  std::vector<std::string>* stream = OpenStream(secret);
  engine_->Tick(now_ + std::chrono::seconds(59));
  EXPECT_TRUE(stream->empty());
  engine_->Tick(now_ + std::chrono::seconds(61));
  ASSERT_FALSE(stream->empty());
  EXPECT_EQ(stream->back(), "");
  now_ += std::chrono::seconds(61);
  auto refused = Call("GET", "/api/v1/jobs", secret);
  EXPECT_EQ(refused.status, 401);
  EXPECT_NE(refused.body.find("expired at"), std::string::npos) << refused.body;
}

// An API user's unix_user is what the agents are told to run its jobs as.
TEST_F(AccountsApiTest, AnApiUsersJobsLaunchAsItsUnixUser) {
  api::NewToken erin = AddUser(R"({"name":"erin","unix_user":"erin_u"})");
  std::vector<BusOutgoing> sent;
  engine_->SetBusSender([&](BusOutgoing m) { sent.push_back(std::move(m)); });
  bus::Envelope reg;
  reg.mutable_register_()->set_agent_id("w1");
  reg.mutable_register_()->set_pod("pod0");
  for (int h = 0; h < 16; ++h) reg.mutable_register_()->add_hosts(h);
  engine_->OnBusMessage("w1", reg.SerializeAsString(), now_);
  SubmitAs(erin.secret());
  engine_->Tick(now_);
  bool launched = false;
  for (const BusOutgoing& m : sent) {
    bus::Envelope e;
    ASSERT_TRUE(e.ParseFromString(m.bytes));
    if (!e.has_launch()) continue;
    launched = true;
    EXPECT_EQ(e.launch().unix_user(), "erin_u");
  }
  EXPECT_TRUE(launched);
}

}  // namespace
}  // namespace podsched::daemon
