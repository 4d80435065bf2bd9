#pragma once

// OpenPostgresStore, the CheckpointStore on PostgreSQL, shared by processes and hosts
// (docs/store_schema.md, "PostgreSQL"), and the store.url helpers IsPostgresUrl and
// MaskPostgresUrl. The store is thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/store/checkpoint_store.h"

namespace mend::db {
class PgBudget;
}  // namespace mend::db

namespace mend::store {

/// Where and how OpenPostgresStore connects.
struct PostgresStoreOptions {
  /// A libpq connection URI or keyword/value string, e.g.
  /// "postgres://mend:secret@db.example:5432/mend". The password never appears in an error.
  std::string url;
  /// The schema that holds the store's tables, created when missing; empty: the connection's
  /// default (normally `public`). Several stores can share one database in different schemas.
  std::string schema;
  /// How many checkpoints each run keeps (the newest ones); at least 1.
  size_t history_limit = 50;
  /// How long opening one connection may take, rounded up to whole seconds (libpq waits at least
  /// 2 s); the URL's own connect_timeout wins when set.
  Duration connect_timeout = std::chrono::seconds(5);
  /// At most this many connections, opened on demand; at least 1. Operations beyond it wait.
  int pool_size = 4;
  /// The connections this process may hold to the database, shared with its other pools
  /// (db::PgBudget, `postgres.max_connections`); null: only pool_size bounds this pool.
  std::shared_ptr<db::PgBudget> connections;
  /// Group commit: saves that arrive while another batch commits are committed together, in one
  /// transaction sent in one round trip on one connection (one WAL flush); at most this many per
  /// transaction (at least 1). Each save still has its own outcome, and returns only after the
  /// COMMIT containing it succeeded (docs/store_schema.md, "PostgreSQL").
  size_t max_write_batch = 256;
  /// This process's identity on this host. A lease whose holder has the same host and boot id as
  /// `local` but whose pid is not alive is free at once. Leave boot_id empty to never decide that.
  LeaseHolder local;
  /// Whether process `pid` on this host is alive. Default: ProcessAlive (sqlite_store.h).
  std::function<bool(int64_t pid)> process_alive;
};

/// Opens the PostgreSQL checkpoint store in the database named by `options.url`, creating its
/// schema and tables when missing (docs/store_schema.md, "PostgreSQL"). `clock` must outlive the
/// store; every time the store records or compares (leases, created_at) comes from it, never from
/// the server's clock.
///
/// Errors: kInvalidArgument for a URL libpq cannot parse; kUnavailable when the server cannot be
/// reached or refuses the connection; kFailedPrecondition when the tables were written by a newer
/// mend (schema N > M) or the options are invalid; kDataLoss for an unreadable schema version;
/// kInternal for any other database failure.
///
/// The store is thread-safe (a pool of `pool_size` connections, each used by one operation at a
/// time) and safe to share with other processes and hosts using the same database: every write
/// checks the lease on the run's locked row in the transaction that writes, and is retried a few
/// times on a serialization failure or deadlock. Concurrent saves share transactions (group
/// commit, `max_write_batch`). Destroying the store closes its connections.
Result<std::unique_ptr<CheckpointStore>> OpenPostgresStore(const PostgresStoreOptions& options,
                                                           Clock& clock);

/// Whether `url` names a PostgreSQL database (postgres:// or postgresql://), as store.url does
/// when the runs, memory and optionally the lesson queue live there.
bool IsPostgresUrl(std::string_view url);

/// `url` with its password replaced by "***" (URI userinfo and `password=` parameters), for logs
/// and error messages.
std::string MaskPostgresUrl(const std::string& url);

}  // namespace mend::store
