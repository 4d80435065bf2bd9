#include "mend/db/sqlite.h"

#include <cerrno>
#include <string>
#include <utility>

#include "mend/base/file_system.h"

namespace mend::db {
namespace {

// A database holds prompts, tool output and possibly secrets, so it is private to its user.
Status MakePrivate(const std::string& path) {
  if (path.empty() || path == ":memory:") return OkStatus();
  return PosixFileSystem::MakePrivateFile(path);
}

}  // namespace

Status SqliteError(sqlite3* db, int rc, std::string_view context) {
  std::string message = std::string(context) + ": " + sqlite3_errstr(rc);
  // errcode() is the primary code on a connection without extended codes (before they are
  // switched on, or one that never does), extended_errcode() the extended one.
  if (db != nullptr && (sqlite3_errcode(db) == rc || sqlite3_extended_errcode(db) == rc)) {
    message += " (" + std::string(sqlite3_errmsg(db)) + ")";
  }
  // SQLite reports some writes a full disk refused as I/O errors (growing the WAL index, say); the
  // errno it saw tells them apart.
  const int system_errno = db != nullptr ? sqlite3_system_errno(db) : 0;
  const bool disk_full =
      (rc & 0xff) == SQLITE_FULL ||
      ((rc & 0xff) == SQLITE_IOERR && (system_errno == ENOSPC || system_errno == EDQUOT));
  switch (disk_full ? SQLITE_FULL : rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return UnavailableError(message);
    case SQLITE_FULL: {
      // SQLite's own words ("database or disk is full") leave the user to guess which.
      std::string where;
      if (db != nullptr) {
        const char* file = sqlite3_db_filename(db, "main");
        if (file != nullptr && *file != '\0') where = std::string(" holding ") + file;
      }
      return ResourceExhaustedError(std::string(context) + ": the disk" + where +
                                    " is full (SQLite: " + sqlite3_errstr(rc) + ")");
    }
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DataLossError(message);
    default:
      return InternalError(message);
  }
}

SqliteStmt::SqliteStmt(SqliteStmt&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), db_(other.db_), bind_error_(other.bind_error_) {}

SqliteStmt::~SqliteStmt() {
  if (stmt_ == nullptr) return;
  // reset() repeats the last step's error code; that error was reported already.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

SqliteStmt& SqliteStmt::Check(int rc) {
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

SqliteStmt& SqliteStmt::Bind(int index, int64_t value) {
  return Check(sqlite3_bind_int64(stmt_, index, value));
}

SqliteStmt& SqliteStmt::BindText(int index, std::string_view value) {
  return Check(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}

SqliteStmt& SqliteStmt::BindTextRef(int index, std::string_view value) {
  return Check(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8));
}

SqliteStmt& SqliteStmt::BindBlob(int index, std::string_view value) {
  // A zero-length blob must still be a BLOB, not NULL: SQLite binds NULL for a null pointer.
  static const char kEmpty = 0;
  const char* data = value.empty() ? &kEmpty : value.data();
  return Check(sqlite3_bind_blob64(stmt_, index, data, value.size(), SQLITE_TRANSIENT));
}

SqliteStmt& SqliteStmt::BindDouble(int index, double value) {
  return Check(sqlite3_bind_double(stmt_, index, value));
}

SqliteStmt& SqliteStmt::BindNull(int index) { return Check(sqlite3_bind_null(stmt_, index)); }

Result<bool> SqliteStmt::Step() {
  if (bind_error_ != SQLITE_OK) return SqliteError(db_, bind_error_, "bind");
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, sqlite3_sql(stmt_));
}

Status SqliteStmt::Run() {
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return OkStatus();
  }
}

std::string SqliteStmt::Text(int col) const {
  const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
  int size = sqlite3_column_bytes(stmt_, col);
  return data == nullptr ? std::string() : std::string(data, static_cast<size_t>(size));
}

std::string SqliteStmt::Blob(int col) const { return Text(col); }

Result<std::unique_ptr<SqliteConn>> SqliteConn::Open(const std::string& path,
                                                     const SqliteOptions& options) {
  using Access = SqliteOptions::Access;
  // A file behind a VFS of its own is not on this machine's file system: that VFS creates it.
  const bool local_file =
      options.vfs.empty() || options.vfs_files == SqliteOptions::VfsFiles::kLocalDisk;
  if (options.access == Access::kCreate && local_file) MEND_RETURN_IF_ERROR(MakePrivate(path));
  int flags = SQLITE_OPEN_NOMUTEX;
  switch (options.access) {
    case Access::kCreate:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
    case Access::kReadOnly:
      flags |= SQLITE_OPEN_READONLY;
      break;
    case Access::kExisting:
      flags |= SQLITE_OPEN_READWRITE;
      break;
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags,
                                 options.vfs.empty() ? nullptr : options.vfs.c_str());
  if (rc != SQLITE_OK) {
    Status s = SqliteError(db, rc, "open " + path);
    sqlite3_close_v2(db);
    return s;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, static_cast<int>(options.busy_timeout.count()));
  return std::unique_ptr<SqliteConn>(new SqliteConn(db));
}

SqliteConn::~SqliteConn() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

void SqliteConn::SetWalHook(std::function<void(int64_t wal_pages)> hook) {
  wal_hook_ = std::move(hook);
  if (!wal_hook_) {
    sqlite3_wal_autocheckpoint(db_, 1000);
    return;
  }
  sqlite3_wal_hook(
      db_,
      [](void* self, sqlite3*, const char*, int pages) {
        static_cast<SqliteConn*>(self)->wal_hook_(pages);
        return SQLITE_OK;
      },
      this);
}

Status SqliteConn::Exec(const char* sql) {
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, sql);
  return OkStatus();
}

Result<SqliteStmt> SqliteConn::Prepare(const char* sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return SqliteStmt(it->second, db_);
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, std::string("prepare ") + sql);
  cache_.emplace(sql, stmt);
  return SqliteStmt(stmt, db_);
}

Status SqliteConn::InTransaction(TxKind kind, const std::function<Status()>& body) {
  MEND_RETURN_IF_ERROR(Exec(kind == TxKind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN"));
  Status s = body();
  if (s.ok()) {
    s = Exec("COMMIT");
    if (s.ok()) return s;
  }
  // A failed COMMIT or statement may already have rolled back; ROLLBACK then reports "no
  // transaction is active", which changes nothing.
  Exec("ROLLBACK").IgnoreError();
  return s;
}

Result<int64_t> SqliteConn::QueryInt(const char* sql) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, Prepare(sql));
  MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return InternalError(std::string("no row from ") + sql);
  return stmt.Int(0);
}

Status SqliteConn::ErrorStatus(int rc, std::string_view context) const {
  return SqliteError(db_, rc, context);
}

}  // namespace mend::db
