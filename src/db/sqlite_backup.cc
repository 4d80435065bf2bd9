// The online backup of one SQLite database. The whole copy is one sqlite3_backup_step(-1): one
// read transaction from the first page to the last. Stepping a few pages at a time would let other
// connections write in between, and SQLite restarts a backup whose source changed under another
// connection, so a busy database could keep a stepwise copy from ever finishing; in WAL mode a
// long read transaction blocks no writer, it only keeps the WAL from being checkpointed past it.
#include "mend/db/sqlite_backup.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>

#include "mend/base/file_system.h"
#include "mend/db/sqlite.h"

namespace mend::db {
namespace {

using SqliteHandle = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;

Result<SqliteHandle> OpenHandle(const std::string& path, int flags,
                                std::chrono::milliseconds busy_timeout) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  SqliteHandle db(raw, &sqlite3_close_v2);
  if (rc != SQLITE_OK) return SqliteError(raw, rc, "open " + path);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, static_cast<int>(busy_timeout.count()));
  return db;
}

Status CheckCopy(sqlite3* db, const std::string& dest) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &raw, nullptr);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw, &sqlite3_finalize);
  if (rc != SQLITE_OK) return SqliteError(db, rc, "check " + dest);
  rc = sqlite3_step(raw);
  if (rc != SQLITE_ROW) return SqliteError(db, rc, "check " + dest);
  const unsigned char* text = sqlite3_column_text(raw, 0);
  const std::string verdict = text == nullptr ? "" : reinterpret_cast<const char*>(text);
  if (verdict != "ok") return DataLossError("the copy " + dest + " fails its check: " + verdict);
  return OkStatus();
}

Status Copy(const std::string& source, const std::string& dest,
            const SqliteBackupOptions& options) {
  MEND_ASSIGN_OR_RETURN(SqliteHandle from,
                        OpenHandle(source, SQLITE_OPEN_READWRITE, options.busy_timeout));
  // The copy holds what the source holds: it is private before SQLite writes a byte of it.
  MEND_RETURN_IF_ERROR(PosixFileSystem::MakePrivateFile(dest));
  MEND_ASSIGN_OR_RETURN(SqliteHandle to,
                        OpenHandle(dest, SQLITE_OPEN_READWRITE, options.busy_timeout));
  sqlite3_backup* backup = sqlite3_backup_init(to.get(), "main", from.get(), "main");
  if (backup == nullptr) {
    return SqliteError(to.get(), sqlite3_errcode(to.get()), "back up " + source);
  }
  const int step = sqlite3_backup_step(backup, -1);
  // finish() reports the first error of the backup, or OK; it also frees the object.
  const int finish = sqlite3_backup_finish(backup);
  if (step != SQLITE_DONE) {
    const int rc = step == SQLITE_OK ? SQLITE_INTERNAL : step;
    return SqliteError(from.get(), rc, "back up " + source + " to " + dest);
  }
  if (finish != SQLITE_OK)
    return SqliteError(to.get(), finish, "back up " + source + " to " + dest);
  return CheckCopy(to.get(), dest);
}

}  // namespace

Status BackupSqliteDatabase(const std::string& source, const std::string& dest,
                            const SqliteBackupOptions& options) {
  struct stat st;
  if (::stat(source.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFoundError("no database at " + source);
    return ErrnoToStatus(errno, "stat " + source);
  }
  if (::lstat(dest.c_str(), &st) == 0) return AlreadyExistsError(dest + " already exists");
  Status copied = Copy(source, dest, options);
  if (!copied.ok()) {
    // A copy that failed halfway is no backup; its -journal goes with it.
    ::unlink(dest.c_str());
    ::unlink((dest + "-journal").c_str());
    ::unlink((dest + "-wal").c_str());
    ::unlink((dest + "-shm").c_str());
  }
  return copied;
}

}  // namespace mend::db
