// The canaries of every replica on one PostgreSQL database (canary_store.h): `canaries`, one row
// per canary, and `canary_runs`, one row per recorded run, versioned in the shared `meta` table
// under canary.schema_version. A partial unique index keeps one running canary per agent folder. A
// decision locks the canary's row (FOR UPDATE) and an outcome shares that lock (FOR SHARE), so
// replicas decide a canary once and record nothing while it is being decided.
#include <algorithm>
#include <charconv>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "improve/canary_store_checks.h"
#include "mend/base/time_format.h"
#include "mend/db/pg_conn.h"
#include "mend/db/schema_read.h"
#include "mend/improve/canary_store.h"
#include "mend/store/postgres_store.h"
#include "mend/store/run_record.h"

namespace mend::improve {
namespace {

using db::PgConn;
using db::PgParam;
using db::PgPool;
using db::PgResult;

constexpr int64_t kSchemaVersion = 1;
// The key the other stores take while they create their tables: one schema change at a time in
// the database.
constexpr char kLockSchema[] = "SELECT pg_advisory_xact_lock(7230188513270843394)";
constexpr char kCreateMeta[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
constexpr char kSelectVersion[] = "SELECT value FROM meta WHERE key = 'canary.schema_version'";
constexpr char kInsertVersion[] =
    "INSERT INTO meta (key, value) VALUES ('canary.schema_version', $1)";

// Version 1. `started_ns` (nanoseconds since the epoch) orders List; started_at is its text.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE canaries (
  proposal_id       TEXT PRIMARY KEY,
  agent_dir         TEXT NOT NULL,
  percent           DOUBLE PRECISION NOT NULL,
  auto_decide       BOOLEAN NOT NULL,
  min_runs          BIGINT NOT NULL,
  max_runs          BIGINT NOT NULL,
  confidence        DOUBLE PRECISION NOT NULL,
  max_cost_increase DOUBLE PRECISION NOT NULL,
  state             TEXT NOT NULL CHECK (state IN ('running', 'promoted', 'rolled_back')),
  started_at        TEXT NOT NULL,
  started_ns        BIGINT NOT NULL,
  decided_at        TEXT NOT NULL DEFAULT '',
  verdict           TEXT NOT NULL DEFAULT '',
  reason            TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX canaries_running_agent ON canaries (agent_dir) WHERE state = 'running';
CREATE TABLE canary_runs (
  proposal_id   TEXT NOT NULL REFERENCES canaries (proposal_id),
  run_id        TEXT NOT NULL,
  arm           TEXT NOT NULL,
  status        TEXT NOT NULL,
  error_code    TEXT NOT NULL,
  checks_passed BOOLEAN NOT NULL,
  cost_usd      DOUBLE PRECISION NOT NULL,
  steps         BIGINT NOT NULL,
  input_tokens  BIGINT NOT NULL,
  output_tokens BIGINT NOT NULL,
  recorded_at   TEXT NOT NULL,
  PRIMARY KEY (proposal_id, run_id)
);
)sql";

#define MEND_PG_CANARY_COLUMNS                                                     \
  "proposal_id, agent_dir, percent, auto_decide, min_runs, max_runs, confidence, " \
  "max_cost_increase, state, started_at, decided_at, verdict, reason"
constexpr char kSelectOne[] =
    "SELECT " MEND_PG_CANARY_COLUMNS " FROM canaries WHERE proposal_id = $1";
constexpr char kSelectRunning[] =
    "SELECT " MEND_PG_CANARY_COLUMNS " FROM canaries WHERE agent_dir = $1 AND state = 'running'";
// Ids compare byte by byte whatever the database's collation.
constexpr char kSelectAll[] = "SELECT " MEND_PG_CANARY_COLUMNS
                              " FROM canaries ORDER BY started_ns DESC, proposal_id COLLATE \"C\" "
                              "DESC";
constexpr char kLockForDecision[] =
    "SELECT " MEND_PG_CANARY_COLUMNS " FROM canaries WHERE proposal_id = $1 FOR UPDATE";
constexpr char kLockForOutcome[] =
    "SELECT " MEND_PG_CANARY_COLUMNS " FROM canaries WHERE proposal_id = $1 FOR SHARE";
// A conflict on either unique index (the proposal, the agent's running canary) inserts nothing;
// Start then says which.
constexpr char kInsert[] = "INSERT INTO canaries (" MEND_PG_CANARY_COLUMNS
                           ", started_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
                           "$12, $13, $14) ON CONFLICT DO NOTHING RETURNING proposal_id";
constexpr char kStoreDecision[] =
    "UPDATE canaries SET state = $2, decided_at = $3, verdict = $4, reason = $5 "
    "WHERE proposal_id = $1";
constexpr char kSelectOutcomes[] =
    "SELECT proposal_id, run_id, arm, status, error_code, checks_passed, cost_usd, steps, "
    "input_tokens, output_tokens, recorded_at FROM canary_runs WHERE proposal_id = $1 "
    "ORDER BY run_id COLLATE \"C\"";
constexpr char kUpsertOutcome[] = R"sql(
INSERT INTO canary_runs (proposal_id, run_id, arm, status, error_code, checks_passed, cost_usd,
                         steps, input_tokens, output_tokens, recorded_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (proposal_id, run_id) DO UPDATE SET
  arm = EXCLUDED.arm, status = EXCLUDED.status, error_code = EXCLUDED.error_code,
  checks_passed = EXCLUDED.checks_passed, cost_usd = EXCLUDED.cost_usd, steps = EXCLUDED.steps,
  input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens,
  recorded_at = EXCLUDED.recorded_at
)sql";

// Shortest text that reads back as the same double.
PgParam Double(double v) {
  char buf[32];
  return PgParam::Text(std::string_view(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr - buf));
}
PgParam Bool(bool v) { return PgParam::Text(v ? "true" : "false"); }

class PgCanaryStore final : public CanaryStore {
 public:
  PgCanaryStore(const PostgresCanaryStoreOptions& options, Clock& clock)
      : options_(options),
        clock_(clock),
        pool_(
            options.url, options.connect_timeout, std::max(1, options.pool_size),
            [this](PgConn& conn) { return SetUp(conn); }, options.connections) {}

