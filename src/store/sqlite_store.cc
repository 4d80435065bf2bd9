#include "mend/store/sqlite_store.h"

#include <charconv>
#include <optional>
#include <string>
#include <utility>

#include "mend/base/time_format.h"
#include "mend/store/schema_version.h"
#include "store/lease_rules.h"
#include "store/sqlite_recovery_sql.h"
#include "store/sqlite_store_impl.h"

namespace mend::store {
namespace internal {
namespace {

constexpr int64_t kSchemaVersion = kSqliteStoreSchemaVersion;

constexpr char kCreateMeta[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
constexpr char kSelectVersion[] = "SELECT value FROM meta WHERE key = 'store.schema_version'";
constexpr char kInsertVersion[] =
    "INSERT INTO meta (key, value) VALUES ('store.schema_version', ?1)";
constexpr char kUpdateVersion[] = "UPDATE meta SET value = ?1 WHERE key = 'store.schema_version'";

// Version 1 of the schema; docs/store_schema.md explains every column.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  agent_dir TEXT NOT NULL,
  task TEXT NOT NULL,
  status TEXT NOT NULL,
  step INTEGER NOT NULL,
  message_count INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  next_attempt_at INTEGER,
  waiting TEXT NOT NULL,
  error_code TEXT,
  error_message TEXT,
  error_class TEXT,
  error_retryable INTEGER,
  parent_id TEXT NOT NULL,
  parent_step INTEGER NOT NULL,
  metadata TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  lease_id TEXT,
  lease_host TEXT,
  lease_boot_id TEXT,
  lease_pid INTEGER,
  lease_expires_at INTEGER
);
CREATE INDEX runs_status ON runs (status);
CREATE INDEX runs_created ON runs (created_at, id);
CREATE INDEX runs_unfinished ON runs (created_at, id) WHERE status <> 'completed';
CREATE TABLE messages (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  body BLOB NOT NULL,
  crc INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE checkpoints (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  message_count INTEGER NOT NULL,
  state BLOB NOT NULL,
  crc INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, step)
);
)sql";

// Version 2 adds the indexes of ListPending (sqlite_pending.cc). It only adds indexes, so every
// row of a version 1 database stays as it is; IF NOT EXISTS makes a repeated run harmless.
constexpr char kMigrateToV2[] = R"sql(
CREATE INDEX IF NOT EXISTS runs_pending_status ON runs (status, created_at, id)
  WHERE status <> 'completed';
CREATE INDEX IF NOT EXISTS runs_pending_agent ON runs (agent, status, created_at, id)
  WHERE status <> 'completed';
)sql";

// Version 3 adds the indexes of pages over every run (RunScope::kAll): with the pending indexes of
// version 2 they index each run once by its status. Completed runs are written into them once, when
// they complete. Only indexes are added.
constexpr char kMigrateToV3[] = R"sql(
CREATE INDEX IF NOT EXISTS runs_completed_status ON runs (status, created_at, id)
  WHERE status = 'completed';
CREATE INDEX IF NOT EXISTS runs_completed_agent ON runs (agent, status, created_at, id)
  WHERE status = 'completed';
)sql";

constexpr char kSelectRun[] = "SELECT " MEND_STORE_RUN_COLUMNS " FROM runs WHERE id = ?1";
constexpr char kRunExists[] = "SELECT 1 FROM runs WHERE id = ?1";
constexpr char kInsertRun[] =
    "INSERT INTO runs (" MEND_STORE_RUN_COLUMNS
    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
    "?19, ?20, ?21, ?22, ?23, ?24, ?25)";
// Every mutable column; id, agent, agent_dir, task, parent_* and created_at never change.
constexpr char kUpdateRun[] =
    "UPDATE runs SET status = ?5, step = ?6, message_count = ?7, attempts = ?8, "
    "next_attempt_at = ?9, waiting = ?10, error_code = ?11, error_message = ?12, "
    "error_class = ?13, error_retryable = ?14, metadata = ?17, updated_at = ?19, epoch = ?20, "
    "lease_id = ?21, lease_host = ?22, lease_boot_id = ?23, lease_pid = ?24, "
    "lease_expires_at = ?25 WHERE id = ?1";
