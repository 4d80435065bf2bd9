#pragma once

// The lesson queue on PostgreSQL (docs/lesson_queue.md, "The PostgreSQL queue"):
// OpenPostgresLessonQueue, the queue tables' schema version, and MigrateWalToPostgres for `mend
// reflect migrate`.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/env.h"
#include "mend/base/result.h"
#include "mend/lessonq/durable_queue.h"

namespace mend::db {
class PgBudget;
}  // namespace mend::db

namespace mend::obs {
class MetricsRegistry;
}  // namespace mend::obs

namespace mend::lessonq {

/// How the commits of claims and completions wait for the disk.
enum class ClaimCommit {
  /// They do not wait (synchronous_commit = off for those statements alone): a server that
  /// crashes may forget the claims and completions of its last moments, and those jobs are then
  /// processed again; at least once still holds, and the lesson's content-derived fact id makes
  /// the second run store nothing new. Enqueues, retries and dead letters always wait.
  kAsynchronous,
  /// Every commit waits for the disk: no job is processed again after a server crash unless its
  /// worker had not finished it.
  kSynchronous,
};

/// Where the PostgreSQL lesson queue keeps its tables.
struct PgQueueOptions {
  /// A libpq connection URI or keyword/value string (the store.url of mend's configuration). The
  /// password never appears in an error.
  std::string url;
  /// The schema that holds the queue's tables, created when missing; empty: the connection's
  /// default (normally `public`).
  std::string schema;
  /// Connections, opened on demand, in each of two pools: the workers' claims and completions, and
  /// everything else. 0: one per worker plus two (the poller and the producers and operators of
  /// this process).
  int pool_size = 0;
  /// The connections this process may hold to the database, shared with its other pools
  /// (db::PgBudget, `postgres.max_connections`); null: only pool_size bounds this pool.
  std::shared_ptr<db::PgBudget> connections;
  /// How long opening one connection may take (libpq waits at least 2 s).
  Duration connect_timeout = std::chrono::seconds(5);
  /// A claim lasts job_timeout plus this margin; once it has passed, any worker may claim the job
  /// again (its first worker died, or ignored the cancellation at its deadline).
  Duration claim_margin = std::chrono::seconds(30);
  ClaimCommit claim_commit = ClaimCommit::kAsynchronous;  ///< how claims are committed
};

/// Opens the PostgreSQL lesson queue (docs/lesson_queue.md, "The PostgreSQL queue"): one row per
/// job in lesson_jobs, keyed by the job id and its state (pending or dead), so the same requests
/// dedupe as in the WAL queue. Workers claim due jobs with SELECT ... FOR UPDATE SKIP LOCKED for
/// job_timeout + claim_margin; a completion, retry or move to the dead letters only applies while
/// the worker's claim token is still the row's, so a worker whose claim expired and was taken over
/// changes nothing. Every process may Start workers on the same tables at once (owner() is true
/// after Start); there is no owner lock. Times come from env.clock, never from the server's clock.
/// Creates the schema and tables when missing.
///
/// `options` as for the WAL queue, but base_dir, capacity, drop_oldest, block_timeout and
/// chatcli_safe are not used. `metrics` (may be null: a private registry) receives the ten
/// mend_lessonq_* metrics (wal_segments counts the pending rows) and must outlive the queue.
/// Errors: kInvalidArgument for bad options or a URL libpq cannot parse; kUnavailable when the
/// server cannot be reached; kFailedPrecondition when the tables were written by a newer mend.
/// Workers retry a server that went away after poll_interval.
Result<std::unique_ptr<DurableLessonQueue>> OpenPostgresLessonQueue(Env env, QueueOptions options,
                                                                    PgQueueOptions pg,
                                                                    obs::MetricsRegistry* metrics);

///@{
/// The version of the queue's tables this build writes (`lessonq.schema_version` in table
/// lesson_queue_meta), and the version found at `url` in `schema` (empty: the connection's
/// default), read on a connection of its own without creating or changing anything: 0 when the
/// tables do not exist yet. For `mend migrate`.
int64_t PostgresLessonQueueSchemaVersion();
Result<int64_t> ReadPostgresLessonQueueSchemaVersion(
    const std::string& url, const std::string& schema = "",
    Duration connect_timeout = std::chrono::seconds(5));
///@}

/// What MigrateWalToPostgres did.
struct MigrateReport {
  int64_t moved = 0;            ///< pending WAL jobs now pending in PostgreSQL
  int64_t already_present = 0;  ///< WAL jobs whose id was already there in the same state
  int64_t dead_letters = 0;     ///< DLQ jobs now dead letters in PostgreSQL (moved or present)
  /// Records that failed a check; their files are left where they are, untouched.
  std::vector<std::string> corrupt;
};

/// `mend reflect migrate`: moves every job of the WAL queue at `base_dir` (wal/ pending, dlq/ dead)
/// into the PostgreSQL queue, keeping its id, times, attempts and last error. Each job is inserted
/// (nothing when its id is already there in that state) and committed before its WAL record is
/// removed, so a crash in between leaves a duplicate that dedupe absorbs, and running it again is
/// harmless. Corrupt records are reported and left in place. Holds the WAL's owner lock meanwhile:
/// kUnavailable when a process runs the WAL queue's workers. `env.fs` reads the WAL.
Result<MigrateReport> MigrateWalToPostgres(Env env, const std::string& base_dir,
                                           const PgQueueOptions& pg);

}  // namespace mend::lessonq
