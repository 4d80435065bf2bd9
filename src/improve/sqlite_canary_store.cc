// Canaries in the home's SQLite database (canary_store.h), in tables of their own beside the run
// store's: `canaries`, one row per canary, and `canary_runs`, one row per recorded run. A partial
// unique index keeps one running canary per agent folder; writes and decisions take SQLite's write
// lock (BEGIN IMMEDIATE), so processes of one home decide a canary once.
#include <charconv>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "improve/canary_store_checks.h"
#include "mend/base/time_format.h"
#include "mend/db/schema_read.h"
#include "mend/db/sqlite.h"
#include "mend/improve/canary_store.h"
#include "mend/store/run_record.h"

namespace mend::improve {
namespace {

using db::SqliteConn;
using db::SqliteStmt;

// The canaries' version, under their own key of mend.db's `meta` table (created as the run store
// creates it, so either store may open a new mend.db first; the run store's keys are left alone).
constexpr char kVersionKey[] = "canary.schema_version";
constexpr int64_t kSchemaVersion = 1;
constexpr char kCreateMeta[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
constexpr char kSelectVersion[] = "SELECT value FROM meta WHERE key = 'canary.schema_version'";
constexpr char kInsertVersion[] =
    "INSERT INTO meta (key, value) VALUES ('canary.schema_version', ?1)";

// Version 1. The CHECK keeps a state every reader knows.
constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS canaries (
  proposal_id       TEXT PRIMARY KEY,
  agent_dir         TEXT NOT NULL,
  percent           REAL NOT NULL,
  auto_decide       INTEGER NOT NULL,
  min_runs          INTEGER NOT NULL,
  max_runs          INTEGER NOT NULL,
  confidence        REAL NOT NULL,
  max_cost_increase REAL NOT NULL,
  state             TEXT NOT NULL CHECK (state IN ('running', 'promoted', 'rolled_back')),
  started_at        TEXT NOT NULL,
  started_ns        INTEGER NOT NULL,
  decided_at        TEXT NOT NULL DEFAULT '',
  verdict           TEXT NOT NULL DEFAULT '',
  reason            TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS canaries_running_agent ON canaries (agent_dir)
  WHERE state = 'running';
CREATE TABLE IF NOT EXISTS canary_runs (
  proposal_id   TEXT NOT NULL REFERENCES canaries (proposal_id),
  run_id        TEXT NOT NULL,
  arm           TEXT NOT NULL,
  status        TEXT NOT NULL,
  error_code    TEXT NOT NULL,
  checks_passed INTEGER NOT NULL,
  cost_usd      REAL NOT NULL,
  steps         INTEGER NOT NULL,
  input_tokens  INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  recorded_at   TEXT NOT NULL,
  PRIMARY KEY (proposal_id, run_id)
) WITHOUT ROWID;
)sql";

#define MEND_CANARY_COLUMNS                                                        \
  "proposal_id, agent_dir, percent, auto_decide, min_runs, max_runs, confidence, " \
  "max_cost_increase, state, started_at, decided_at, verdict, reason"
constexpr char kSelectOne[] = "SELECT " MEND_CANARY_COLUMNS " FROM canaries WHERE proposal_id = ?1";
constexpr char kSelectRunning[] =
    "SELECT " MEND_CANARY_COLUMNS " FROM canaries WHERE agent_dir = ?1 AND state = 'running'";
constexpr char kSelectAll[] =
    "SELECT " MEND_CANARY_COLUMNS " FROM canaries ORDER BY started_ns DESC, proposal_id DESC";
constexpr char kInsert[] = "INSERT INTO canaries (" MEND_CANARY_COLUMNS
                           ", started_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                           "?12, ?13, ?14)";
constexpr char kStoreDecision[] =
    "UPDATE canaries SET state = ?2, decided_at = ?3, verdict = ?4, reason = ?5 "
    "WHERE proposal_id = ?1";
constexpr char kSelectOutcomes[] =
    "SELECT proposal_id, run_id, arm, status, error_code, checks_passed, cost_usd, steps, "
    "input_tokens, output_tokens, recorded_at FROM canary_runs WHERE proposal_id = ?1 "
    "ORDER BY run_id";
constexpr char kUpsertOutcome[] = R"sql(
INSERT INTO canary_runs (proposal_id, run_id, arm, status, error_code, checks_passed, cost_usd,
                         steps, input_tokens, output_tokens, recorded_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
ON CONFLICT (proposal_id, run_id) DO UPDATE SET
  arm = excluded.arm, status = excluded.status, error_code = excluded.error_code,
  checks_passed = excluded.checks_passed, cost_usd = excluded.cost_usd, steps = excluded.steps,
  input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
  recorded_at = excluded.recorded_at
)sql";

class SqliteCanaryStore final : public CanaryStore {
 public:
  SqliteCanaryStore(std::string path, Clock& clock, std::unique_ptr<SqliteConn> db)
      : path_(std::move(path)), clock_(clock), db_(std::move(db)) {}