constexpr char kListAll[] =
    "SELECT " MEND_STORE_RUN_COLUMNS " FROM runs ORDER BY created_at, id LIMIT ?1";
// The WHERE clause matches the partial index runs_unfinished exactly, so Pending() walks that
// index in order and never sorts or reads completed runs.
constexpr char kListUnfinished[] = "SELECT " MEND_STORE_RUN_COLUMNS
                                   " FROM runs WHERE status <> 'completed' "
                                   "ORDER BY created_at, id LIMIT ?1";
constexpr char kDeleteRun[] = "DELETE FROM runs WHERE id = ?1";
// Claim, Renew and Release change the lease alone: nothing indexed, nothing else rewritten.
constexpr char kUpdateLease[] =
    "UPDATE runs SET epoch = ?2, lease_id = ?3, lease_host = ?4, lease_boot_id = ?5, "
    "lease_pid = ?6, lease_expires_at = ?7, updated_at = ?8 WHERE id = ?1";

// When the WAL reaches this many times SqliteStoreOptions::wal_checkpoint_pages, the checkpointer
// thread is behind (or its checkpoints fail) and the committing write checkpoints itself.
constexpr int64_t kInlineCheckpointFactor = 4;
// A commit finishes the thread's checkpoint when at most 1/kFinishFraction of
// wal_checkpoint_pages frames are left uncopied.
constexpr int64_t kFinishFraction = 4;

}  // namespace

SqliteStore::SqliteStore(const SqliteStoreOptions& options, Clock& clock,
                         std::unique_ptr<SqliteConn> db)
    : options_(options),
      clock_(clock),
      db_(std::move(db)),
      writes_(options.max_write_batch,
              [this](std::span<PendingWrite* const> batch) { RunBatch(batch); }) {
  if (!options_.process_alive) options_.process_alive = ProcessAlive;
}

Status SqliteStore::Init() {
  std::lock_guard<std::mutex> lock(mu_);
  // page_size and auto_vacuum only take effect on a new, empty database, and setting them on an
  // existing one still writes its header: an open on a full disk would fail (docs/reliability.md,
  // "A full disk"), so only a new database is told.
  MEND_ASSIGN_OR_RETURN(const int64_t pages, db_->QueryInt("PRAGMA page_count"));
  if (pages == 0) {
    // 8 KiB pages hold a 4 KiB message without an overflow page.
    MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA page_size = 8192"));
    // Pages that a prune frees can then be handed back with PRAGMA incremental_vacuum
    // (sqlite_prune.cc).
    MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA auto_vacuum = INCREMENTAL"));
  }
  MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA journal_mode = WAL"));
  MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA synchronous = FULL"));
  // Statement journals (a statement that may need undoing inside a transaction) stay in memory:
  // on the default they spill to unnamed files in the system's temp folder, which cost each save
  // about 45 KiB of extra writes while saves had savepoints, and puts run content outside the
  // home.
  MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA temp_store = MEMORY"));
  MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA foreign_keys = ON"));
  return db_->InTransaction(SqliteConn::TxKind::kWrite, [&] { return CreateOrMigrateSchema(); });
}

void SqliteStore::StartCheckpointer(std::unique_ptr<SqliteConn> conn) {
  std::lock_guard<std::mutex> lock(mu_);
  checkpointer_ = std::make_unique<WalCheckpointer>(std::move(conn));
  next_checkpoint_at_ = options_.wal_checkpoint_pages;
  // Runs inside every COMMIT of db_, with mu_ held by the committing thread. The checkpointer is
  // asked once per wal_checkpoint_pages new pages, not at every commit past the threshold: under a
  // steady load a passive checkpoint rarely copies the whole WAL (commits keep adding frames while
  // it copies), and asking again at every commit would keep its fsyncs competing with theirs.
  db_->SetWalHook([this](int64_t pages) {
    if (pages < wal_pages_) {
      // The WAL started over: everything before was copied.
      next_checkpoint_at_ = options_.wal_checkpoint_pages;
      checkpointer_->Forget();
    }
    wal_pages_ = pages;
    if (pages >= next_checkpoint_at_) {
      checkpointer_->Request();
      next_checkpoint_at_ = pages + options_.wal_checkpoint_pages;
    }
  });
}

