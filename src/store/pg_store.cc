#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "mend/base/time_format.h"
#include "mend/store/postgres_store.h"
#include "mend/store/schema_version.h"
#include "mend/store/sqlite_store.h"
#include "store/lease_rules.h"
#include "store/pg_store_impl.h"

namespace mend::store {
namespace internal {
namespace {

constexpr int64_t kSchemaVersion = kPostgresStoreSchemaVersion;
// Serialization failures and deadlocks are retried this many times in all.
constexpr int kMaxAttempts = 5;
// Save batches that may run at once, each on a connection of its own (at most pool_size): while
// one waits for its COMMIT's WAL flush, the server executes the next, on another core.
constexpr size_t kBatchesInFlight = 2;

// Taken while creating or checking the tables, so that stores opening at once do not race on
// CREATE ... IF NOT EXISTS (which is not safe against concurrent creators).
constexpr char kLockSchema[] = "SELECT pg_advisory_xact_lock(7230188513270843394)";
constexpr char kCreateMeta[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
constexpr char kSelectVersion[] = "SELECT value FROM meta WHERE key = 'store.schema_version'";
constexpr char kInsertVersion[] =
    "INSERT INTO meta (key, value) VALUES ('store.schema_version', $1)";
constexpr char kUpdateVersion[] = "UPDATE meta SET value = $1 WHERE key = 'store.schema_version'";

// Version 1 of the tables; the columns and their meaning are those of the SQLite store.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  agent_dir TEXT NOT NULL,
  task TEXT NOT NULL,
  status TEXT NOT NULL,
  step BIGINT NOT NULL,
  message_count BIGINT NOT NULL,
  attempts BIGINT NOT NULL,
  next_attempt_at BIGINT,
  waiting TEXT NOT NULL,
  error_code TEXT,
  error_message TEXT,
  error_class TEXT,
  error_retryable SMALLINT,
  parent_id TEXT NOT NULL,
  parent_step BIGINT NOT NULL,
  metadata TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  epoch BIGINT NOT NULL,
  lease_id TEXT,
  lease_host TEXT,
  lease_boot_id TEXT,
  lease_pid BIGINT,
  lease_expires_at BIGINT
);
CREATE INDEX runs_status ON runs (status);
CREATE INDEX runs_created ON runs (created_at, id);
CREATE INDEX runs_unfinished ON runs (created_at, id) WHERE status <> 'completed';
CREATE TABLE messages (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq BIGINT NOT NULL,
  body BYTEA NOT NULL,
  crc BIGINT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE checkpoints (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step BIGINT NOT NULL,
  message_count BIGINT NOT NULL,
  state BYTEA NOT NULL,
  crc BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (run_id, step)
);
)sql";

// Version 2: the indexes of ListPending (pg_pending.cc), and ids ordered as bytes (COLLATE "C")
// in every listing, as the SQLite store orders them, whatever the database's collation; so
// runs_unfinished is rebuilt with that collation. Only indexes change: every row of a version 1
// schema stays as it is.
constexpr char kMigrateToV2[] = R"sql(
DROP INDEX IF EXISTS runs_unfinished;
CREATE INDEX runs_unfinished ON runs (created_at, id COLLATE "C") WHERE status <> 'completed';
CREATE INDEX IF NOT EXISTS runs_pending_status ON runs (status, created_at, id COLLATE "C")
  WHERE status <> 'completed';
CREATE INDEX IF NOT EXISTS runs_pending_agent ON runs (agent, status, created_at, id COLLATE "C")
  WHERE status <> 'completed';
)sql";

// Version 3: the indexes of pages over every run (RunScope::kAll). With the pending indexes they
// index each run once by its status; runs_created is rebuilt with ids ordered as bytes, so the
// unfiltered page walks it. Only indexes change.
constexpr char kMigrateToV3[] = R"sql(
DROP INDEX IF EXISTS runs_created;
CREATE INDEX runs_created ON runs (created_at, id COLLATE "C");
CREATE INDEX IF NOT EXISTS runs_completed_status ON runs (status, created_at, id COLLATE "C")
  WHERE status = 'completed';
CREATE INDEX IF NOT EXISTS runs_completed_agent ON runs (agent, status, created_at, id COLLATE "C")
  WHERE status = 'completed';
)sql";

// Version 4: the indexes of ListRecoveryCandidates (pg_recovery.cc), as in the SQLite store: the
// runs recovery may act on by (created_at, id) with the columns its rules read, and every
// unfinished run by the columns that decide its class. Only indexes.
constexpr char kMigrateToV4[] = R"sql(
CREATE INDEX IF NOT EXISTS runs_recovery ON runs
  (created_at, id COLLATE "C", status, attempts, next_attempt_at, error_retryable)
  WHERE status IN ('running', 'failed') AND waiting = '';
CREATE INDEX IF NOT EXISTS runs_recovery_class ON runs
  (status, waiting, error_retryable, next_attempt_at, attempts) WHERE status <> 'completed';
)sql";

