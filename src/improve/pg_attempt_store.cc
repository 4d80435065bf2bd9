// The attempts of every host on one PostgreSQL database (attempt_store.h): one row per attempt
// with where its audit folder is, what it came to and its proposal. A decision locks the row, so
// two replicas cannot both apply one proposal.
#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/home_layout.h"
#include "mend/db/pg_conn.h"
#include "mend/db/schema_read.h"
#include "mend/improve/attempt_store.h"
#include "mend/improve/audit.h"
#include "mend/store/postgres_store.h"

namespace mend::improve {
namespace {

using db::PgConn;
using db::PgParam;
using db::PgPool;
using db::PgResult;

constexpr int64_t kSchemaVersion = 1;
constexpr char kVersionKey[] = "improve.schema_version";
// The key the runs and memory stores take while they create their tables: one schema change at a
// time in the database.
constexpr char kLockSchema[] = "SELECT pg_advisory_xact_lock(7230188513270843394)";
constexpr char kCreateMeta[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
constexpr char kSelectVersion[] = "SELECT value FROM meta WHERE key = 'improve.schema_version'";
constexpr char kInsertVersion[] =
    "INSERT INTO meta (key, value) VALUES ('improve.schema_version', $1)";

// Version 1. `host` and `home` say where the audit folder `audit_dir` is; `outcome` and `gate`
// are ListAttempts' words; `proposal` is proposal.json's text, NULL when the attempt made none,
// and `proposal_status` its status, kept apart so a list reads no proposal.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE improve_attempts (
  attempt_id      TEXT PRIMARY KEY,
  host            TEXT NOT NULL,
  home            TEXT NOT NULL,
  audit_dir       TEXT NOT NULL,
  agent_dir       TEXT NOT NULL,
  outcome         TEXT NOT NULL,
  gate            TEXT NOT NULL,
  proposal_status TEXT CHECK (proposal_status IN ('queued', 'applied', 'rejected')),
  proposal        TEXT,
  decided_host    TEXT NOT NULL DEFAULT ''
);
)sql";

// Adds or refreshes an attempt of this host. A proposal already stored is kept unless the new one
// is given ($8 not NULL) and the stored one is still queued; a row of another host or home is
// left alone (no row comes back then).
constexpr char kUpsert[] = R"sql(
INSERT INTO improve_attempts AS a
  (attempt_id, host, home, audit_dir, agent_dir, outcome, gate, proposal_status, proposal)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (attempt_id) DO UPDATE SET
  agent_dir = EXCLUDED.agent_dir,
  outcome = EXCLUDED.outcome,
  gate = EXCLUDED.gate,
  proposal_status = CASE WHEN EXCLUDED.proposal IS NOT NULL AND
                              (a.proposal IS NULL OR a.proposal_status = 'queued')
                         THEN EXCLUDED.proposal_status ELSE a.proposal_status END,
  proposal = CASE WHEN EXCLUDED.proposal IS NOT NULL AND
                       (a.proposal IS NULL OR a.proposal_status = 'queued')
                  THEN EXCLUDED.proposal ELSE a.proposal END
WHERE a.host = EXCLUDED.host AND a.home = EXCLUDED.home
RETURNING attempt_id
)sql";

#define MEND_PG_ATTEMPT_COLUMNS \
  "attempt_id, host, home, audit_dir, agent_dir, outcome, gate, proposal_status"
constexpr char kSelectAll[] =
    "SELECT " MEND_PG_ATTEMPT_COLUMNS " FROM improve_attempts ORDER BY attempt_id DESC";
constexpr char kSelectOne[] =
    "SELECT " MEND_PG_ATTEMPT_COLUMNS " FROM improve_attempts WHERE attempt_id = $1";
constexpr char kSelectProposal[] = "SELECT proposal FROM improve_attempts WHERE attempt_id = $1";
constexpr char kLockProposal[] =
    "SELECT proposal FROM improve_attempts WHERE attempt_id = $1 FOR UPDATE";
constexpr char kStoreDecision[] =
    "UPDATE improve_attempts SET proposal = $2, proposal_status = $3, decided_host = $4 "
    "WHERE attempt_id = $1";

