// Browser sessions for the dashboard: a login with the bearer token yields a random session id
// kept in a cookie; the server maps it to the principal until it expires.
//
// - The cookie holds only the session id (32 random bytes, hex), never the token. It is
//   HttpOnly (scripts cannot read it), SameSite=Strict (not sent on cross-site requests),
//   Path=/, and Secure when the client reached us over https (Origin or X-Forwarded-Proto).
// - The server stores the SHA-256 of each id, so a lookup compares hashes, not secrets.
// - CSRF: a state-changing request (not GET/HEAD) authenticated by the cookie must carry the
//   header `X-Requested-With` (a cross-site form cannot set it, and a cross-site fetch with it
//   needs a CORS preflight podsched never grants), and its Origin, when sent, must be this host.
//   Requests with an Authorization header are not cookie-authenticated and need neither.
// - Sessions live in memory: a restart logs everyone out. At most `max_sessions`; the oldest is
//   dropped beyond that.
// - A session keeps the principal with the token it was made from: every request through it
//   re-checks that token (AccountRegistry::Recheck), so a revoked or expired token, or a disabled
//   user, ends the session at the next request; the engine also drops such sessions at once.
//
// Not thread-safe (the engine's thread owns it). Takes `now`; randomness from OpenSSL.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include <functional>

#include "scheduler/daemon/account_registry.h"
#include "scheduler/daemon/auth.h"
#include "scheduler/daemon/http_types.h"

namespace podsched::daemon {

inline constexpr std::string_view kSessionCookie = "podsched_session";

// The value of cookie `name` in a Cookie header ("a=1; b=2"), if present.
std::optional<std::string> CookieValue(std::string_view cookie_header, std::string_view name);

class WebSessions {
 public:
  // Sessions one user may hold: beyond it, that user's oldest goes (audit L4: any user's logins
  // used to evict everyone's sessions from the shared bound).
  static constexpr size_t kMaxPerUser = 16;

  explicit WebSessions(Duration lifetime = std::chrono::hours(12), size_t max_sessions = 10000,
                       size_t max_per_user = kMaxPerUser)
      : lifetime_(lifetime), max_sessions_(max_sessions), max_per_user_(max_per_user) {}

  // A new session for `who`; returns its id (the cookie value). Drops expired sessions, then
  // `who`'s oldest beyond max_per_user, then the oldest of all beyond max_sessions.
  std::string Create(const Principal& who, TimePoint now);
  // The principal of a live session id; nullopt if unknown or expired.
  std::optional<Principal> Find(std::string_view id, TimePoint now);
  void Remove(std::string_view id);
  // Ends every session whose principal `end` selects; returns how many.
  size_t RemoveWhere(const std::function<bool(const Principal&)>& end);
  size_t size() const { return sessions_.size(); }

  // Set-Cookie values that store / clear the session id.
  std::string SetCookie(const std::string& id, bool secure) const;
  static std::string ClearCookie(bool secure);

 private:
  struct Session {
    Principal who;
    TimePoint expires;
    TimePoint created;
  };
  Duration lifetime_;
  size_t max_sessions_;
  size_t max_per_user_;
  std::map<std::string, Session> sessions_;  // by SHA-256 of the id
};

// How a request authenticated itself.
struct WebAuth {
  Principal who;
  bool by_cookie = false;
};

// Authenticates by the Authorization header if present, else by the session cookie (re-checking
// the session's token, and the CSRF rules for state-changing methods). Refusals: kUnauthenticated
// (no/invalid credentials, a session that expired or whose token no longer holds: that session
// is removed), kPermissionDenied (cookie request without X-Requested-With or from another
// origin).
std::expected<WebAuth, Denied> AuthenticateRequest(const HttpRequest& request,
                                                   const AccountRegistry& accounts,
                                                   WebSessions& sessions, TimePoint now);

// Whether the client talks to us over https (for the cookie's Secure flag).
bool RequestIsHttps(const HttpRequest& request);

}  // namespace podsched::daemon

namespace podsched::daemon {

// POST /api/v1/login with {"token": "..."} and X-Requested-With: 200 `User` and a Set-Cookie with
// a new session; 401 for a wrong (or revoked, expired, disabled) token, 400 for a malformed body,
// 403 without X-Requested-With or from another origin (login CSRF).
HttpResponse Login(const HttpRequest& request, const AccountRegistry& accounts,
                   WebSessions& sessions, TimePoint now);
// POST /api/v1/logout: ends the cookie's session (if any) and clears the cookie. Always 200.
HttpResponse Logout(const HttpRequest& request, WebSessions& sessions);

}  // namespace podsched::daemon