constexpr char kSelectRun[] = "SELECT " MEND_STORE_RUN_COLUMNS " FROM runs WHERE id = $1";
constexpr char kSelectRunShare[] =
    "SELECT " MEND_STORE_RUN_COLUMNS " FROM runs WHERE id = $1 FOR SHARE";
constexpr char kSelectRunForUpdate[] =
    "SELECT " MEND_STORE_RUN_COLUMNS " FROM runs WHERE id = $1 FOR UPDATE";
constexpr char kRunExists[] = "SELECT 1 FROM runs WHERE id = $1";
constexpr char kInsertRun[] =
    "INSERT INTO runs (" MEND_STORE_RUN_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, "
    "$19, $20, $21, $22, $23, $24, $25) ON CONFLICT (id) DO NOTHING";
// Every column is bound (PostgreSQL must type each parameter); id, agent, agent_dir, task,
// parent_* and created_at are written back unchanged.
constexpr char kUpdateRun[] = "UPDATE runs SET (" MEND_STORE_RUN_COLUMNS
                              ") = ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, "
                              "$15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25) "
                              "WHERE id = $1";
constexpr char kListAll[] =
    "SELECT " MEND_STORE_RUN_COLUMNS " FROM runs ORDER BY created_at, id COLLATE \"C\" LIMIT $1";
// The WHERE clause matches the partial index runs_unfinished, so Pending() walks that index.
constexpr char kListUnfinished[] = "SELECT " MEND_STORE_RUN_COLUMNS
                                   " FROM runs WHERE status <> 'completed' "
                                   "ORDER BY created_at, id COLLATE \"C\" LIMIT $1";
constexpr char kDeleteRun[] = "DELETE FROM runs WHERE id = $1";

}  // namespace

PgStore::PgStore(const PostgresStoreOptions& options, Clock& clock)
    : options_(options),
      clock_(clock),
      pool_(
          options.url, options.connect_timeout, options.pool_size,
          [this](PgConn& conn) { return SetUpConnection(conn); }, options.connections),
      writes_(
          options.max_write_batch,
          [this](std::span<PendingWrite* const> batch) { RunBatch(batch); },
          std::min<size_t>(kBatchesInFlight, static_cast<size_t>(std::max(1, options.pool_size)))) {
  if (!options_.process_alive) options_.process_alive = ProcessAlive;
}

Status PgStore::SetUpConnection(PgConn& conn) {
  if (options_.schema.empty()) return OkStatus();
  // The schema is a session setting of every connection; a bound parameter keeps it data.
  return conn
      .Exec("SELECT set_config('search_path', $1, false)",
            {PgParam::Text(QuoteIdentifier(options_.schema))})
      .status();
}

Status PgStore::Init() {
  return Transact(TxKind::kWrite, [&](PgConn& conn) { return CreateOrCheckSchema(conn); });
}

Status PgStore::CreateOrCheckSchema(PgConn& conn) {
  MEND_RETURN_IF_ERROR(conn.Run(kLockSchema));
  if (!options_.schema.empty()) {
    std::string create = "CREATE SCHEMA IF NOT EXISTS " + QuoteIdentifier(options_.schema);
    MEND_RETURN_IF_ERROR(conn.Run(create.c_str()));
  }
  MEND_RETURN_IF_ERROR(conn.Run(kCreateMeta));
  MEND_ASSIGN_OR_RETURN(PgResult version, conn.Exec(kSelectVersion));
  std::string where = MaskPostgresUrl(options_.url) +
                      (options_.schema.empty() ? "" : " (schema " + options_.schema + ")");
  const bool found = version.rows() > 0;
  int64_t v = 0;  // no version row: a new schema
  if (found) {
    v = version.Int(0, 0).value_or(0);
    if (v < 1) return DataLossError(where + ": unreadable store schema version");
    if (v > kSchemaVersion) {
      return FailedPreconditionError(where + " was written by a newer mend (schema " +
                                     std::to_string(v) + " > " + std::to_string(kSchemaVersion) +
                                     ")");
    }
    if (v == kSchemaVersion) return OkStatus();
  }
  // Each step brings the schema one version up, in this transaction: the steps and the new version
  // number commit together or not at all.
  if (v == 0) MEND_RETURN_IF_ERROR(conn.Run(kSchemaV1));
  if (v <= 1) MEND_RETURN_IF_ERROR(conn.Run(kMigrateToV2));
  if (v <= 2) MEND_RETURN_IF_ERROR(conn.Run(kMigrateToV3));
  if (v <= 3) MEND_RETURN_IF_ERROR(conn.Run(kMigrateToV4));
  return conn.Exec(found ? kUpdateVersion : kInsertVersion, {PgParam::Int(kSchemaVersion)})
      .status();
}