  Status Init() {
    std::lock_guard<std::mutex> lock(mu_);
    // When this store creates mend.db, it sets what the run store sets on a new database only
    // (page size and incremental vacuum take effect on an empty file alone), so the file is the
    // same whichever store opened it first.
    MEND_ASSIGN_OR_RETURN(const int64_t pages, db_->QueryInt("PRAGMA page_count"));
    if (pages == 0) {
      MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA page_size = 8192"));
      MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA auto_vacuum = INCREMENTAL"));
    }
    MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA journal_mode = WAL"));
    MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA synchronous = FULL"));
    MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA foreign_keys = ON"));
    return db_->InTransaction(SqliteConn::TxKind::kWrite, [&]() -> Status {
      MEND_RETURN_IF_ERROR(db_->Exec(kCreateMeta));
      MEND_ASSIGN_OR_RETURN(SqliteStmt select, db_->Prepare(kSelectVersion));
      MEND_ASSIGN_OR_RETURN(bool found, select.Step());
      if (found) {
        const std::string text = select.Text(0);
        int64_t v = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (error != std::errc() || end != text.data() + text.size() || v < 1) {
          return DataLossError(path_ + ": unreadable canary schema version \"" + text + "\"");
        }
        if (v > kSchemaVersion) {
          return FailedPreconditionError(
              path_ + ": the canaries' tables were written by a newer mend (schema " +
              std::to_string(v) + " > " + std::to_string(kSchemaVersion) + "); upgrade mend");
        }
        return OkStatus();
      }
      MEND_RETURN_IF_ERROR(db_->Exec(kSchema));
      MEND_ASSIGN_OR_RETURN(SqliteStmt insert, db_->Prepare(kInsertVersion));
      return insert.BindText(1, std::to_string(kSchemaVersion)).Run();
    });
  }

  Status Start(const Canary& canary) override {
    MEND_RETURN_IF_ERROR(internal::CheckNewCanary(canary));
    const Time now = clock_.Now();
    const Canary row = internal::NewRunningCanary(canary, now);
    std::lock_guard<std::mutex> lock(mu_);
    return db_->InTransaction(SqliteConn::TxKind::kWrite, [&]() -> Status {
      MEND_ASSIGN_OR_RETURN(std::optional<Canary> before, FindLocked(kSelectOne, row.proposal_id));
      if (before.has_value()) {
        return AlreadyExistsError("proposal " + row.proposal_id + " was canaried before (" +
                                  std::string(CanaryStateName(before->state)) + ")");
      }
      MEND_ASSIGN_OR_RETURN(std::optional<Canary> running,
                            FindLocked(kSelectRunning, row.agent_dir));
      if (running.has_value()) {
        return AlreadyExistsError("agent folder " + row.agent_dir +
                                  " already has a running canary: proposal " +
                                  running->proposal_id);
      }
      MEND_ASSIGN_OR_RETURN(SqliteStmt insert, db_->Prepare(kInsert));
      insert.BindText(1, row.proposal_id).BindText(2, row.agent_dir).BindDouble(3, row.percent);
      insert.Bind(4, row.auto_decide ? 1 : 0).Bind(5, row.rule.min_runs).Bind(6, row.rule.max_runs);
      insert.BindDouble(7, row.rule.confidence).BindDouble(8, row.rule.max_cost_increase);
      insert.BindText(9, CanaryStateName(row.state)).BindText(10, row.started_at);
      insert.BindText(11, "").BindText(12, "").BindText(13, "");
      return insert.Bind(14, internal::UnixNanos(now)).Run();
    });
  }

