#include "scheduler/daemon/account_registry.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/hash.h"
#include "common/user_names.h"
#include "scheduler/daemon/convert.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {
namespace {

using core::TokenId;
using core::TokenRecord;
using core::UserAccount;

std::expected<Principal, Denied> Refuse(AuthFailure reason, std::string message) {
  return std::unexpected(Denied{reason, Status(StatusCode::kUnauthenticated, std::move(message))});
}

std::string Describe(const TokenRecord& t) { return "token " + std::to_string(t.id.value()); }

}  // namespace

std::string_view TokenState(const TokenRecord& token, TimePoint now) {
  if (token.revoked) return "revoked";
  if (token.expires && *token.expires <= now) return "expired";
  return "active";
}

Status ValidateUserName(std::string_view name) {
  // Stricter than what the configuration accepts (IsPathSafeUserName): lower case, and no
  // leading '.', '_' or '-'.
  const bool ok = IsPathSafeUserName(name) &&
                  name.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == std::string_view::npos &&
                  std::isalnum(static_cast<unsigned char>(name.front()));
  if (ok) return Status::Ok();
  return Status(StatusCode::kInvalidArgument,
                "'" + std::string(name.substr(0, 80)) +
                    "' is not a valid user name: 1..64 characters of a-z, 0-9, '.', '_', '-', "
                    "starting with a letter or a digit");
}

Status ValidateUnixUser(std::string_view name) {
  if (name.empty() || IsUnixUserName(name)) return Status::Ok();
  return Status(StatusCode::kInvalidArgument,
                "'" + std::string(name.substr(0, 80)) +
                    "' is not a valid unix_user: 1..32 characters of a-z, 0-9, '_', '-', "
                    "starting with a letter or '_'");
}

AccountRegistry::AccountRegistry(std::vector<UserConfig> configured,
                                 core::AccountRepository* repo)
    : repo_(repo) {
  for (const UserConfig& u : configured) {
    UserAccount account;
    account.name = UserName(u.name);
    account.admin = u.admin;
    account.unix_user = u.unix_user;
    users_.try_emplace(u.name, AccountView{std::move(account), true});
    by_digest_.try_emplace(u.token_sha256, Credential{TokenId(0), u.name});
  }
}

Result<std::vector<std::string>> AccountRegistry::Load() {
  auto stored = repo_->LoadAccounts();
  if (!stored) return std::unexpected(stored.error().WithContext("loading API users and tokens"));
  std::vector<std::string> shadowed;
  for (UserAccount& a : stored->users) {
    const std::string name = a.name.value();
    if (!users_.try_emplace(name, AccountView{std::move(a), false}).second) {
      shadowed.push_back(name);
    }
  }
  for (TokenRecord& t : stored->tokens) {
    next_token_id_ = std::max(next_token_id_, t.id.value() + 1);
    by_digest_.try_emplace(t.sha256_hex, Credential{t.id, t.user.value()});
    tokens_.emplace(t.id, std::move(t));
  }
  return shadowed;
}

std::expected<Principal, Denied> AccountRegistry::AuthenticateHeader(
    std::string_view authorization, TimePoint now) const {
  if (authorization.empty()) {
    return Refuse(AuthFailure::kMissing,
                  "missing Authorization header; send 'Authorization: Bearer <token>'");
  }
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.starts_with(kBearer) || authorization.size() == kBearer.size()) {
    return Refuse(AuthFailure::kMalformed, "Authorization must be 'Bearer <token>'");
  }
  return AuthenticateToken(authorization.substr(kBearer.size()), now);
}

std::expected<Principal, Denied> AccountRegistry::AuthenticateToken(std::string_view token,
                                                                    TimePoint now) const {
  // See the header: a lookup by digest, not a comparison of secrets.
  auto it = by_digest_.find(Sha256Hex(token));
  if (it == by_digest_.end()) return Refuse(AuthFailure::kUnknown, "invalid token");
  return Check(it->second, now);
}

std::expected<Principal, Denied> AccountRegistry::Recheck(const Principal& who,
                                                          TimePoint now) const {
  return Check(Credential{who.token, who.user}, now);
}