Status PgStore::Transact(TxKind kind, const std::function<Status(PgConn&)>& body) {
  // Writes run in READ COMMITTED and lock the rows they check; reads see one snapshot.
  return PgTransact(
      pool_, kind == TxKind::kWrite ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
      body, kMaxAttempts);
}

Result<StoredRun> PgStore::ReadRun(PgConn& conn, const std::string& run_id, RowLock lock) {
  const char* sql = lock == RowLock::kUpdate  ? kSelectRunForUpdate
                    : lock == RowLock::kShare ? kSelectRunShare
                                              : kSelectRun;
  MEND_ASSIGN_OR_RETURN(PgResult res,
                        conn.Exec(sql, {PgParam::Text(run_id)}, PgConn::Plan::kPrepared));
  if (res.rows() == 0) return NotFoundError("no run " + Quote(run_id));
  return ParsePgRunRow(res, 0);
}

Result<bool> PgStore::RunExists(PgConn& conn, const std::string& run_id) {
  MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kRunExists, {PgParam::Text(run_id)}));
  return res.rows() > 0;
}

Status PgStore::InsertRun(PgConn& conn, const StoredRun& run) {
  MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kInsertRun, PgRunParams(run)));
  if (res.affected() == 0) {
    return AlreadyExistsError("run " + Quote(run.record.id) + " already exists");
  }
  return OkStatus();
}

Status PgStore::WriteRun(PgConn& conn, const StoredRun& run) {
  return conn.Exec(kUpdateRun, PgRunParams(run), PgConn::Plan::kPrepared).status();
}

bool PgStore::LeaseIsLive(const RunRecord& run) {
  return internal::LeaseIsLive(run, clock_.Now(), options_.local, options_.process_alive);
}

Status PgStore::CheckFence(const RunRecord& run, const Lease& lease) {
  return internal::CheckFence(run, lease, clock_.Now());
}

Status PgStore::CreateRun(const RunRecord& run) {
  if (run.id.empty()) return InvalidArgumentError("a run needs an id");
  StoredRun stored{run, 0};
  RunRecord& r = stored.record;
  return Transact(TxKind::kWrite, [&](PgConn& conn) -> Status {
    Time now = clock_.Now();
    if (r.created_at == Time{}) r.created_at = now;
    r.updated_at = now;
    r.step = 0;
    r.epoch = 0;
    r.lease_holder.reset();
    r.lease_expires_at.reset();
    return InsertRun(conn, stored);
  });
}

Result<RunRecord> PgStore::GetRun(const std::string& run_id) {
  std::optional<RunRecord> out;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kRead, [&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(conn, run_id, RowLock::kNone));
    out = std::move(run.record);
    return OkStatus();
  }));
  return std::move(*out);
}

Result<std::vector<RunRecord>> PgStore::ListRuns(const ListOptions& options) {
  std::vector<RunRecord> runs;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kRead, [&](PgConn& conn) -> Status {
    runs.clear();
    PgParam limit =
        options.limit == 0 ? PgParam::Null() : PgParam::Int(static_cast<int64_t>(options.limit));
    MEND_ASSIGN_OR_RETURN(PgResult res,
                          conn.Exec(options.unfinished_only ? kListUnfinished : kListAll, {limit}));
    for (int i = 0; i < res.rows(); ++i) {
      Result<StoredRun> run = ParsePgRunRow(res, i);
      // A corrupt row must not hide the other runs: it is listed as a failed run whose last
      // error is the DATA_LOSS, so `mend pending` shows it and recovery leaves it alone.
      runs.push_back(run.ok() ? std::move(run->record) : PgCorruptRunMarker(res, i, run.status()));
    }
    return OkStatus();
  }));
  return runs;
}