struct Row {
  AttemptSummary summary;
  std::string home;
};

Result<ProposalStatus> ParseStatus(const std::string& name) {
  if (name == "queued") return ProposalStatus::kQueued;
  if (name == "applied") return ProposalStatus::kApplied;
  if (name == "rejected") return ProposalStatus::kRejected;
  return DataLossError("unknown proposal status \"" + name + "\"");
}

Result<Row> RowAt(const PgResult& res, int r) {
  Row row;
  AttemptSummary& s = row.summary;
  s.attempt_id = res.Text(r, 0);
  s.host = res.Text(r, 1);
  row.home = res.Text(r, 2);
  s.audit_dir = res.Text(r, 3);
  s.agent_dir = res.Text(r, 4);
  s.outcome = res.Text(r, 5);
  s.gate = res.Text(r, 6);
  if (!res.IsNull(r, 7)) {
    Result<ProposalStatus> status = ParseStatus(res.Text(r, 7));
    if (!status.ok()) {
      return DataLossError("improve attempt " + s.attempt_id + ": " +
                           std::string(status.status().message()));
    }
    s.proposal = *status;
  }
  return row;
}

class PgAttemptStore final : public AttemptStore {
 public:
  PgAttemptStore(const PostgresAttemptStoreOptions& options, FileSystem& fs)
      : options_(options),
        fs_(fs),
        local_(OpenLocalAttemptStore(fs, options.home)),
        pool_(
            options.url, options.connect_timeout, std::max(1, options.pool_size),
            [this](PgConn& conn) { return SetUp(conn); }, options.connections) {}

  Status Init();

  Status RecordAttempt(std::string_view attempt_id) override {
    MEND_ASSIGN_OR_RETURN(AttemptSummary summary, local_->Summary(attempt_id));
    std::optional<Proposal> proposal;
    Result<Proposal> read = local_->GetProposal(attempt_id);
    if (read.ok()) {
      proposal = *std::move(read);
    } else if (read.status().code() != StatusCode::kNotFound) {
      return read.status();
    }
    return ReadOne([&](PgConn& conn) { return Upsert(conn, summary, proposal); });
  }

  Status PutProposal(const Proposal& proposal) override {
    // proposal.json stays in the audit folder too, so the folder is a whole record by itself.
    MEND_RETURN_IF_ERROR(local_->PutProposal(proposal));
    MEND_ASSIGN_OR_RETURN(AttemptSummary summary, local_->Summary(proposal.attempt_id));
    return ReadOne([&](PgConn& conn) { return Upsert(conn, summary, proposal); });
  }

