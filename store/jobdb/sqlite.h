// Thin RAII adapter over the SQLite C API: a connection with a cache of prepared statements,
// statements with typed binds and reads, and an error path that turns SQLite result codes into
// Status. Everything that reaches SQL as a value is bound, never spliced into the SQL text.
//
// Thread safety: a Connection and its statements belong to one thread at a time (connections are
// opened with SQLITE_OPEN_NOMUTEX, and the statement cache is not locked either).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"

namespace podsched::jobdb {

// A prepared statement. Bind indexes start at 1 (SQLite's convention); column indexes at 0.
class Statement {
 public:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view text);
  Statement& BindBlob(int index, std::string_view bytes);
  Statement& BindNull(int index);
  template <typename T>
  Statement& Bind(int index, const std::optional<T>& value) {
    return value ? Bind(index, *value) : BindNull(index);
  }

  // Advances: true when a row is ready, false when done; an error otherwise.
  Result<bool> Step();
  // Steps to completion (for statements that return no rows) and resets.
  Status Run();
  // Clears bindings and rewinds so the cached statement can be reused.
  void Reset();

  bool IsNull(int column) const;
  int64_t Int(int column) const;
  double Real(int column) const;
  std::string Text(int column) const;  // bytes of a TEXT or BLOB column
  std::optional<int64_t> OptInt(int column) const;

  // Steps through every row, calling `on_row(const Statement&) -> Status` for each; stops at the
  // first error. The statement is reset afterwards in every case.
  template <typename F>
  Status ForEachRow(F&& on_row) {
    Status status;
    for (;;) {
      auto row = Step();
      if (!row) return row.error();  // Step already reset
      if (!*row) break;
      status = on_row(static_cast<const Statement&>(*this));
      if (!status.ok()) break;
    }
    Reset();
    return status;
  }

 private:
  sqlite3_stmt* stmt_;
};

class Connection {
 public:
  // Opens (creating if missing) the database file at `path`. Errors name the path.
  static Result<std::unique_ptr<Connection>> Open(const std::string& path, bool create = true);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs SQL text with no parameters (schema, PRAGMA, BEGIN/COMMIT).
  Status Exec(std::string_view sql);
  // A cached prepared statement for `sql`, reset and ready to bind. The reference stays valid for
  // the connection's lifetime; it is reset on the next Prepare of the same SQL.
  Result<Statement*> Prepare(std::string_view sql);
  // Single integer or text result of a query without parameters ("PRAGMA user_version").
  Result<int64_t> QueryInt(std::string_view sql);
  Result<std::string> QueryText(std::string_view sql);

  // The connection's last error as a Status ("<what>: <sqlite message> (<code name>)").
  Status LastError(std::string_view what) const;
  const std::string& path() const { return path_; }
  sqlite3* raw() { return db_; }

 private:
  Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

// Maps an SQLite result code to a Status code: busy/locked -> kUnavailable, corrupt/notadb ->
// kDataLoss, full/ioerr -> kResourceExhausted/kUnavailable, others -> kInternal.
StatusCode StatusCodeOf(int sqlite_code);

}  // namespace podsched::jobdb
