#pragma once

// A consistent copy of a live SQLite database, taken with SQLite's online backup API while other
// connections, in this or other processes, keep reading and writing it (`mend backup`).

#include <chrono>
#include <string>

#include "mend/base/result.h"

namespace mend::db {

/// How BackupSqliteDatabase waits for locks.
struct SqliteBackupOptions {
  /// How long the copy waits for a lock another connection holds (a checkpoint, a rollback-journal
  /// writer) before it fails with kUnavailable. A writer of a WAL database never blocks it.
  std::chrono::milliseconds busy_timeout{5000};
};

/// Copies the database `source` to the new file `dest`. The copy is the database as of one
/// committed transaction: it is read in a single read transaction, so a transaction another
/// connection has open and not committed is not in it, and writes that commit while it runs do not
/// restart or tear it. `source` is opened read-write without being created (only read; its -wal and
/// -shm files are removed when this was its last connection, as the stores do). `dest` is created
/// with mode 0600 before SQLite writes it and checked with `PRAGMA quick_check` when the copy is
/// done; it keeps the source's journal mode. Blocking; thread-safe (each call has its own
/// connections).
///
/// Errors: kNotFound when `source` does not exist; kAlreadyExists when `dest` does; kUnavailable
/// when a lock stays held beyond the busy timeout; kDataLoss when the source is not a database or
/// the copy fails its check; kResourceExhausted for a full disk; kInternal for other SQLite errors.
/// On an error a partly written `dest` is removed (best effort).
Status BackupSqliteDatabase(const std::string& source, const std::string& dest,
                            const SqliteBackupOptions& options = {});

}  // namespace mend::db