  Status Init();

  Status Start(const Canary& canary) override {
    MEND_RETURN_IF_ERROR(internal::CheckNewCanary(canary));
    const Time now = clock_.Now();
    const Canary row = internal::NewRunningCanary(canary, now);
    return db::PgTransact(pool_, "BEGIN", [&](PgConn& conn) -> Status {
      MEND_ASSIGN_OR_RETURN(
          PgResult inserted,
          conn.Exec(kInsert,
                    {PgParam::Text(row.proposal_id), PgParam::Text(row.agent_dir),
                     Double(row.percent), Bool(row.auto_decide), PgParam::Int(row.rule.min_runs),
                     PgParam::Int(row.rule.max_runs), Double(row.rule.confidence),
                     Double(row.rule.max_cost_increase), PgParam::Text(CanaryStateName(row.state)),
                     PgParam::Text(row.started_at), PgParam::Text(""), PgParam::Text(""),
                     PgParam::Text(""), PgParam::Int(internal::UnixNanos(now))},
                    PgConn::Plan::kPrepared));
      if (inserted.rows() > 0) return OkStatus();
      return WhyNotStarted(conn, row);
    });
  }

  Result<Canary> Get(std::string_view proposal_id) override {
    std::optional<Canary> found;
    MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
      MEND_ASSIGN_OR_RETURN(found, FindOne(conn, kSelectOne, proposal_id));
      return OkStatus();
    }));
    if (!found.has_value()) return NotFound(proposal_id);
    return *std::move(found);
  }

  Result<std::optional<Canary>> Running(std::string_view agent_dir) override {
    std::optional<Canary> found;
    MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
      MEND_ASSIGN_OR_RETURN(found, FindOne(conn, kSelectRunning, agent_dir));
      return OkStatus();
    }));
    return found;
  }

  Result<std::vector<Canary>> List() override {
    std::vector<Canary> out;
    MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
      out.clear();
      MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kSelectAll));
      for (int r = 0; r < res.rows(); ++r) {
        MEND_ASSIGN_OR_RETURN(Canary canary, CanaryAt(res, r));
        out.push_back(std::move(canary));
      }
      return OkStatus();
    }));
    return out;
  }

  Status RecordOutcome(const CanaryRunOutcome& outcome) override {
    const std::string recorded_at = FormatRfc3339(clock_.Now());
    const ArmRun& run = outcome.run;
    return db::PgTransact(pool_, "BEGIN", [&](PgConn& conn) -> Status {
      // The shared row lock waits for a decider holding the canary, then reads what it stored.
      MEND_ASSIGN_OR_RETURN(std::optional<Canary> canary,
                            FindOne(conn, kLockForOutcome, outcome.proposal_id));
      if (!canary.has_value()) return NotFound(outcome.proposal_id);
      MEND_RETURN_IF_ERROR(internal::CheckOutcome(*canary, outcome));
      return conn
          .Exec(kUpsertOutcome,
                {PgParam::Text(outcome.proposal_id), PgParam::Text(outcome.run_id),
                 PgParam::Text(outcome.arm), PgParam::Text(store::RunStatusName(run.status)),
                 PgParam::Text(run.error_code), Bool(run.checks_passed), Double(run.cost_usd),
                 PgParam::Int(run.steps), PgParam::Int(run.input_tokens),
                 PgParam::Int(run.output_tokens), PgParam::Text(recorded_at)},
                PgConn::Plan::kPrepared)
          .status();
    });
  }

  Result<std::vector<CanaryRunOutcome>> Outcomes(std::string_view proposal_id) override {
    std::vector<CanaryRunOutcome> out;
    MEND_RETURN_IF_ERROR(db::PgTransact(
        pool_, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", [&](PgConn& conn) -> Status {
          MEND_ASSIGN_OR_RETURN(std::optional<Canary> canary,
                                FindOne(conn, kSelectOne, proposal_id));
          if (!canary.has_value()) return NotFound(proposal_id);
          MEND_ASSIGN_OR_RETURN(out, OutcomesOf(conn, proposal_id));
          return OkStatus();
        }));
    return out;
  }

  Result<Canary> Decide(
      std::string_view proposal_id,
      const std::function<Status(Canary&, const std::vector<CanaryRunOutcome>&)>& decide) override {
    Canary after;
    bool ran = false;
    MEND_RETURN_IF_ERROR(db::PgTransact(pool_, "BEGIN", [&](PgConn& conn) -> Status {
      if (ran) {
        // The connection broke after `decide` acted (it may have written files): not again.
        return UnavailableError("the connection to PostgreSQL was lost while canary " +
                                std::string(proposal_id) +
                                " was decided; it is still running and the decision's effects "
                                "may have happened: check the agent folder");
      }
      MEND_ASSIGN_OR_RETURN(std::optional<Canary> before,
                            FindOne(conn, kLockForDecision, proposal_id));
      if (!before.has_value()) return NotFound(proposal_id);
      if (before->state != CanaryState::kRunning) return internal::NotRunningError(*before);
      MEND_ASSIGN_OR_RETURN(std::vector<CanaryRunOutcome> outcomes, OutcomesOf(conn, proposal_id));
      Canary decided = *before;
      ran = true;
      MEND_RETURN_IF_ERROR(decide(decided, outcomes));
      MEND_ASSIGN_OR_RETURN(after, internal::TakeDecision(*before, decided, clock_.Now()));
      return conn
          .Exec(kStoreDecision,
                {PgParam::Text(after.proposal_id), PgParam::Text(CanaryStateName(after.state)),
                 PgParam::Text(after.decided_at), PgParam::Text(after.verdict),
                 PgParam::Text(after.reason)})
          .status();
    }));
    return after;
  }

 private:
  Status SetUp(PgConn& conn) {
    if (options_.schema.empty()) return OkStatus();
    return conn
        .Exec("SELECT set_config('search_path', $1, false)",
              {PgParam::Text(db::QuoteIdentifier(options_.schema))})
        .status();
  }

  std::string Where() const {
    return store::MaskPostgresUrl(options_.url) +
           (options_.schema.empty() ? "" : " (schema " + options_.schema + ")");
  }

  static Status NotFound(std::string_view proposal_id) {
    return NotFoundError("no canary for proposal " + std::string(proposal_id));
  }

  Status Corrupt(const std::string& what, std::string_view why) const {
    return DataLossError(Where() + ": " + what + ": " + std::string(why));
  }

  // Start inserted nothing: the proposal was canaried before, or its agent has a running canary.
  Status WhyNotStarted(PgConn& conn, const Canary& row) {
    MEND_ASSIGN_OR_RETURN(std::optional<Canary> before, FindOne(conn, kSelectOne, row.proposal_id));
    if (before.has_value()) {
      return AlreadyExistsError("proposal " + row.proposal_id + " was canaried before (" +
                                std::string(CanaryStateName(before->state)) + ")");
    }
    MEND_ASSIGN_OR_RETURN(std::optional<Canary> running,
                          FindOne(conn, kSelectRunning, row.agent_dir));
    if (running.has_value()) {
      return AlreadyExistsError("agent folder " + row.agent_dir +
                                " already has a running canary: proposal " + running->proposal_id);
    }
    // The conflicting canary was decided since: starting again may succeed.
    return UnavailableError("the running canary of " + row.agent_dir + " changed while canary " +
                            row.proposal_id + " started; try again");
  }

  Result<double> DoubleAt(const PgResult& res, int r, int col, const std::string& what) const {
    const std::string text = res.Text(r, col);
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return Corrupt(what, "unreadable number \"" + text + "\" in " + res.ColumnName(col));
    }
    return v;
  }

  Result<int64_t> IntAt(const PgResult& res, int r, int col, const std::string& what) const {
    std::optional<int64_t> v = res.Int(r, col);
    if (!v.has_value()) return Corrupt(what, std::string("no integer in ") + res.ColumnName(col));
    return *v;
  }

  Result<Canary> CanaryAt(const PgResult& res, int r) const {
    Canary c;
    c.proposal_id = res.Text(r, 0);
    const std::string what = "canary " + c.proposal_id;
    c.agent_dir = res.Text(r, 1);
    MEND_ASSIGN_OR_RETURN(c.percent, DoubleAt(res, r, 2, what));
    c.auto_decide = res.Text(r, 3) == "t";
    MEND_ASSIGN_OR_RETURN(c.rule.min_runs, IntAt(res, r, 4, what));
    MEND_ASSIGN_OR_RETURN(c.rule.max_runs, IntAt(res, r, 5, what));
    MEND_ASSIGN_OR_RETURN(c.rule.confidence, DoubleAt(res, r, 6, what));
    MEND_ASSIGN_OR_RETURN(c.rule.max_cost_increase, DoubleAt(res, r, 7, what));
    Result<CanaryState> state = ParseCanaryState(res.Text(r, 8));
    if (!state.ok()) return Corrupt(what, state.status().message());
    c.state = *state;
    c.started_at = res.Text(r, 9);
    c.decided_at = res.Text(r, 10);
    c.verdict = res.Text(r, 11);
    c.reason = res.Text(r, 12);
    return c;
  }

  Result<CanaryRunOutcome> OutcomeAt(const PgResult& res, int r) const {
    CanaryRunOutcome o;
    o.proposal_id = res.Text(r, 0);
    o.run_id = res.Text(r, 1);
    const std::string what = "run " + o.run_id + " of canary " + o.proposal_id;
    o.arm = res.Text(r, 2);
    Result<store::RunStatus> status = store::ParseRunStatus(res.Text(r, 3));
    if (!status.ok()) return Corrupt(what, status.status().message());
    o.run.status = *status;
    o.run.error_code = res.Text(r, 4);
    o.run.checks_passed = res.Text(r, 5) == "t";
    MEND_ASSIGN_OR_RETURN(o.run.cost_usd, DoubleAt(res, r, 6, what));
    MEND_ASSIGN_OR_RETURN(o.run.steps, IntAt(res, r, 7, what));
    MEND_ASSIGN_OR_RETURN(o.run.input_tokens, IntAt(res, r, 8, what));
    MEND_ASSIGN_OR_RETURN(o.run.output_tokens, IntAt(res, r, 9, what));
    o.recorded_at = res.Text(r, 10);
    return o;
  }

  // The canary `sql` selects by `key`, if any.
  Result<std::optional<Canary>> FindOne(PgConn& conn, const char* sql, std::string_view key) {
    MEND_ASSIGN_OR_RETURN(PgResult res,
                          conn.Exec(sql, {PgParam::Text(key)}, PgConn::Plan::kPrepared));
    if (res.rows() == 0) return std::optional<Canary>();
    MEND_ASSIGN_OR_RETURN(Canary canary, CanaryAt(res, 0));
    return std::optional<Canary>(std::move(canary));
  }

  Result<std::vector<CanaryRunOutcome>> OutcomesOf(PgConn& conn, std::string_view proposal_id) {
    MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kSelectOutcomes, {PgParam::Text(proposal_id)},
                                                  PgConn::Plan::kPrepared));
    std::vector<CanaryRunOutcome> out;
    for (int r = 0; r < res.rows(); ++r) {
      MEND_ASSIGN_OR_RETURN(CanaryRunOutcome outcome, OutcomeAt(res, r));
      out.push_back(std::move(outcome));
    }
    return out;
  }

  // One statement outside a transaction; a pooled connection the server closed meanwhile is
  // replaced once.
  Status ReadOne(const std::function<Status(PgConn&)>& body) {
    Status s;
    for (int attempt = 1; attempt <= 2; ++attempt) {
      MEND_ASSIGN_OR_RETURN(PgPool::Handle conn, pool_.Acquire());
      s = body(*conn);
      if (s.ok() || conn->healthy()) return s;
    }
    return s;
  }

  const PostgresCanaryStoreOptions options_;
  Clock& clock_;
  PgPool pool_;
};