std::expected<Principal, Denied> AccountRegistry::Check(const Credential& c, TimePoint now) const {
  if (c.token.value() != 0) {
    auto t = tokens_.find(c.token);
    if (t == tokens_.end() || t->second.user.value() != c.user) {
      return Refuse(AuthFailure::kUnknown, "invalid token");
    }
    if (t->second.revoked) {
      return Refuse(AuthFailure::kRevoked,
                    Describe(t->second) + " was revoked at " + Rfc3339(*t->second.revoked) +
                        "; log in with another token (podctl login)");
    }
    if (t->second.expires && *t->second.expires <= now) {
      return Refuse(AuthFailure::kExpired,
                    Describe(t->second) + " expired at " + Rfc3339(*t->second.expires) +
                        "; ask for a new one (podctl admin token create)");
    }
  }
  auto u = users_.find(c.user);
  // A configured credential counts only for a configured user (no stored user can take it over).
  if (u == users_.end() || (c.token.value() == 0 && !u->second.configured)) {
    return Refuse(AuthFailure::kUnknown, "invalid token");
  }
  if (u->second.account.disabled) {
    return Refuse(AuthFailure::kDisabled, "user " + c.user + " is disabled; ask an admin");
  }
  return Principal{c.user, u->second.account.admin, c.token};
}

Status AccountRegistry::Commit(const core::AccountChange& change) {
  Status s = repo_->CommitAccounts(change);
  if (!s.ok()) return Status(StatusCode::kUnavailable, s.message() + "; nothing was changed");
  return s;
}

Result<IssuedToken> AccountRegistry::AddUser(std::string_view name, bool admin,
                                             std::string_view unix_user, const std::string& by,
                                             TimePoint now) {
  if (Status s = ValidateUserName(name); !s.ok()) return std::unexpected(s);
  if (Status s = ValidateUnixUser(unix_user); !s.ok()) return std::unexpected(s);
  if (auto it = users_.find(name); it != users_.end()) {
    return Error(StatusCode::kAlreadyExists,
                 "user " + std::string(name) + " already exists" +
                     (it->second.configured ? " (configured in podsched.yaml)" : ""));
  }
  if (users_.size() >= kMaxApiUsers) {
    return Error(StatusCode::kResourceExhausted,
                 "at most " + std::to_string(kMaxApiUsers) + " users; disable unused ones");
  }
  UserAccount account{UserName(std::string(name)), admin, false, std::string(unix_user), now,
                      UserName(by)};
  IssuedToken issued;
  issued.secret = NewToken();
  issued.record = TokenRecord{TokenId(next_token_id_), account.name, "first token",
                              Sha256Hex(issued.secret), now, UserName(by), std::nullopt,
                              std::nullopt};
  if (Status s = Commit({{account}, {issued.record}}); !s.ok()) return std::unexpected(s);
  ++next_token_id_;
  by_digest_.emplace(issued.record.sha256_hex,
                     Credential{issued.record.id, std::string(name)});
  tokens_.emplace(issued.record.id, issued.record);
  users_.emplace(std::string(name), AccountView{std::move(account), false});
  return issued;
}

bool AccountRegistry::IsEnabledAdmin(const AccountView& user) const {
  return user.account.admin && !user.account.disabled;
}

Result<UserAccount> AccountRegistry::SetDisabled(std::string_view name, bool disabled) {
  auto it = users_.find(name);
  if (it == users_.end()) return NotFound("no user " + std::string(name));
  AccountView& user = it->second;
  if (user.configured) {
    return FailedPrecondition(
        "user " + std::string(name) +
        " is configured (podsched.yaml users:, or the generated admin of var/admin.token) and "
        "cannot be " + (disabled ? "disabled" : "enabled") +
        " through the API; change the configuration and restart podsched");
  }
  if (user.account.disabled == disabled) return user.account;
  if (disabled && IsEnabledAdmin(user)) {
    const auto admins = std::count_if(users_.begin(), users_.end(), [this](const auto& kv) {
      return IsEnabledAdmin(kv.second);
    });
    if (admins <= 1) {
      return FailedPrecondition("user " + std::string(name) +
                                " is the last enabled admin; add another admin first");
    }
  }
  UserAccount changed = user.account;
  changed.disabled = disabled;
  if (Status s = Commit({{changed}, {}}); !s.ok()) return std::unexpected(s);
  user.account = changed;
  return changed;
}

