#include "obs/sqlite_conn.h"

#include <utility>

namespace mend::obs::internal {

Status SqliteError(sqlite3* db, int rc, std::string_view context) {
  std::string message = std::string(context) + ": " + sqlite3_errstr(rc);
  if (db != nullptr && sqlite3_extended_errcode(db) == rc) {
    message += " (" + std::string(sqlite3_errmsg(db)) + ")";
  }
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return UnavailableError(message);
    case SQLITE_FULL:
      return ResourceExhaustedError(message);
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
  // reset() repeats the last step's error, which was reported already.
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

SqliteStmt& SqliteStmt::BindDouble(int index, double value) {
  return Check(sqlite3_bind_double(stmt_, index, value));
}

SqliteStmt& SqliteStmt::BindText(int index, std::string_view value) {
  return Check(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}

SqliteStmt& SqliteStmt::BindTextRef(int index, std::string_view value) {
  return Check(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8));
}

Result<bool> SqliteStmt::Step() {
  if (bind_error_ != SQLITE_OK) return SqliteError(db_, bind_error_, "bind");
  const int rc = sqlite3_step(stmt_);
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
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  const int size = sqlite3_column_bytes(stmt_, col);
  return data == nullptr ? std::string() : std::string(data, static_cast<size_t>(size));
}

Result<std::unique_ptr<SqliteConn>> SqliteConn::Open(const std::string& path, Access access,
                                                     const std::string& vfs) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX;
  switch (access) {
    case Access::kReadWrite:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
    case Access::kReadOnly:
      flags |= SQLITE_OPEN_READONLY;
      break;
    case Access::kExisting:
      flags |= SQLITE_OPEN_READWRITE;
      break;
  }
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, vfs.empty() ? nullptr : vfs.c_str());
  if (rc != SQLITE_OK) {
    Status s = SqliteError(db, rc, "open " + path);
    sqlite3_close_v2(db);
    return s;
  }
  sqlite3_extended_result_codes(db, 1);
  // A reader and the writer of another process take turns on the file for at most this long.
  sqlite3_busy_timeout(db, 5000);
  return std::unique_ptr<SqliteConn>(new SqliteConn(db));
}

SqliteConn::~SqliteConn() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

Status SqliteConn::Exec(const char* sql) {
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, sql);
  return OkStatus();
}

Result<SqliteStmt> SqliteConn::Prepare(const char* sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return SqliteStmt(it->second, db_);
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, std::string("prepare ") + sql);
  cache_.emplace(sql, stmt);
  return SqliteStmt(stmt, db_);
}

Status SqliteConn::InWriteTransaction(const std::function<Status()>& body) {
  MEND_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status s = body();
  if (s.ok()) {
    s = Exec("COMMIT");
    if (s.ok()) return s;
  }
  // SQLite may have rolled back already (an I/O error, a full disk); ROLLBACK then fails with
  // "no transaction is active" and changes nothing.
  Exec("ROLLBACK").IgnoreError();
  return s;
}

Result<int64_t> SqliteConn::QueryInt(const char* sql) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, Prepare(sql));
  MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return InternalError(std::string("no row from ") + sql);
  return stmt.Int(0);
}

}  // namespace mend::obs::internal