  Result<Proposal> GetProposal(std::string_view attempt_id) override {
    MEND_RETURN_IF_ERROR(CheckId(attempt_id));
    std::optional<std::optional<std::string>> stored;  // no row / a row without a proposal
    MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
      MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kSelectProposal, {PgParam::Text(attempt_id)},
                                                    PgConn::Plan::kPrepared));
      stored.reset();
      if (res.rows() > 0) {
        stored.emplace();
        if (!res.IsNull(0, 0)) *stored = res.Text(0, 0);
      }
      return OkStatus();
    }));
    if (!stored.has_value()) return local_->GetProposal(attempt_id);  // not recorded yet
    if (!stored->has_value()) {
      return NotFoundError("improve attempt " + std::string(attempt_id) + " made no proposal");
    }
    return Parse(attempt_id, **stored);
  }

  Result<std::vector<AttemptSummary>> List() override {
    std::vector<Row> rows;
    MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
      rows.clear();
      MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kSelectAll));
      for (int r = 0; r < res.rows(); ++r) {
        MEND_ASSIGN_OR_RETURN(Row row, RowAt(res, r));
        rows.push_back(std::move(row));
      }
      return OkStatus();
    }));
    std::set<std::string> recorded;
    std::vector<AttemptSummary> out;
    for (Row& row : rows) {
      recorded.insert(row.summary.attempt_id);
      out.push_back(std::move(row.summary));
    }
    // This home's attempts not recorded yet: running now, or from before the move to PostgreSQL.
    MEND_ASSIGN_OR_RETURN(std::vector<AttemptSummary> here, local_->List());
    for (AttemptSummary& s : here) {
      if (recorded.count(s.attempt_id) > 0) continue;
      s.host = options_.host;
      s.audit_dir = AuditDir(s.attempt_id);
      out.push_back(std::move(s));
    }
    std::stable_sort(out.begin(), out.end(), [](const AttemptSummary& a, const AttemptSummary& b) {
      return a.attempt_id > b.attempt_id;
    });
    return out;
  }

  Result<Proposal> Decide(std::string_view attempt_id,
                          const std::function<Status(Proposal&)>& decide) override {
    MEND_RETURN_IF_ERROR(CheckId(attempt_id));
    // An attempt of this home not recorded yet is recorded first, so the row is what is locked.
    Result<Row> row = FindRow(attempt_id);
    if (!row.ok() && row.status().code() == StatusCode::kNotFound) {
      MEND_RETURN_IF_ERROR(RecordAttempt(attempt_id));
    } else {
      MEND_RETURN_IF_ERROR(row.status());
    }
    Proposal decided;
    bool ran = false;
    Status s = db::PgTransact(pool_, "BEGIN", [&](PgConn& conn) -> Status {
      if (ran) {
        // The connection broke after `decide` acted (it may have written files): not again.
        return UnavailableError("the connection to PostgreSQL was lost while proposal " +
                                std::string(attempt_id) +
                                " was decided; it is still queued and its files may have been "
                                "written: compare them with `mend improve show " +
                                std::string(attempt_id) + "`");
      }
      MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kLockProposal, {PgParam::Text(attempt_id)}));
      if (res.rows() == 0) {
        return NotFoundError("no improve attempt named " + std::string(attempt_id));
      }
      if (res.IsNull(0, 0)) {
        return NotFoundError("improve attempt " + std::string(attempt_id) + " made no proposal");
      }
      MEND_ASSIGN_OR_RETURN(decided, Parse(attempt_id, res.Text(0, 0)));
      if (decided.status != ProposalStatus::kQueued) {
        return FailedPreconditionError("proposal " + decided.attempt_id + " is already " +
                                       std::string(ProposalStatusName(decided.status)));
      }
      ran = true;
      MEND_RETURN_IF_ERROR(decide(decided));
      return conn
          .Exec(kStoreDecision,
                {PgParam::Text(attempt_id), PgParam::Text(ProposalToJsonText(decided)),
                 PgParam::Text(ProposalStatusName(decided.status)), PgParam::Text(options_.host)})
          .status();
    });
    MEND_RETURN_IF_ERROR(s);
    // The row is the record; the audit folder's copy follows when the folder is on this host.
    MEND_ASSIGN_OR_RETURN(Location where, Locate(attempt_id));
    if (where.here) local_->PutProposal(decided).IgnoreError();
    return decided;
  }

  Result<Location> Locate(std::string_view attempt_id) override {
    MEND_RETURN_IF_ERROR(CheckId(attempt_id));
    Result<Row> row = FindRow(attempt_id);
    if (!row.ok()) {
      if (row.status().code() != StatusCode::kNotFound) return row.status();
      MEND_ASSIGN_OR_RETURN(Location where, local_->Locate(attempt_id));
      where.host = options_.host;
      return where;
    }
    Location where;
    where.host = row->summary.host;
    where.audit_dir = row->summary.audit_dir;
    where.here =
        where.host == options_.host && row->home == options_.home && fs_.Stat(where.audit_dir).ok();
    return where;
  }

  Result<AttemptSummary> Summary(std::string_view attempt_id) override {
    MEND_RETURN_IF_ERROR(CheckId(attempt_id));
    Result<Row> row = FindRow(attempt_id);
    if (row.ok()) return std::move(row->summary);
    if (row.status().code() != StatusCode::kNotFound) return row.status();
    MEND_ASSIGN_OR_RETURN(AttemptSummary s, local_->Summary(attempt_id));
    s.host = options_.host;
    s.audit_dir = AuditDir(s.attempt_id);
    return s;
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

  std::string AuditDir(std::string_view attempt_id) const {
    return home::AttemptDir(options_.home, attempt_id);
  }

  static Status CheckId(std::string_view attempt_id) {
    if (IsValidAttemptId(attempt_id)) return OkStatus();
    return InvalidArgumentError("not an improve attempt id: " + std::string(attempt_id));
  }

  Result<Proposal> Parse(std::string_view attempt_id, const std::string& text) const {
    Result<Proposal> p = ProposalFromJsonText(text);
    const std::string what =
        Where() + ": the proposal of improve attempt " + std::string(attempt_id);
    if (!p.ok()) return DataLossError(what + ": " + std::string(p.status().message()));
    if (p->attempt_id != attempt_id) return DataLossError(what + " names " + p->attempt_id);
    return p;
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

  Result<Row> FindRow(std::string_view attempt_id) {
    std::optional<Row> found;
    MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
      MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kSelectOne, {PgParam::Text(attempt_id)},
                                                    PgConn::Plan::kPrepared));
      found.reset();
      if (res.rows() > 0) {
        MEND_ASSIGN_OR_RETURN(Row row, RowAt(res, 0));
        found = std::move(row);
      }
      return OkStatus();
    }));
    if (!found.has_value()) {
      return NotFoundError("no improve attempt named " + std::string(attempt_id));
    }
    return *std::move(found);
  }

  Status Upsert(PgConn& conn, const AttemptSummary& s, const std::optional<Proposal>& proposal) {
    std::vector<PgParam> params = {PgParam::Text(s.attempt_id),
                                   PgParam::Text(options_.host),
                                   PgParam::Text(options_.home),
                                   PgParam::Text(AuditDir(s.attempt_id)),
                                   PgParam::Text(s.agent_dir),
                                   PgParam::Text(s.outcome),
                                   PgParam::Text(s.gate),
                                   PgParam::Null(),
                                   PgParam::Null()};
    if (proposal.has_value()) {
      params[7] = PgParam::Text(ProposalStatusName(proposal->status));
      params[8] = PgParam::Text(ProposalToJsonText(*proposal));
    }
    MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kUpsert, params, PgConn::Plan::kPrepared));
    if (res.rows() == 0) {
      return AlreadyExistsError("improve attempt " + s.attempt_id + " is recorded in " + Where() +
                                " for another host or home");
    }
    return OkStatus();
  }

  const PostgresAttemptStoreOptions options_;
  FileSystem& fs_;
  std::unique_ptr<AttemptStore> local_;
  PgPool pool_;
};

