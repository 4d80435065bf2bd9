#pragma once

// The one SQLite connection of mend's stores (runs, observe.db, long-term memory): a cache of
// prepared statements, result codes mapped to Status, lock waits bounded by a busy timeout, files
// private to their user, and a VFS chosen by name so tests can put faults below SQLite. SqliteConn
// is not thread-safe: its owner serialises every use.

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "mend/base/result.h"

namespace mend::db {

/// One use of a cached prepared statement. Bind the parameters (1-based), then Step() or Run().
/// The destructor resets the statement and clears its bindings so the cache can hand it out again.
/// Binding errors are remembered and reported by the next Step()/Run(). Move-only.
class SqliteStmt {
 public:
  /// A use of `stmt` of connection `db` (SqliteConn::Prepare makes them).
  SqliteStmt(sqlite3_stmt* stmt, sqlite3* db) : stmt_(stmt), db_(db) {}
  /// Moves the use; `other` then resets nothing.
  SqliteStmt(SqliteStmt&& other) noexcept;
  SqliteStmt& operator=(SqliteStmt&&) = delete;
  ~SqliteStmt();

  ///@{
  /// Binds parameter `index` (1-based); returns the statement for chaining.
  SqliteStmt& Bind(int index, int64_t value);
  SqliteStmt& BindText(int index, std::string_view value);
  ///@}
  /// Binds without copying: `value` must stay alive and unchanged until this object is destroyed
  /// (the statement is reset then). For columns bound once per row of a batch.
  SqliteStmt& BindTextRef(int index, std::string_view value);
  ///@{
  /// Binds parameter `index` (1-based); returns the statement for chaining.
  SqliteStmt& BindBlob(int index, std::string_view value);
  SqliteStmt& BindDouble(int index, double value);
  SqliteStmt& BindNull(int index);
  ///@}

  /// True when a row is available, false when the statement is done.
  Result<bool> Step();
  /// Steps to completion, ignoring any rows.
  Status Run();

  /// The column's SQLITE_* type in the current row.
  int ColumnType(int col) const { return sqlite3_column_type(stmt_, col); }
  /// Whether the value is NULL.
  bool IsNull(int col) const { return ColumnType(col) == SQLITE_NULL; }
  /// The value as an integer.
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  /// The value as a double.
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const;  ///< TEXT or BLOB bytes as they are stored
  /// The bytes of a BLOB.
  std::string Blob(int col) const;

 private:
  SqliteStmt& Check(int rc);

  sqlite3_stmt* stmt_;
  sqlite3* db_;
  int bind_error_ = SQLITE_OK;
};

/// How SqliteConn::Open opens a database.
struct SqliteOptions {
  /// What the connection may do to the file.
  enum class Access {
    kCreate,    ///< read-write, creating the file when it is missing
    kReadOnly,  ///< read-only; leaves the -wal and -shm files behind when it closes
    /// Read-write without creating the file: a reader that, closing the file's last connection,
    /// removes the -wal and -shm files as a writer does.
    kExisting,
  };
  /// Where the files of a named VFS live. kElsewhere: the VFS creates them itself (SqliteVfs over a
  /// mend FileSystem), nothing is done on this machine's file system. kLocalDisk: the VFS wraps
  /// SQLite's default one, so the database is made private as with the default VFS.
  enum class VfsFiles { kElsewhere, kLocalDisk };

  Access access = Access::kCreate;  ///< what the connection may do
  /// How long a statement waits for a lock another connection holds before it fails with
  /// kUnavailable.
  std::chrono::milliseconds busy_timeout{5000};
  std::string vfs;  ///< the name of a registered SQLite VFS; empty: SQLite's default
  VfsFiles vfs_files = VfsFiles::kElsewhere;  ///< where the files of `vfs` live
};

/// A SQLite connection with a cache of prepared statements. Not thread-safe: the owner serialises
/// every use (the stores hold a mutex around it).
class SqliteConn {
 public:
  /// The kind of transaction InTransaction begins.
  enum class TxKind { kRead, kWrite };  ///< BEGIN DEFERRED / BEGIN IMMEDIATE

  /// Opens `path` as `options` say. A database holds prompts, tool output and possibly secrets:
  /// with Access::kCreate on this machine's file system the file is created 0600 (or narrowed to
  /// 0600) before SQLite opens it, so the -wal and -shm files SQLite creates beside it take that
  /// mode too. Errors: those of SqliteError, and of making the file private.
  static Result<std::unique_ptr<SqliteConn>> Open(const std::string& path,
                                                  const SqliteOptions& options);
  ~SqliteConn();
  SqliteConn(const SqliteConn&) = delete;
  SqliteConn& operator=(const SqliteConn&) = delete;

  /// Runs one or more statements that return no rows needed by the caller.
  Status Exec(const char* sql);
  /// A statement from the cache, prepared on first use. `sql` must be a string with static storage
  /// duration: its address is the cache key.
  Result<SqliteStmt> Prepare(const char* sql);
  /// The single integer a pragma or query returns; kInternal when it returns no row.
  Result<int64_t> QueryInt(const char* sql);
  /// Runs `body` inside a transaction: COMMIT when it returns OK, ROLLBACK otherwise.
  Status InTransaction(TxKind kind, const std::function<Status()>& body);

  /// Rows changed by the last INSERT, UPDATE or DELETE of this connection.
  int64_t Changes() const { return sqlite3_changes64(db_); }
  /// Whether a transaction is open. SQLite rolls a whole transaction back on some errors (a full
  /// disk, an I/O error); a caller running several writes in one transaction checks this.
  bool TransactionActive() const { return sqlite3_get_autocommit(db_) == 0; }

  /// SqliteError for this connection.
  Status ErrorStatus(int rc, std::string_view context) const;

  /// Calls `hook` after every commit of this connection in WAL mode, with the number of pages the
  /// WAL file then holds, on the committing thread (inside the COMMIT). It replaces SQLite's
  /// automatic checkpoint on this connection: whoever sets a hook copies the WAL into the database
  /// file itself (e.g. `PRAGMA wal_checkpoint` on another connection). An empty `hook` restores
  /// the automatic checkpoint at SQLite's default of 1000 pages.
  void SetWalHook(std::function<void(int64_t wal_pages)> hook);

 private:
  explicit SqliteConn(sqlite3* db) : db_(db) {}

  sqlite3* db_;
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
  std::function<void(int64_t)> wal_hook_;
};

/// Maps a result code of `db` (primary or extended) to a Status: BUSY/LOCKED → kUnavailable,
/// FULL → kResourceExhausted, CORRUPT/NOTADB → kDataLoss, anything else → kInternal. The message
/// is `context`, SQLite's text for the code and, when `db` reported that code last, its message.
Status SqliteError(sqlite3* db, int rc, std::string_view context);

}  // namespace mend::db