  Result<Canary> Get(std::string_view proposal_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    return GetLocked(proposal_id);
  }

  Result<std::optional<Canary>> Running(std::string_view agent_dir) override {
    std::lock_guard<std::mutex> lock(mu_);
    return FindLocked(kSelectRunning, agent_dir);
  }

  Result<std::vector<Canary>> List() override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSelectAll));
    std::vector<Canary> out;
    for (;;) {
      MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      MEND_ASSIGN_OR_RETURN(Canary canary, CanaryAt(stmt));
      out.push_back(std::move(canary));
    }
    return out;
  }

  Status RecordOutcome(const CanaryRunOutcome& outcome) override {
    const std::string recorded_at = FormatRfc3339(clock_.Now());
    std::lock_guard<std::mutex> lock(mu_);
    return db_->InTransaction(SqliteConn::TxKind::kWrite, [&]() -> Status {
      MEND_ASSIGN_OR_RETURN(Canary canary, GetLocked(outcome.proposal_id));
      MEND_RETURN_IF_ERROR(internal::CheckOutcome(canary, outcome));
      const ArmRun& run = outcome.run;
      MEND_ASSIGN_OR_RETURN(SqliteStmt upsert, db_->Prepare(kUpsertOutcome));
      upsert.BindText(1, outcome.proposal_id).BindText(2, outcome.run_id).BindText(3, outcome.arm);
      upsert.BindText(4, store::RunStatusName(run.status)).BindText(5, run.error_code);
      upsert.Bind(6, run.checks_passed ? 1 : 0).BindDouble(7, run.cost_usd).Bind(8, run.steps);
      upsert.Bind(9, run.input_tokens).Bind(10, run.output_tokens).BindText(11, recorded_at);
      return upsert.Run();
    });
  }

  Result<std::vector<CanaryRunOutcome>> Outcomes(std::string_view proposal_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<CanaryRunOutcome> out;
    MEND_RETURN_IF_ERROR(db_->InTransaction(SqliteConn::TxKind::kRead, [&]() -> Status {
      MEND_RETURN_IF_ERROR(GetLocked(proposal_id).status());
      MEND_ASSIGN_OR_RETURN(out, OutcomesLocked(proposal_id));
      return OkStatus();
    }));
    return out;
  }

  Result<Canary> Decide(
      std::string_view proposal_id,
      const std::function<Status(Canary&, const std::vector<CanaryRunOutcome>&)>& decide) override {
    // The write lock is taken before the canary is read (BEGIN IMMEDIATE) and held while `decide`
    // runs: a decider of another process waits for it and then finds the canary decided, and no
    // outcome is recorded meanwhile.
    std::lock_guard<std::mutex> lock(mu_);
    Canary after;
    MEND_RETURN_IF_ERROR(db_->InTransaction(SqliteConn::TxKind::kWrite, [&]() -> Status {
      MEND_ASSIGN_OR_RETURN(Canary before, GetLocked(proposal_id));
      if (before.state != CanaryState::kRunning) return internal::NotRunningError(before);
      MEND_ASSIGN_OR_RETURN(std::vector<CanaryRunOutcome> outcomes, OutcomesLocked(proposal_id));
      Canary decided = before;
      MEND_RETURN_IF_ERROR(decide(decided, outcomes));
      MEND_ASSIGN_OR_RETURN(after, internal::TakeDecision(before, decided, clock_.Now()));
      MEND_ASSIGN_OR_RETURN(SqliteStmt update, db_->Prepare(kStoreDecision));
      update.BindText(1, after.proposal_id).BindText(2, CanaryStateName(after.state));
      update.BindText(3, after.decided_at).BindText(4, after.verdict).BindText(5, after.reason);
      return update.Run();
    }));
    return after;
  }

 private:
  Status Corrupt(const std::string& what, const Status& why) const {
    return DataLossError(path_ + ": " + what + ": " + std::string(why.message()));
  }

  Result<Canary> CanaryAt(const SqliteStmt& s) const {
    Canary c;
    c.proposal_id = s.Text(0);
    c.agent_dir = s.Text(1);
    c.percent = s.Double(2);
    c.auto_decide = s.Int(3) != 0;
    c.rule.min_runs = s.Int(4);
    c.rule.max_runs = s.Int(5);
    c.rule.confidence = s.Double(6);
    c.rule.max_cost_increase = s.Double(7);
    Result<CanaryState> state = ParseCanaryState(s.Text(8));
    if (!state.ok()) return Corrupt("canary " + c.proposal_id, state.status());
    c.state = *state;
    c.started_at = s.Text(9);
    c.decided_at = s.Text(10);
    c.verdict = s.Text(11);
    c.reason = s.Text(12);
    return c;
  }

  Result<CanaryRunOutcome> OutcomeAt(const SqliteStmt& s) const {
    CanaryRunOutcome o;
    o.proposal_id = s.Text(0);
    o.run_id = s.Text(1);
    o.arm = s.Text(2);
    Result<store::RunStatus> status = store::ParseRunStatus(s.Text(3));
    if (!status.ok()) {
      return Corrupt("run " + o.run_id + " of canary " + o.proposal_id, status.status());
    }
    o.run.status = *status;
    o.run.error_code = s.Text(4);
    o.run.checks_passed = s.Int(5) != 0;
    o.run.cost_usd = s.Double(6);
    o.run.steps = s.Int(7);
    o.run.input_tokens = s.Int(8);
    o.run.output_tokens = s.Int(9);
    o.recorded_at = s.Text(10);
    return o;
  }

  // The canary `sql` selects by `key`, if any. mu_ held.
  Result<std::optional<Canary>> FindLocked(const char* sql, std::string_view key) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(sql));
    stmt.BindText(1, key);
    MEND_ASSIGN_OR_RETURN(bool found, stmt.Step());
    if (!found) return std::optional<Canary>();
    MEND_ASSIGN_OR_RETURN(Canary canary, CanaryAt(stmt));
    return std::optional<Canary>(std::move(canary));
  }

  Result<Canary> GetLocked(std::string_view proposal_id) {
    MEND_ASSIGN_OR_RETURN(std::optional<Canary> canary, FindLocked(kSelectOne, proposal_id));
    if (!canary.has_value()) {
      return NotFoundError("no canary for proposal " + std::string(proposal_id));
    }
    return *std::move(canary);
  }

  Result<std::vector<CanaryRunOutcome>> OutcomesLocked(std::string_view proposal_id) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSelectOutcomes));
    stmt.BindText(1, proposal_id);
    std::vector<CanaryRunOutcome> out;
    for (;;) {
      MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      MEND_ASSIGN_OR_RETURN(CanaryRunOutcome outcome, OutcomeAt(stmt));
      out.push_back(std::move(outcome));
    }
    return out;
  }

  const std::string path_;
  Clock& clock_;
  std::mutex mu_;
  std::unique_ptr<SqliteConn> db_;  // guarded by mu_
};

}  // namespace

Result<std::unique_ptr<CanaryStore>> OpenSqliteCanaryStore(const std::string& path, Clock& clock) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConn> db,
                        SqliteConn::Open(path, db::SqliteOptions{}));
  auto store = std::make_unique<SqliteCanaryStore>(path, clock, std::move(db));
  MEND_RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<CanaryStore>(std::move(store));
}

Result<int64_t> ReadSqliteCanaryStoreSchemaVersion(const std::string& path) {
  return db::ReadSqliteMetaVersion(path, kVersionKey);
}

}  // namespace mend::improve