Result<IssuedToken> AccountRegistry::CreateToken(std::string_view user, std::string_view label,
                                                 std::optional<Duration> lifetime,
                                                 const std::string& by, TimePoint now,
                                                 TokenId parent) {
  auto it = users_.find(user);
  if (it == users_.end()) return NotFound("no user " + std::string(user));
  if (it->second.account.disabled) {
    return FailedPrecondition("user " + std::string(user) +
                              " is disabled; enable it first (podctl admin user enable)");
  }
  if (label.size() > 64 || HasControlCharacters(label)) {
    return InvalidArgument("a token's label is at most 64 characters, without control characters");
  }
  if (lifetime && (*lifetime < kMinTokenLifetime || *lifetime > kMaxTokenLifetime)) {
    return InvalidArgument("a token's lifetime must be between 1 minute and 3650 days");
  }
  if (parent != TokenId()) {
    auto p = tokens_.find(parent);
    if (p == tokens_.end()) return NotFound("no token " + std::to_string(parent.value()));
    if (p->second.expires && (!lifetime || now + *lifetime > *p->second.expires)) {
      const auto left = std::chrono::duration_cast<std::chrono::seconds>(*p->second.expires - now);
      return InvalidArgument(
          "the token you are using expires at " + Rfc3339(*p->second.expires) +
          ": it can create only tokens that expire no later (expires_in_seconds at most " +
          std::to_string(std::max<int64_t>(left.count(), 0)) + ")");
    }
  }
  const auto active = std::count_if(tokens_.begin(), tokens_.end(), [&](const auto& kv) {
    return kv.second.user.value() == user && TokenState(kv.second, now) == "active";
  });
  if (static_cast<size_t>(active) >= kMaxActiveTokensPerUser) {
    return Error(StatusCode::kResourceExhausted,
                 "user " + std::string(user) + " has " + std::to_string(active) +
                     " active tokens, the most allowed; revoke some first");
  }
  IssuedToken issued;
  issued.secret = NewToken();
  issued.record = TokenRecord{TokenId(next_token_id_), UserName(std::string(user)),
                              std::string(label), Sha256Hex(issued.secret), now, UserName(by),
                              std::nullopt, std::nullopt, parent};
  if (lifetime) issued.record.expires = now + *lifetime;
  if (Status s = Commit({{}, {issued.record}}); !s.ok()) return std::unexpected(s);
  ++next_token_id_;
  by_digest_.emplace(issued.record.sha256_hex, Credential{issued.record.id, std::string(user)});
  tokens_.emplace(issued.record.id, issued.record);
  return issued;
}

Result<TokenRecord> AccountRegistry::Revoke(TokenId id, TimePoint now) {
  auto it = tokens_.find(id);
  if (it == tokens_.end()) return NotFound("no token " + std::to_string(id.value()));
  if (it->second.revoked) {
    return FailedPrecondition(Describe(it->second) + " was already revoked at " +
                              Rfc3339(*it->second.revoked));
  }
  // The token and its descendants; ids grow, so a child comes after its parent in tokens_.
  std::set<TokenId> gone = {id};
  core::AccountChange change;
  for (auto t = it; t != tokens_.end(); ++t) {
    if (t != it && !gone.contains(t->second.parent)) continue;
    gone.insert(t->first);
    if (t->second.revoked) continue;
    TokenRecord changed = t->second;
    changed.revoked = now;
    change.tokens.push_back(std::move(changed));
  }
  if (Status s = Commit(change); !s.ok()) return std::unexpected(s);
  for (TokenRecord& t : change.tokens) tokens_[t.id] = std::move(t);
  return tokens_.at(id);
}

std::vector<AccountView> AccountRegistry::Users() const {
  std::vector<AccountView> out;
  for (bool configured : {true, false}) {
    for (const auto& [name, user] : users_) {
      if (user.configured == configured) out.push_back(user);
    }
  }
  return out;
}

const AccountView* AccountRegistry::FindUser(std::string_view name) const {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : &it->second;
}

std::vector<TokenRecord> AccountRegistry::Tokens(const std::string* user) const {
  std::vector<TokenRecord> out;
  for (const auto& [id, t] : tokens_) {
    if (user == nullptr || t.user.value() == *user) out.push_back(t);
  }
  return out;
}

const TokenRecord* AccountRegistry::FindToken(TokenId id) const {
  auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : &it->second;
}

}  // namespace podsched::daemon
