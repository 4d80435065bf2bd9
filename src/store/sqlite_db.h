#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "mend/base/result.h"

namespace mend::store::internal {

// One use of a cached prepared statement. Bind the parameters (1-based), then Step() or Run().
// The destructor resets the statement and clears its bindings so the cache can hand it out again.
// Binding errors are remembered and reported by the next Step()/Run(). Move-only.
class SqliteStmt {
 public:
  SqliteStmt(sqlite3_stmt* stmt, sqlite3* db) : stmt_(stmt), db_(db) {}
  SqliteStmt(SqliteStmt&& other) noexcept;
  SqliteStmt& operator=(SqliteStmt&&) = delete;
  ~SqliteStmt();

  SqliteStmt& Bind(int index, int64_t value);
  SqliteStmt& BindText(int index, std::string_view value);
  SqliteStmt& BindBlob(int index, std::string_view value);
  SqliteStmt& BindDouble(int index, double value);
  SqliteStmt& BindNull(int index);

  // True when a row is available, false when the statement is done.
  Result<bool> Step();
  // Steps to completion, ignoring any rows.
  Status Run();

  int ColumnType(int col) const { return sqlite3_column_type(stmt_, col); }
  bool IsNull(int col) const { return ColumnType(col) == SQLITE_NULL; }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const;  // TEXT or BLOB bytes as they are stored
  std::string Blob(int col) const;

 private:
  SqliteStmt& Check(int rc);

  sqlite3_stmt* stmt_;
  sqlite3* db_;
  int bind_error_ = SQLITE_OK;
};

// A SQLite connection with a cache of prepared statements. Not thread-safe: the owner serialises
// every use (the store holds a mutex around it).
class SqliteDb {
 public:
  enum class TxKind { kRead, kWrite };  // BEGIN DEFERRED / BEGIN IMMEDIATE

  // Opens or creates `path` with `busy_timeout` applied to lock waits, through the registered VFS
  // named `vfs` (empty: SQLite's default, and the file is made private to its user).
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path,
                                                std::chrono::milliseconds busy_timeout,
                                                const std::string& vfs = "");
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more statements that return no rows needed by the caller.
  Status Exec(const char* sql);
  // A statement from the cache, prepared on first use. `sql` must be a string with static storage
  // duration: its address is the cache key.
  Result<SqliteStmt> Prepare(const char* sql);
  // Runs `body` inside a transaction: COMMIT when it returns OK, ROLLBACK otherwise.
  Status InTransaction(TxKind kind, const std::function<Status()>& body);

  // Whether a transaction is open. SQLite rolls a whole transaction back on some errors (a full
  // disk, an I/O error); a caller running several writes in one transaction checks this.
  // Rows changed by the last INSERT, UPDATE or DELETE of this connection.
  int64_t Changes() const { return sqlite3_changes64(db_); }

  bool TransactionActive() const { return sqlite3_get_autocommit(db_) == 0; }

  // Maps a SQLite result code to a Status: BUSY/LOCKED → kUnavailable, FULL → kResourceExhausted,
  // CORRUPT/NOTADB → kDataLoss, anything else → kInternal.
  Status ErrorStatus(int rc, std::string_view context) const;

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}

  sqlite3* db_;
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
};

// Maps a result code of `db` to a Status, with SQLite's message for the connection.
Status SqliteError(sqlite3* db, int rc, std::string_view context);

}  // namespace mend::store::internal