void SqliteStore::FinishCheckpointIfDue() {
  if (checkpointer_ == nullptr || wal_pages_ < options_.wal_checkpoint_pages) return;
  bool due = wal_pages_ >= kInlineCheckpointFactor * options_.wal_checkpoint_pages;
  if (!due) {
    // The WAL starts over only after a checkpoint copied all of it, which one running beside
    // the commits rarely does. Once the thread has copied all but a few frames, this commit
    // copies the rest: a short write and one fsync, instead of the whole WAL's.
    std::optional<int64_t> copied = checkpointer_->CopiedIfIdle();
    // (Nothing left means the thread copied everything: the next write starts the WAL over.)
    due = copied.has_value() && wal_pages_ > *copied &&
          wal_pages_ - *copied <= options_.wal_checkpoint_pages / kFinishFraction;
  }
  if (!due) return;
  // Its outcome does not change the commit's: a checkpoint that fails or cannot copy everything
  // (another process reads an older snapshot) leaves the WAL as it was, for a later one.
  db_->Exec("PRAGMA wal_checkpoint(PASSIVE)").IgnoreError();
  stats_.inline_checkpoints += 1;
  checkpointer_->Forget();
}

Status SqliteStore::CreateOrMigrateSchema() {
  MEND_RETURN_IF_ERROR(db_->Exec(kCreateMeta));
  std::optional<std::string> text;  // none: a new database
  {
    // Reset before the schema changes below: DDL must not run under an open read of `meta`.
    MEND_ASSIGN_OR_RETURN(SqliteStmt select, db_->Prepare(kSelectVersion));
    MEND_ASSIGN_OR_RETURN(bool found, select.Step());
    if (found) text = select.Text(0);
  }
  const bool found = text.has_value();
  int64_t version = 0;
  if (found) {
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), version);
    if (ec != std::errc() || end != text->data() + text->size() || version < 1) {
      return DataLossError(options_.path + ": unreadable store schema version");
    }
    if (version > kSchemaVersion) {
      return FailedPreconditionError(options_.path + " was written by a newer mend (schema " +
                                     std::to_string(version) + " > " +
                                     std::to_string(kSchemaVersion) + ")");
    }
    if (version == kSchemaVersion) return OkStatus();
  }
  // Each step brings the schema one version up; all of them commit together with the new version
  // number, or (a crash, a full disk) none of them does.
  if (version == 0) MEND_RETURN_IF_ERROR(db_->Exec(kSchemaV1));
  if (version <= 1) MEND_RETURN_IF_ERROR(db_->Exec(kMigrateToV2));
  if (version <= 2) MEND_RETURN_IF_ERROR(db_->Exec(kMigrateToV3));
  // Version 4 adds the indexes of ListRecoveryCandidates (sqlite_recovery_sql.h); only indexes.
  if (version <= 3) MEND_RETURN_IF_ERROR(db_->Exec(recovery_sql::kCreateIndexes));
  MEND_ASSIGN_OR_RETURN(SqliteStmt write, db_->Prepare(found ? kUpdateVersion : kInsertVersion));
  return write.BindText(1, std::to_string(kSchemaVersion)).Run();
}

Status SqliteStore::Transact(SqliteConn::TxKind kind, const std::function<Status()>& body) {
  if (kind == SqliteConn::TxKind::kWrite) return writes_.Submit(body);
  std::lock_guard<std::mutex> lock(mu_);
  return db_->InTransaction(kind, body);
}

