#pragma once

// OpenPostgresFactStore: long-term memory on PostgreSQL, for replicas that share what they learn
// (docs/memory.md, "PostgreSQL"); the same FactStore contract as on SQLite.

#include <chrono>
#include <memory>
#include <string>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/memory/fact_store.h"

namespace mend::db {
class PgBudget;
}  // namespace mend::db

namespace mend::memory {

/// Where OpenPostgresFactStore keeps long-term memory.
struct PostgresFactStoreOptions {
  /// A libpq connection URI or keyword/value string, e.g. "postgres://mend@db.example/mend". The
  /// password never appears in an error.
  std::string url;
  /// The schema that holds the memory tables, created when missing; empty: the connection's
  /// default (normally `public`). The runs store may share it (both keep versions in `meta`).
  std::string schema;
  /// How long opening one connection may take (libpq waits at least 2 s).
  Duration connect_timeout = std::chrono::seconds(5);
  /// At most this many connections, opened on demand; at least 1.
  int pool_size = 4;
  /// The connections this process may hold to the database, shared with its other pools
  /// (db::PgBudget, `postgres.max_connections`); null: only pool_size bounds this pool.
  std::shared_ptr<db::PgBudget> connections;
  /// Character-trigram Jaccard (TrigramJaccard) at or above which a new fact merges into an
  /// active one of its category, as on SQLite.
  double near_duplicate_jaccard = 0.9;
};

/// Long-term memory in PostgreSQL (docs/memory.md, "PostgreSQL"), for replicas that share what they
/// learn. The same FactStore as on SQLite, passing the same conformance suite:
///   - full-text search over content, tags and provenance with a `tsvector` (English
///     configuration, over the words as mend cuts them) and a GIN index, ranked by ts_rank; the
///     retriever scores the candidates with its own BM25 as on SQLite;
///   - near duplicates found with pg_trgm (its GIN index on content), then merged by the same
///     TrigramJaccard test as on SQLite; the extension is created in schema `public` when missing
///     (pg_trgm is trusted: a user who may create objects in the database may create it);
///   - term statistics and tag keys in tables, written in the transaction of each change;
///   - vectors stored in the database and indexed in each process by the retriever.
/// Writes serialise on one row (the memory generation), as SQLite serialises writers, so duplicates
/// and merges are decided once across hosts. `clock` gives every time stored; it must outlive the
/// store.
///
/// Errors: kInvalidArgument for a URL libpq cannot parse or options out of range; kUnavailable when
/// the server cannot be reached; kFailedPrecondition when the tables were written by a newer mend
/// or pg_trgm cannot be created; kDataLoss for an unreadable schema version.
Result<std::unique_ptr<FactStore>> OpenPostgresFactStore(const PostgresFactStoreOptions& options,
                                                         Clock& clock);

}  // namespace mend::memory