Status PgStore::DeleteRun(const std::string& run_id) {
  return Transact(TxKind::kWrite, [&](PgConn& conn) -> Status {
    Result<StoredRun> run = ReadRun(conn, run_id, RowLock::kUpdate);
    if (run.status().code() == StatusCode::kNotFound) return run.status();
    // A corrupt row can still be deleted: nobody can work on that run anyway.
    if (run.ok() && LeaseIsLive(run->record)) {
      return LeasedError(run->record);
    }
    if (!run.ok() && run.status().code() != StatusCode::kDataLoss) return run.status();
    return conn.Exec(kDeleteRun, {PgParam::Text(run_id)}).status();
  });
}

Result<Lease> PgStore::Claim(const std::string& run_id, const LeaseHolder& holder, Duration ttl) {
  if (ttl <= Duration::zero()) return InvalidArgumentError("a lease needs a positive TTL");
  Lease lease;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kWrite, [&](PgConn& conn) -> Status {
    // The row lock makes the liveness check and the epoch bump one step for every claimant:
    // a concurrent Claim waits here and then sees this one's lease.
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(conn, run_id, RowLock::kUpdate));
    MEND_ASSIGN_OR_RETURN(
        lease, GrantLease(run.record, LeaseIsLive(run.record), holder, ttl, clock_.Now()));
    return WriteRun(conn, run);
  }));
  return lease;
}

Result<Lease> PgStore::Renew(const Lease& lease, Duration ttl) {
  if (ttl <= Duration::zero()) return InvalidArgumentError("a lease needs a positive TTL");
  Lease renewed = lease;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kWrite, [&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(conn, lease.run_id, RowLock::kUpdate));
    MEND_RETURN_IF_ERROR(CheckFence(run.record, lease));
    run.record.lease_expires_at = clock_.Now() + ttl;
    renewed.expires_at = *run.record.lease_expires_at;
    renewed.holder = *run.record.lease_holder;
    return WriteRun(conn, run);
  }));
  return renewed;
}

Status PgStore::Release(const Lease& lease) {
  return Transact(TxKind::kWrite, [&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(conn, lease.run_id, RowLock::kUpdate));
    if (run.record.epoch != lease.epoch) return CheckFence(run.record, lease);
    // Releasing an expired lease nobody has taken over is harmless and keeps shutdown simple.
    run.record.lease_holder.reset();
    run.record.lease_expires_at.reset();
    return WriteRun(conn, run);
  });
}

Status PgStore::Update(const Lease& lease, const RunUpdate& update) {
  return Transact(TxKind::kWrite, [&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(conn, lease.run_id, RowLock::kUpdate));
    MEND_RETURN_IF_ERROR(CheckFence(run.record, lease));
    MEND_RETURN_IF_ERROR(ApplyUpdate(update, run.record));
    run.record.updated_at = clock_.Now();
    return WriteRun(conn, run);
  });
}

Status PgStore::UpdateUnleased(const std::string& run_id, const RunUpdate& update) {
  return Transact(TxKind::kWrite, [&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(conn, run_id, RowLock::kUpdate));
    MEND_RETURN_IF_ERROR(ApplyUpdate(update, run.record));
    run.record.updated_at = clock_.Now();
    return WriteRun(conn, run);
  });
}

}  // namespace internal

bool IsPostgresUrl(std::string_view url) {
  return url.starts_with("postgres://") || url.starts_with("postgresql://");
}

std::string MaskPostgresUrl(const std::string& url) { return db::MaskPostgresUrl(url); }

Result<std::unique_ptr<CheckpointStore>> OpenPostgresStore(const PostgresStoreOptions& options,
                                                           Clock& clock) {
  if (options.url.empty()) return FailedPreconditionError("the store needs a PostgreSQL URL");
  if (options.history_limit < 1) {
    return FailedPreconditionError("history_limit must be at least 1");
  }
  if (options.pool_size < 1) return FailedPreconditionError("pool_size must be at least 1");
  if (options.max_write_batch < 1) {
    return FailedPreconditionError("max_write_batch must be at least 1");
  }
  auto store = std::make_unique<internal::PgStore>(options, clock);
  MEND_RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<CheckpointStore>(std::move(store));
}

}  // namespace mend::store