Status PgAttemptStore::Init() {
  if (options_.url.empty()) return InvalidArgumentError("the PostgreSQL attempt store needs a URL");
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
        return DataLossError(Where() + ": unreadable improve schema version \"" +
                             version.Text(0, 0) + "\"");
      }
      if (*v > kSchemaVersion) {
        return FailedPreconditionError(
            Where() + ": the improve attempts' tables were written by a newer mend (schema " +
            std::to_string(*v) + " > " + std::to_string(kSchemaVersion) + "); upgrade mend");
      }
      return OkStatus();
    }
    MEND_RETURN_IF_ERROR(c.Run(kSchemaV1));
    return c.Exec(kInsertVersion, {PgParam::Int(kSchemaVersion)}).status();
  });
}

}  // namespace

Result<std::unique_ptr<AttemptStore>> OpenPostgresAttemptStore(
    const PostgresAttemptStoreOptions& options, FileSystem& fs) {
  auto store = std::make_unique<PgAttemptStore>(options, fs);
  MEND_RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<AttemptStore>(std::move(store));
}

int64_t PostgresAttemptStoreSchemaVersion() { return kSchemaVersion; }

Result<int64_t> ReadPostgresAttemptStoreSchemaVersion(const std::string& url,
                                                      const std::string& schema) {
  return db::ReadPostgresMetaVersion(url, schema, std::chrono::seconds(5), kVersionKey);
}

}  // namespace mend::improve