Result<StoredRun> SqliteStore::ReadRun(const std::string& run_id) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSelectRun));
  stmt.BindText(1, run_id);
  MEND_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return NotFoundError("no run " + Quote(run_id));
  return ParseRunRow(stmt);
}

Status SqliteStore::WriteLease(const RunRecord& run) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kUpdateLease));
  stmt.BindText(1, run.id).Bind(2, run.epoch);
  if (run.lease_holder.has_value() && run.lease_expires_at.has_value()) {
    stmt.BindText(3, run.lease_holder->id).BindText(4, run.lease_holder->host);
    stmt.BindText(5, run.lease_holder->boot_id).Bind(6, run.lease_holder->pid);
    stmt.Bind(7, ToNanos(*run.lease_expires_at));
  } else {
    for (int i = 3; i <= 7; ++i) stmt.BindNull(i);
  }
  return stmt.Bind(8, ToNanos(run.updated_at)).Run();
}

Result<bool> SqliteStore::RunExists(const std::string& run_id) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kRunExists));
  stmt.BindText(1, run_id);
  return stmt.Step();
}

Status SqliteStore::InsertRun(const StoredRun& run) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kInsertRun));
  BindRun(stmt, run);
  return stmt.Run();
}

Status SqliteStore::WriteRun(const StoredRun& run) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kUpdateRun));
  BindRun(stmt, run);
  return stmt.Run();
}

bool SqliteStore::LeaseIsLive(const RunRecord& run) {
  return internal::LeaseIsLive(run, clock_.Now(), options_.local, options_.process_alive);
}

Status SqliteStore::CheckFence(const RunRecord& run, const Lease& lease) {
  return internal::CheckFence(run, lease, clock_.Now());
}

Status SqliteStore::CreateRun(const RunRecord& run) {
  if (run.id.empty()) return InvalidArgumentError("a run needs an id");
  return Transact(SqliteConn::TxKind::kWrite, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(bool exists, RunExists(run.id));
    if (exists) return AlreadyExistsError("run " + Quote(run.id) + " already exists");
    StoredRun stored{run, 0};
    RunRecord& r = stored.record;
    Time now = clock_.Now();
    if (r.created_at == Time{}) r.created_at = now;
    r.updated_at = now;
    r.step = 0;
    r.epoch = 0;
    r.lease_holder.reset();
    r.lease_expires_at.reset();
    return InsertRun(stored);
  });
}

Result<RunRecord> SqliteStore::GetRun(const std::string& run_id) {
  std::optional<RunRecord> out;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kRead, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(run_id));
    out = std::move(run.record);
    return OkStatus();
  }));
  return std::move(*out);
}

Result<std::vector<RunRecord>> SqliteStore::ListRuns(const ListOptions& options) {
  std::vector<RunRecord> runs;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kRead, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt,
                          db_->Prepare(options.unfinished_only ? kListUnfinished : kListAll));
    stmt.Bind(1, options.limit == 0 ? -1 : static_cast<int64_t>(options.limit));
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) return OkStatus();
      Result<StoredRun> run = ParseRunRow(stmt);
      // A corrupt row must not hide the other runs: it is listed as a failed run whose last
      // error is the DATA_LOSS, so `mend pending` shows it and recovery leaves it alone.
      runs.push_back(run.ok() ? std::move(run->record) : CorruptRunMarker(stmt, run.status()));
    }
  }));
  return runs;
}

Status SqliteStore::DeleteRun(const std::string& run_id) {
  return Transact(SqliteConn::TxKind::kWrite, [&]() -> Status {
    Result<StoredRun> run = ReadRun(run_id);
    if (run.status().code() == StatusCode::kNotFound) return run.status();
    // A corrupt row can still be deleted: nobody can work on that run anyway.
    if (run.ok() && LeaseIsLive(run->record)) {
      return LeasedError(run->record);
    }
    if (!run.ok() && run.status().code() != StatusCode::kDataLoss) return run.status();
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kDeleteRun));
    return stmt.BindText(1, run_id).Run();
  });
}

