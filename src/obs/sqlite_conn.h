#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "mend/base/result.h"

namespace mend::obs::internal {

// One use of a cached prepared statement: bind (1-based), then Step() or Run(). The destructor
// resets the statement and clears its bindings so the cache can hand it out again. Binding errors
// are remembered and reported by the next Step()/Run(). Move-only.
class SqliteStmt {
 public:
  SqliteStmt(sqlite3_stmt* stmt, sqlite3* db) : stmt_(stmt), db_(db) {}
  SqliteStmt(SqliteStmt&& other) noexcept;
  SqliteStmt& operator=(SqliteStmt&&) = delete;
  ~SqliteStmt();

  SqliteStmt& Bind(int index, int64_t value);
  SqliteStmt& BindDouble(int index, double value);
  SqliteStmt& BindText(int index, std::string_view value);
  // Binds without copying: `value` must stay alive and unchanged until this object is destroyed
  // (the statement is reset then). For the columns of the write path, bound once per span.
  SqliteStmt& BindTextRef(int index, std::string_view value);

  // True when a row is available, false when the statement is done.
  Result<bool> Step();
  Status Run();

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const;

 private:
  SqliteStmt& Check(int rc);

  sqlite3_stmt* stmt_;
  sqlite3* db_;
  int bind_error_ = SQLITE_OK;
};

// A SQLite connection with a cache of prepared statements. Not thread-safe: SpanStore serialises
// every use.
class SqliteConn {
 public:
  // kExisting opens an existing file read-write without creating it: a reader that, closing the
  // last connection, removes the -wal and -shm files as a writer does (a read-only connection
  // leaves them behind).
  enum class Access { kReadWrite, kReadOnly, kExisting };

  // Opens `path` (creating it with kReadWrite) through the VFS named `vfs` ("" = default).
  static Result<std::unique_ptr<SqliteConn>> Open(const std::string& path, Access access,
                                                  const std::string& vfs);
  ~SqliteConn();
  SqliteConn(const SqliteConn&) = delete;
  SqliteConn& operator=(const SqliteConn&) = delete;

  Status Exec(const char* sql);
  // `sql` must have static storage duration: its address is the cache key.
  Result<SqliteStmt> Prepare(const char* sql);
  // The single integer a pragma or query returns.
  Result<int64_t> QueryInt(const char* sql);
  // Runs `body` in a write transaction (BEGIN IMMEDIATE): COMMIT when it returns OK, else
  // ROLLBACK.
  Status InWriteTransaction(const std::function<Status()>& body);
  int64_t Changes() const { return sqlite3_changes64(db_); }

 private:
  explicit SqliteConn(sqlite3* db) : db_(db) {}

  sqlite3* db_;
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
};

// Maps a SQLite result code to a Status: BUSY/LOCKED → kUnavailable, FULL → kResourceExhausted,
// CORRUPT/NOTADB → kDataLoss, anything else → kInternal; the message has SQLite's text.
Status SqliteError(sqlite3* db, int rc, std::string_view context);

}  // namespace mend::obs::internal
