// Reading schema versions without touching the stores (mend migrate reports them before it
// migrates anything). Both backends keep versions as text in `meta (key, value)`.
#include "mend/db/schema_read.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <memory>
#include <optional>
#include <string>

#include "mend/db/pg_conn.h"
#include "mend/db/sqlite.h"

namespace mend::db {
namespace {

constexpr int kBusyTimeoutMs = 5000;
constexpr char kSqliteHasMeta[] =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'";
constexpr char kSqliteSelectValue[] = "SELECT value FROM meta WHERE key = ?1";

Result<int64_t> ParseVersion(const std::string& text, const std::string& where,
                             std::string_view key) {
  int64_t version = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (ec != std::errc() || end != text.data() + text.size() || version < 1) {
    return DataLossError(where + ": unreadable " + std::string(key) + " '" + text + "'");
  }
  return version;
}

using SqliteHandle = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;

// The single row of `sql` (bound to `key` when given) as text; nullopt when there is no row.
Result<std::optional<std::string>> QueryText(sqlite3* db, const char* sql, std::string_view key,
                                             const std::string& path) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &raw, nullptr);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw, &sqlite3_finalize);
  if (rc != SQLITE_OK) return SqliteError(db, rc, path);
  if (!key.empty()) {
    rc = sqlite3_bind_text64(raw, 1, key.data(), key.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    if (rc != SQLITE_OK) return SqliteError(db, rc, path);
  }
  rc = sqlite3_step(raw);
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return SqliteError(db, rc, path);
  const unsigned char* text = sqlite3_column_text(raw, 0);
  return std::optional<std::string>(text == nullptr ? "" : reinterpret_cast<const char*>(text));
}

}  // namespace

Result<int64_t> ReadSqliteMetaVersion(const std::string& path, std::string_view key) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return 0;
    return ErrnoToStatus(errno, "stat " + path);
  }
  sqlite3* raw = nullptr;
  // Read-write without creating: only a SELECT runs, and closing the file's last connection then
  // removes the -wal and -shm files as the stores do (a read-only connection leaves them behind).
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
  SqliteHandle db(raw, &sqlite3_close_v2);
  if (rc != SQLITE_OK) return SqliteError(raw, rc, "open " + path);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> has_meta,
                        QueryText(raw, kSqliteHasMeta, "", path));
  if (!has_meta.has_value() || *has_meta == "0") return 0;
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> value,
                        QueryText(raw, kSqliteSelectValue, key, path));
  if (!value.has_value()) return 0;
  return ParseVersion(*value, path, key);
}

Result<int64_t> ReadPostgresMetaVersion(const std::string& url, const std::string& schema,
                                        Duration connect_timeout, std::string_view key,
                                        const std::string& meta_table) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<PgConn> conn, PgConn::Connect(url, connect_timeout));
  const std::string table = schema.empty()
                                ? QuoteIdentifier(meta_table)
                                : QuoteIdentifier(schema) + "." + QuoteIdentifier(meta_table);
  MEND_ASSIGN_OR_RETURN(PgResult exists,
                        conn->Exec("SELECT to_regclass($1) IS NOT NULL", {PgParam::Text(table)}));
  if (exists.rows() == 0 || exists.Text(0, 0) != "t") return 0;
  const std::string select = "SELECT value FROM " + table + " WHERE key = $1";
  MEND_ASSIGN_OR_RETURN(PgResult value, conn->Exec(select.c_str(), {PgParam::Text(key)}));
  if (value.rows() == 0) return 0;
  const std::string where =
      MaskPostgresUrl(url) + (schema.empty() ? "" : " (schema " + schema + ")");
  return ParseVersion(value.Text(0, 0), where, key);
}

}  // namespace mend::db