Result<Lease> SqliteStore::Claim(const std::string& run_id, const LeaseHolder& holder,
                                 Duration ttl) {
  if (ttl <= Duration::zero()) return InvalidArgumentError("a lease needs a positive TTL");
  Lease lease;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kWrite, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(run_id));
    MEND_ASSIGN_OR_RETURN(
        lease, GrantLease(run.record, LeaseIsLive(run.record), holder, ttl, clock_.Now()));
    return WriteLease(run.record);
  }));
  return lease;
}

Result<Lease> SqliteStore::Renew(const Lease& lease, Duration ttl) {
  if (ttl <= Duration::zero()) return InvalidArgumentError("a lease needs a positive TTL");
  Lease renewed = lease;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kWrite, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(lease.run_id));
    MEND_RETURN_IF_ERROR(CheckFence(run.record, lease));
    run.record.lease_expires_at = clock_.Now() + ttl;
    renewed.expires_at = *run.record.lease_expires_at;
    renewed.holder = *run.record.lease_holder;
    return WriteLease(run.record);
  }));
  return renewed;
}

Status SqliteStore::Release(const Lease& lease) {
  return Transact(SqliteConn::TxKind::kWrite, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(lease.run_id));
    if (run.record.epoch != lease.epoch) return CheckFence(run.record, lease);
    // Releasing an expired lease nobody has taken over is harmless and keeps shutdown simple.
    run.record.lease_holder.reset();
    run.record.lease_expires_at.reset();
    return WriteLease(run.record);
  });
}

Status SqliteStore::Update(const Lease& lease, const RunUpdate& update) {
  return Transact(SqliteConn::TxKind::kWrite, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(lease.run_id));
    MEND_RETURN_IF_ERROR(CheckFence(run.record, lease));
    MEND_RETURN_IF_ERROR(ApplyUpdate(update, run.record));
    run.record.updated_at = clock_.Now();
    return WriteRun(run);
  });
}

Status SqliteStore::UpdateUnleased(const std::string& run_id, const RunUpdate& update) {
  return Transact(SqliteConn::TxKind::kWrite, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(run_id));
    MEND_RETURN_IF_ERROR(ApplyUpdate(update, run.record));
    run.record.updated_at = clock_.Now();
    return WriteRun(run);
  });
}

}  // namespace internal

Result<std::unique_ptr<CheckpointStore>> OpenSqliteStore(const SqliteStoreOptions& options,
                                                         Clock& clock) {
  if (options.path.empty()) return FailedPreconditionError("the store needs a database path");
  if (options.history_limit < 1) {
    return FailedPreconditionError("history_limit must be at least 1");
  }
  if (options.max_write_batch < 1) {
    return FailedPreconditionError("max_write_batch must be at least 1");
  }
  if (options.wal_checkpoint_pages < 0) {
    return FailedPreconditionError("wal_checkpoint_pages must not be negative");
  }
  db::SqliteOptions db_options;
  db_options.busy_timeout = options.busy_timeout;
  db_options.vfs = options.vfs;
  MEND_ASSIGN_OR_RETURN(auto db, db::SqliteConn::Open(options.path, db_options));
  auto store = std::make_unique<internal::SqliteStore>(options, clock, std::move(db));
  MEND_RETURN_IF_ERROR(store->Init());
  if (options.wal_checkpoint_pages > 0) {
    db::SqliteOptions checkpointer_options = db_options;
    checkpointer_options.access = db::SqliteOptions::Access::kExisting;
    MEND_ASSIGN_OR_RETURN(auto checkpointer_db,
                          db::SqliteConn::Open(options.path, checkpointer_options));
    store->StartCheckpointer(std::move(checkpointer_db));
  }
  return std::unique_ptr<CheckpointStore>(std::move(store));
}

}  // namespace mend::store