Status PgCanaryStore::Init() {
  if (options_.url.empty()) return InvalidArgumentError("the PostgreSQL canary store needs a URL");
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<PgConn> conn,
                        PgConn::Connect(options_.url, options_.connect_timeout));
  return db::PgTransactOn(*conn, [&](PgConn& c) -> Status {
    MEND_RETURN_IF_ERROR(c.Run(kLockSchema));
    if (!options_.schema.empty()) {
      const std::string create =
          "CREATE SCHEMA IF NOT EXISTS " + db::QuoteIdentifier(options_.schema);
      MEND_RETURN_IF_ERROR(c.Run(create.c_str()));
    }
    MEND_RETURN_IF_ERROR(SetUp(c));
    MEND_RETURN_IF_ERROR(c.Run(kCreateMeta));
    MEND_ASSIGN_OR_RETURN(PgResult version, c.Exec(kSelectVersion));
    if (version.rows() > 0) {
      const std::optional<int64_t> v = version.Int(0, 0);
      if (!v.has_value() || *v < 1) {
        return DataLossError(Where() + ": unreadable canary schema version \"" +
                             version.Text(0, 0) + "\"");
      }
      if (*v > kSchemaVersion) {
        return FailedPreconditionError(
            Where() + ": the canaries' tables were written by a newer mend (schema " +
            std::to_string(*v) + " > " + std::to_string(kSchemaVersion) + "); upgrade mend");
      }
      return OkStatus();
    }
    MEND_RETURN_IF_ERROR(c.Run(kSchemaV1));
    return c.Exec(kInsertVersion, {PgParam::Int(kSchemaVersion)}).status();
  });
}

}  // namespace

Result<std::unique_ptr<CanaryStore>> OpenPostgresCanaryStore(
    const PostgresCanaryStoreOptions& options, Clock& clock) {
  auto store = std::make_unique<PgCanaryStore>(options, clock);
  MEND_RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<CanaryStore>(std::move(store));
}

int64_t CanaryStoreSchemaVersion() { return kSchemaVersion; }

Result<int64_t> ReadPostgresCanaryStoreSchemaVersion(const std::string& url,
                                                     const std::string& schema) {
  return db::ReadPostgresMetaVersion(url, schema, std::chrono::seconds(5), "canary.schema_version");
}

}  // namespace mend::improve
