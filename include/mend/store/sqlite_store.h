#pragma once

// OpenSqliteStore, the CheckpointStore in a SQLite file (<home>/mend.db; docs/store_schema.md),
// with this process's lease identity (LocalLeaseHolder) and the liveness probe of lease holders
// (ProcessAlive). The store is thread-safe and may be shared between processes.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/store/checkpoint_store.h"

namespace mend::store {

/// Where and how OpenSqliteStore opens the database.
struct SqliteStoreOptions {
  /// The database file; created with its tables on first open. Other modules may keep their own
  /// tables in the same file (docs/store_schema.md names ours).
  std::string path;
  /// How many checkpoints each run keeps (the newest ones); at least 1.
  int history_limit = 50;
  /// How long a statement waits for another process's write lock before failing (kUnavailable).
  std::chrono::milliseconds busy_timeout{5000};
  /// Group commit: writes that arrive while another batch commits are committed together, with
  /// one fsync; at most this many per transaction (at least 1). A write that fails is left out
  /// and the rest run again, so each write has its own outcome. A write still returns only after
  /// the COMMIT containing it succeeded.
  size_t max_write_batch = 256;
  /// Once a commit leaves the WAL with at least this many pages, a thread of the store copies the
  /// WAL into the database file (a passive checkpoint on a connection of its own), so no save waits
  /// for that copy and its fsync. Should the WAL still reach four times as many (the thread cannot
  /// keep up, or its checkpoints fail), the committing write checkpoints itself. 0: no thread;
  /// SQLite's automatic checkpoint at 1000 pages, inside the COMMIT that crosses it.
  int64_t wal_checkpoint_pages = 1000;
  /// This process's identity on this host. A lease whose holder has the same host and boot id as
  /// `local` but whose pid is not alive is free at once. Leave boot_id empty to never decide that.
  LeaseHolder local;
  /// Whether process `pid` on this host is alive. Default: kill(pid, 0) does not fail with ESRCH.
  std::function<bool(int64_t pid)> process_alive;
  /// The name of a registered SQLite VFS to open `path` through (include/mend/store/sqlite_vfs.h),
  /// for tests and the chaos harness, which cut power under the database file itself. Empty (the
  /// default): SQLite's own VFS on the real filesystem, with the file made private (0600).
  std::string vfs;
};

/// Opens (creating when missing) the SQLite checkpoint store at `options.path`: WAL mode,
/// synchronous=FULL (a Save is durable when it returns OK), foreign keys on. `clock` must outlive
/// the store; every time the store records or compares (leases, created_at) comes from it.
///
/// Errors: kFailedPrecondition when the database was written by a newer mend (schema N > M) or the
/// options are invalid; kInternal when SQLite cannot open or initialise the file; kUnavailable when
/// another process holds the database locked beyond busy_timeout.
///
/// The store is thread-safe and safe to share with other processes using the same file. Concurrent
/// writes are group-committed (docs/store_schema.md): one transaction and one WAL fsync for every
/// write queued meanwhile, each write still succeeding or failing on its own.
///
/// Destroying the store closes its connection. When it was the last connection to the file, SQLite
/// copies the WAL into the database and removes the -wal and -shm files, so the database file alone
/// then holds everything (what a backup or a size measurement wants).
Result<std::unique_ptr<CheckpointStore>> OpenSqliteStore(const SqliteStoreOptions& options,
                                                         Clock& clock);

/// This process's lease identity: id "<id_prefix>-<pid>@<host>" (or "pid-<pid>@<host>" when the
/// prefix is empty), host from gethostname, boot_id from /proc/sys/kernel/random/boot_id (empty
/// when unreadable), pid from getpid. Reads the system; call once at startup.
LeaseHolder LocalLeaseHolder(const std::string& id_prefix);

/// The default liveness probe: kill(pid, 0) succeeds or fails with anything but ESRCH. A zombie
/// (exited, not yet reaped) counts as alive.
bool ProcessAlive(int64_t pid);

}  // namespace mend::store
