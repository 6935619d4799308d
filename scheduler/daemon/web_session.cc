#include "scheduler/daemon/web_session.h"

#include <openssl/rand.h>

#include <nlohmann/json.hpp>

#include "api.pb.h"
#include "common/check.h"
#include "common/hash.h"
#include "common/json_reader.h"
#include "scheduler/daemon/json_util.h"
#include "scheduler/daemon/web_assets.h"

namespace podsched::daemon {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsSafeMethod(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS";
}

// CSRF rules for a request that a browser may send with our cookie (see the header).
Status CheckSameOrigin(const HttpRequest& request) {
  if (request.requested_with.empty()) {
    return Status(StatusCode::kPermissionDenied,
                  "requests authenticated by the session cookie must send the header "
                  "X-Requested-With (CSRF protection); API clients use Authorization: Bearer");
  }
  if (!request.origin.empty() && request.origin != "http://" + request.host &&
      request.origin != "https://" + request.host) {
    return Status(StatusCode::kPermissionDenied,
                  "cross-origin request refused (Origin " + request.origin + ")");
  }
  return Status::Ok();
}

HttpResponse Reply(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers = DashboardSecurityHeaders();
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

HttpResponse ErrorReply(int status, std::string_view code, std::string_view message) {
  return Reply(status, ErrorJson(code, message));
}

}  // namespace

std::optional<std::string> CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    size_t semi = header.find(';');
    std::string_view pair = Trim(header.substr(0, semi));
    size_t eq = pair.find('=');
    if (eq != std::string_view::npos && Trim(pair.substr(0, eq)) == name) {
      std::string_view value = Trim(pair.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      return std::string(value);
    }
    if (semi == std::string_view::npos) break;
    header.remove_prefix(semi + 1);
  }
  return std::nullopt;
}

std::string WebSessions::Create(const Principal& who, TimePoint now) {
  unsigned char bytes[32];
  PODSCHED_CHECK(RAND_bytes(bytes, sizeof bytes) == 1);
  std::string id = HexEncode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
  std::erase_if(sessions_, [now](const auto& kv) { return kv.second.expires <= now; });
  // The oldest session of those `select` picks, while `limit` or more of them are held.
  auto drop_oldest = [this](size_t limit, auto select) {
    for (;;) {
      size_t held = 0;
      auto oldest = sessions_.end();
      for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
        if (!select(it->second)) continue;
        ++held;
        if (oldest == sessions_.end() || it->second.created < oldest->second.created) oldest = it;
      }
      if (held < limit || oldest == sessions_.end()) return;
      sessions_.erase(oldest);
    }
  };
  drop_oldest(max_per_user_, [&who](const Session& s) { return s.who.user == who.user; });
  drop_oldest(max_sessions_, [](const Session&) { return true; });
  sessions_[Sha256(id)] = Session{who, now + lifetime_, now};
  return id;
}

std::optional<Principal> WebSessions::Find(std::string_view id, TimePoint now) {
  if (id.empty() || id.size() > 128) return std::nullopt;
  auto it = sessions_.find(Sha256(id));
  if (it == sessions_.end()) return std::nullopt;
  if (it->second.expires <= now) {
    sessions_.erase(it);
    return std::nullopt;
  }
  return it->second.who;
}

void WebSessions::Remove(std::string_view id) { sessions_.erase(Sha256(id)); }

size_t WebSessions::RemoveWhere(const std::function<bool(const Principal&)>& end) {
  return std::erase_if(sessions_, [&end](const auto& kv) { return end(kv.second.who); });
}

std::string WebSessions::SetCookie(const std::string& id, bool secure) const {
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(lifetime_).count();
  return std::string(kSessionCookie) + "=" + id + "; Path=/; Max-Age=" + std::to_string(seconds) +
         "; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "");
}

std::string WebSessions::ClearCookie(bool secure) {
  return std::string(kSessionCookie) + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" +
         (secure ? "; Secure" : "");
}

bool RequestIsHttps(const HttpRequest& request) {
  return request.origin.starts_with("https://") || request.forwarded_proto == "https";
}

std::expected<WebAuth, Denied> AuthenticateRequest(const HttpRequest& request,
                                                   const AccountRegistry& accounts,
                                                   WebSessions& sessions, TimePoint now) {
  if (!request.authorization.empty()) {
    auto who = accounts.AuthenticateHeader(request.authorization, now);
    if (!who) return std::unexpected(who.error());
    return WebAuth{*who, false};
  }
  auto id = CookieValue(request.cookie, kSessionCookie);
  if (!id || id->empty()) {
    return std::unexpected(accounts.AuthenticateHeader("", now).error());  // "missing ..."
  }
  auto session = sessions.Find(*id, now);
  if (!session) {
    return std::unexpected(
        Denied{AuthFailure::kSession,
               Status(StatusCode::kUnauthenticated,
                      "the session expired, was logged out, or its token was revoked or its "
                      "user disabled; log in again")});
  }
  auto who = accounts.Recheck(*session, now);
  if (!who) {
    sessions.Remove(*id);
    Denied denied = who.error();
    denied.status = Status(StatusCode::kUnauthenticated,
                           "the session ended: " + denied.status.message());
    return std::unexpected(std::move(denied));
  }
  if (!IsSafeMethod(request.method)) {
    if (Status s = CheckSameOrigin(request); !s.ok()) {
      return std::unexpected(Denied{AuthFailure::kCsrf, s});
    }
  }
  return WebAuth{*who, true};
}

HttpResponse Login(const HttpRequest& request, const AccountRegistry& accounts,
                   WebSessions& sessions, TimePoint now) {
  if (request.method != "POST") return ErrorReply(405, "method_not_allowed", "use POST");
  if (Status s = CheckSameOrigin(request); !s.ok()) {
    return ErrorReply(403, "permission_denied", s.message());
  }
  std::string token;
  if (CheckJsonBounds(request.body, {4, 4096}).ok()) {
    auto body = ParseJsonDocument(request.body, "login request");
    if (body && body->is_object() && body->size() == 1) {
      JsonReader r(*body, "login request");
      token = r.String("token");
      if (!r.ok()) token.clear();
    }
  }
  if (token.empty() || HasControlCharacters(token)) {
    return ErrorReply(400, "invalid_argument", R"(send {"token": "<your API token>"})");
  }
  auto who = accounts.AuthenticateToken(token, now);
  if (!who) {
    // An unknown token is just "wrong"; a revoked or expired one says so (its holder knows it).
    return ErrorReply(401, "unauthenticated",
                      who.error().reason == AuthFailure::kUnknown ? "wrong token"
                                                                  : who.error().status.message());
  }
  api::User user;
  user.set_name(who->user);
  user.set_role(who->admin ? "admin" : "user");
  HttpResponse r = Reply(200, ToJson(user));
  r.headers.emplace_back("Set-Cookie",
                         sessions.SetCookie(sessions.Create(*who, now), RequestIsHttps(request)));
  return r;
}

HttpResponse Logout(const HttpRequest& request, WebSessions& sessions) {
  if (request.method != "POST") return ErrorReply(405, "method_not_allowed", "use POST");
  if (auto id = CookieValue(request.cookie, kSessionCookie); id && !id->empty()) {
    sessions.Remove(*id);
  }
  HttpResponse r = Reply(200, "{}");
  r.headers.emplace_back("Set-Cookie", WebSessions::ClearCookie(RequestIsHttps(request)));
  return r;
}

}  // namespace podsched::daemon
