// SqliteJobRepository's AccountRepository half: the accounts and api_tokens tables (schema v4,
// parent_id since v5).
#include "store/jobdb/sqlite_job_repository.h"

namespace podsched::jobdb {
namespace {

using core::TokenRecord;
using core::UserAccount;

int64_t Micros(TimePoint t) { return t.time_since_epoch().count(); }
TimePoint FromMicros(int64_t us) { return TimePoint(Duration(us)); }
std::optional<int64_t> OptMicros(const std::optional<TimePoint>& t) {
  if (!t) return std::nullopt;
  return Micros(*t);
}

constexpr std::string_view kPutAccount =
    "INSERT OR REPLACE INTO accounts (name, admin, disabled, unix_user, created_us, created_by) "
    "VALUES (?,?,?,?,?,?)";
constexpr std::string_view kLoadAccounts =
    "SELECT name, admin, disabled, unix_user, created_us, created_by FROM accounts ORDER BY name";
// An upsert by id only: OR REPLACE would also resolve a clash on UNIQUE(sha256) by deleting the
// other token's row.
constexpr std::string_view kPutToken =
    "INSERT INTO api_tokens (id, user, label, sha256, created_us, created_by, expires_us, "
    "revoked_us, parent_id) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
    "user = excluded.user, label = excluded.label, sha256 = excluded.sha256, "
    "created_us = excluded.created_us, created_by = excluded.created_by, "
    "expires_us = excluded.expires_us, revoked_us = excluded.revoked_us, "
    "parent_id = excluded.parent_id";
constexpr std::string_view kLoadTokens =
    "SELECT id, user, label, sha256, created_us, created_by, expires_us, revoked_us, parent_id "
    "FROM api_tokens ORDER BY id";

}  // namespace

Status SqliteJobRepository::WriteAccount(const UserAccount& a) {
  auto put = db_->Prepare(kPutAccount);
  if (!put) return put.error();
  (*put)
      ->Bind(1, a.name.value())
      .Bind(2, int64_t{a.admin})
      .Bind(3, int64_t{a.disabled})
      .Bind(4, a.unix_user)
      .Bind(5, Micros(a.created))
      .Bind(6, a.created_by.value());
  if (Status s = (*put)->Run(); !s.ok()) return s.WithContext("storing account " + a.name.value());
  return Status::Ok();
}

Status SqliteJobRepository::WriteToken(const TokenRecord& t) {
  auto put = db_->Prepare(kPutToken);
  if (!put) return put.error();
  (*put)
      ->Bind(1, t.id.value())
      .Bind(2, t.user.value())
      .Bind(3, t.label)
      .Bind(4, t.sha256_hex)
      .Bind(5, Micros(t.created))
      .Bind(6, t.created_by.value())
      .Bind(7, OptMicros(t.expires))
      .Bind(8, OptMicros(t.revoked))
      .Bind(9, t.parent.value());
  if (Status s = (*put)->Run(); !s.ok()) {
    return s.WithContext("storing token " + std::to_string(t.id.value()));
  }
  return Status::Ok();
}

Status SqliteJobRepository::CommitAccounts(const core::AccountChange& change) {
  Status status = db_->Exec("BEGIN IMMEDIATE");
  if (!status.ok()) return status.WithContext("starting an account commit");
  for (const UserAccount& a : change.users) {
    if (status = WriteAccount(a); !status.ok()) break;
  }
  for (const TokenRecord& t : change.tokens) {
    if (!status.ok()) break;
    status = WriteToken(t);
  }
  if (status.ok()) status = db_->Exec("COMMIT");
  if (!status.ok()) {
    (void)db_->Exec("ROLLBACK");
    return status.WithContext("committing accounts to the job database (nothing of it was stored)");
  }
  return Status::Ok();
}

Result<core::StoredAccounts> SqliteJobRepository::LoadAccounts() {
  core::StoredAccounts out;
  auto accounts = db_->Prepare(kLoadAccounts);
  if (!accounts) return std::unexpected(accounts.error());
  Status loaded = (*accounts)->ForEachRow([&out](const Statement& s) {
    UserAccount a;
    a.name = UserName(s.Text(0));
    a.admin = s.Int(1) != 0;
    a.disabled = s.Int(2) != 0;
    a.unix_user = s.Text(3);
    a.created = FromMicros(s.Int(4));
    a.created_by = UserName(s.Text(5));
    out.users.push_back(std::move(a));
    return Status::Ok();
  });
  if (!loaded.ok()) return std::unexpected(loaded.WithContext("loading accounts"));
  auto tokens = db_->Prepare(kLoadTokens);
  if (!tokens) return std::unexpected(tokens.error());
  loaded = (*tokens)->ForEachRow([&out](const Statement& s) {
    TokenRecord t;
    t.id = core::TokenId(s.Int(0));
    t.user = UserName(s.Text(1));
    t.label = s.Text(2);
    t.sha256_hex = s.Text(3);
    t.created = FromMicros(s.Int(4));
    t.created_by = UserName(s.Text(5));
    if (auto e = s.OptInt(6)) t.expires = FromMicros(*e);
    if (auto r = s.OptInt(7)) t.revoked = FromMicros(*r);
    t.parent = core::TokenId(s.Int(8));
    out.tokens.push_back(std::move(t));
    return Status::Ok();
  });
  if (!loaded.ok()) return std::unexpected(loaded.WithContext("loading API tokens"));
  return out;
}

}  // namespace podsched::jobdb
