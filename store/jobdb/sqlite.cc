#include "store/jobdb/sqlite.h"

#include "common/check.h"

namespace podsched::jobdb {
namespace {

Status ErrorOf(sqlite3* db, int code, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  message += " (";
  message += sqlite3_errstr(code);
  message += ")";
  return Status(StatusCodeOf(code), std::move(message));
}

}  // namespace

StatusCode StatusCodeOf(int sqlite_code) {
  switch (sqlite_code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return StatusCode::kUnavailable;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return StatusCode::kDataLoss;
    case SQLITE_FULL:
      return StatusCode::kResourceExhausted;
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
      return StatusCode::kUnavailable;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return StatusCode::kPermissionDenied;
    case SQLITE_CONSTRAINT:
      return StatusCode::kFailedPrecondition;
    default:
      return StatusCode::kInternal;
  }
}

// Binding errors are programming errors (wrong index, out of memory): they abort.
Statement& Statement::Bind(int index, int64_t value) {
  PODSCHED_CHECK(sqlite3_bind_int64(stmt_, index, value) == SQLITE_OK);
  return *this;
}
Statement& Statement::Bind(int index, double value) {
  PODSCHED_CHECK(sqlite3_bind_double(stmt_, index, value) == SQLITE_OK);
  return *this;
}
Statement& Statement::Bind(int index, std::string_view text) {
  PODSCHED_CHECK(sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                                     SQLITE_UTF8) == SQLITE_OK);
  return *this;
}
Statement& Statement::BindBlob(int index, std::string_view bytes) {
  PODSCHED_CHECK(sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT) ==
                 SQLITE_OK);
  return *this;
}
Statement& Statement::BindNull(int index) {
  PODSCHED_CHECK(sqlite3_bind_null(stmt_, index) == SQLITE_OK);
  return *this;
}

Result<bool> Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status error = ErrorOf(sqlite3_db_handle(stmt_), rc, "executing statement");
  Reset();
  return std::unexpected(std::move(error));
}

Status Statement::Run() {
  auto more = Step();
  if (!more) return more.error();
  Reset();
  return Status::Ok();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::Real(int column) const { return sqlite3_column_double(stmt_, column); }
std::string Statement::Text(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr) return {};
  return std::string(static_cast<const char*>(data), static_cast<size_t>(size));
}
std::optional<int64_t> Statement::OptInt(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& path, bool create) {
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status error = ErrorOf(db, rc, "opening job database " + path);
    sqlite3_close(db);
    return std::unexpected(std::move(error));
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<Connection>(new Connection(db, path));
}

Connection::~Connection() {
  cache_.clear();  // statements must be finalized before the connection closes
  sqlite3_close(db_);
}

Status Connection::Exec(std::string_view sql) {
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return LastError(path_);
  return Status::Ok();
}

Result<Statement*> Connection::Prepare(std::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it != cache_.end()) {
    it->second->Reset();
    return it->second.get();
  }
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return std::unexpected(LastError(path_));
  auto [pos, inserted] = cache_.emplace(std::string(sql), std::make_unique<Statement>(stmt));
  return pos->second.get();
}

Result<int64_t> Connection::QueryInt(std::string_view sql) {
  auto stmt = Prepare(sql);
  if (!stmt) return std::unexpected(stmt.error());
  auto row = (*stmt)->Step();
  if (!row) return std::unexpected(row.error());
  const int64_t value = *row ? (*stmt)->Int(0) : 0;
  (*stmt)->Reset();
  return value;
}

Result<std::string> Connection::QueryText(std::string_view sql) {
  auto stmt = Prepare(sql);
  if (!stmt) return std::unexpected(stmt.error());
  auto row = (*stmt)->Step();
  if (!row) return std::unexpected(row.error());
  std::string value = *row ? (*stmt)->Text(0) : std::string();
  (*stmt)->Reset();
  return value;
}

Status Connection::LastError(std::string_view what) const {
  return ErrorOf(db_, sqlite3_extended_errcode(db_), what);
}

}  // namespace podsched::jobdb
