#include "scheduler/daemon/accounts_api.h"

#include <algorithm>
#include <map>
#include <string>

#include "api.pb.h"
#include "scheduler/daemon/api_response.h"
#include "scheduler/daemon/convert.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {
namespace {

api::User UserToProto(const AccountView& u) {
  api::User out;
  out.set_name(u.account.name.value());
  out.set_role(u.account.admin ? "admin" : "user");
  out.set_disabled(u.account.disabled);
  out.set_unix_user(u.account.unix_user);
  out.set_source(u.configured ? "config" : "api");
  if (!u.configured) out.set_created(Rfc3339(u.account.created));
  return out;
}

api::Token TokenToProto(const core::TokenRecord& t, TimePoint now) {
  api::Token out;
  out.set_id(t.id.value());
  out.set_user(t.user.value());
  out.set_label(t.label);
  out.set_state(std::string(TokenState(t, now)));
  out.set_created(Rfc3339(t.created));
  out.set_created_by(t.created_by.value());
  if (t.expires) out.set_expires(Rfc3339(*t.expires));
  if (t.revoked) out.set_revoked(Rfc3339(*t.revoked));
  return out;
}

HttpResponse Issued(const IssuedToken& issued, const AccountView* user, TimePoint now) {
  api::NewToken out;
  *out.mutable_token() = TokenToProto(issued.record, now);
  out.set_secret(issued.secret);
  if (user != nullptr) *out.mutable_user() = UserToProto(*user);
  HttpResponse r = JsonResponse(out, 201);
  r.headers.emplace_back("Cache-Control", "no-store");  // the secret must not be cached
  return r;
}

HttpResponse OnlyAdmin(std::string_view what) {
  return ErrorResponse(403, "permission_denied", "only an admin " + std::string(what));
}

HttpResponse SetDisabled(ApiCalls& calls, const Principal& who, const ApiRequest& request,
                         bool disabled) {
  if (!who.admin) return OnlyAdmin(disabled ? "disables users" : "enables users");
  auto user = calls.SetUserDisabled(request.params[0], disabled, request.now);
  if (!user) return StatusError(user.error());
  return JsonResponse(UserToProto(AccountView{*user, false}));
}

}  // namespace

HttpResponse WhoAmI(const ApiView& view, ApiCalls&, const Principal& who, const ApiRequest&) {
  api::User out;
  if (const AccountView* u = view.accounts.FindUser(who.user)) out = UserToProto(*u);
  out.set_name(who.user);
  out.set_role(who.admin ? "admin" : "user");
  out.set_token_id(who.token.value());
  if (const core::TokenRecord* t = view.accounts.FindToken(who.token); t && t->expires) {
    out.set_token_expires(Rfc3339(*t->expires));
  }
  return JsonResponse(out);
}

HttpResponse ListUsers(const ApiView& view, ApiCalls&, const Principal& who, const ApiRequest&) {
  if (!who.admin) return OnlyAdmin("lists users");
  api::UserList out;
  for (const AccountView& u : view.accounts.Users()) {
    api::User* user = out.add_users();
    *user = UserToProto(u);
    user->set_active_jobs(view.scheduler.ActiveJobsOf(u.account.name));
  }
  return JsonResponse(out);
}

HttpResponse AddUser(const ApiView& view, ApiCalls& calls, const Principal& who,
                     const ApiRequest& request) {
  if (!who.admin) return OnlyAdmin("adds users");
  api::User in;
  if (Status s = ParseJson(request.http.body, {view.config.limits.max_json_depth, 4096}, &in);
      !s.ok()) {
    return StatusError(s);
  }
  if (!in.role().empty() && in.role() != "user" && in.role() != "admin") {
    return ErrorResponse(400, "invalid_argument",
                         "role '" + in.role().substr(0, 32) + "' is not a role; valid: user, admin");
  }
  auto issued = calls.AddUser(in.name(), in.role() == "admin", in.unix_user(), who.user,
                              request.now);
  if (!issued) return StatusError(issued.error());
  return Issued(*issued, view.accounts.FindUser(in.name()), request.now);
}

HttpResponse DisableUser(const ApiView&, ApiCalls& calls, const Principal& who,
                         const ApiRequest& request) {
  return SetDisabled(calls, who, request, true);
}

HttpResponse EnableUser(const ApiView&, ApiCalls& calls, const Principal& who,
                        const ApiRequest& request) {
  return SetDisabled(calls, who, request, false);
}

HttpResponse ListTokens(const ApiView& view, ApiCalls&, const Principal& who,
                        const ApiRequest& request) {
  const std::string* user = request.NonEmptyQuery("user");
  if (!who.admin) {
    if (user != nullptr && *user != who.user) {
      return ErrorResponse(403, "permission_denied", "users list only their own tokens");
    }
    user = &who.user;
  }
  api::TokenList out;
  for (const core::TokenRecord& t : view.accounts.Tokens(user)) {
    *out.add_tokens() = TokenToProto(t, request.now);
  }
  return JsonResponse(out);
}

HttpResponse CreateToken(const ApiView& view, ApiCalls& calls, const Principal& who,
                         const ApiRequest& request) {
  api::TokenRequest in;
  if (Status s = ParseJson(request.http.body, {view.config.limits.max_json_depth, 4096}, &in);
      !s.ok()) {
    return StatusError(s);
  }
  const std::string user = in.user().empty() ? who.user : in.user();
  if (!who.admin && user != who.user) {
    return ErrorResponse(403, "permission_denied",
                         "users create tokens only for themselves; an admin creates any");
  }
  if (in.expires_in_seconds() < 0) {
    return ErrorResponse(400, "invalid_argument",
                         "expires_in_seconds must be >= 0 (0: the token never expires)");
  }
  std::optional<Duration> lifetime;
  if (in.expires_in_seconds() > 0) {
    // Bounded before the multiplication: no overflow for absurd values.
    lifetime = std::chrono::seconds(std::min<int64_t>(in.expires_in_seconds(), int64_t{1} << 40));
  }
  auto issued = calls.CreateToken(user, in.label(), lifetime, who.user, who.token, request.now);
  if (!issued) return StatusError(issued.error());
  return Issued(*issued, nullptr, request.now);
}

HttpResponse RevokeToken(const ApiView& view, ApiCalls& calls, const Principal& who,
                         const ApiRequest& request) {
  auto id = ParseInt(request.params[0]);
  const std::string not_found = "no token " + request.params[0].substr(0, 32);
  if (!id || *id <= 0) return ErrorResponse(404, "not_found", not_found);
  const core::TokenRecord* token = view.accounts.FindToken(core::TokenId(*id));
  if (token == nullptr || (!who.admin && token->user.value() != who.user)) {
    return ErrorResponse(404, "not_found", not_found);
  }
  auto revoked = calls.RevokeToken(core::TokenId(*id), request.now);
  if (!revoked) return StatusError(revoked.error());
  return JsonResponse(TokenToProto(*revoked, request.now));
}

}  // namespace podsched::daemon
