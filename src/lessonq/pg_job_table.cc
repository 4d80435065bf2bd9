#include "lessonq/pg_job_table.h"

#include <chrono>
#include <utility>

#include "lessonq/pg_schema.h"
#include "mend/base/utf8.h"
#include "mend/lessonq/postgres_queue.h"
#include "mend/store/postgres_store.h"

namespace mend::lessonq {
namespace {

using db::PgConn;
using db::PgParam;
using db::PgPool;
using db::PgResult;
using db::QuoteIdentifier;

#define MEND_LESSONQ_JOB_COLUMNS                                                             \
  "id, task, attempt, outcome, trigger, run_id, traceparent, enqueued_at, next_attempt_at, " \
  "attempts, last_error, provider, base_url, model"

// The rows a worker's scope holds (ClaimFilter), with the provider kind, the base URL without
// trailing slashes and the ids as parameters $P, $P+1 and $P+2.
#define MEND_LESSONQ_SCOPE(p, b, i)                                                              \
  " AND (" p "::text = '' OR provider = '' OR (provider = " p                                    \
  "::text AND "                                                                                  \
  "rtrim(base_url, '/') = " b "::text)) AND (" i "::text IS NULL OR id = ANY(string_to_array(" i \
  "::text, ',')))"

constexpr char kInsert[] =
    "INSERT INTO lesson_jobs (" MEND_LESSONQ_JOB_COLUMNS
    ", state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) "
    "ON CONFLICT (id, state) DO NOTHING";
// The jobs a claim holds, as the pair of parameters ($P text[] of ids, $P+1 bigint[] of their
// tokens) these statements take. A token is never given twice, so a row matches only when its
// token is the one claimed with its id: the two lists need not be paired.
#define MEND_LESSONQ_HELD(p, t) \
  "id = ANY(" p "::text[]) AND state = 'pending' AND claim_token = ANY(" t "::bigint[])"

// One statement and one commit: the jobs the workers finished since the previous claim ($5, $6;
// empty arrays when none) are deleted, and up to $3 due rows are locked and taken, skipping rows
// another worker is taking at the same moment. The due rows come from lesson_jobs_due in its
// order, so the claim reads only the rows it takes, and are returned in that order. The token
// comes from a sequence, so it never repeats, not even for a job enqueued again after it was done.
constexpr char kClaim[] =
    "WITH done AS (DELETE FROM lesson_jobs WHERE " MEND_LESSONQ_HELD("$5", "$6")
    "), "
    "due AS MATERIALIZED (SELECT id, next_attempt_at FROM lesson_jobs WHERE state = 'pending' AND "
    "next_attempt_at <= $1::bigint" MEND_LESSONQ_SCOPE("$7", "$8", "$9")
    " ORDER BY next_attempt_at, enqueued_at LIMIT $3 FOR UPDATE SKIP LOCKED), "
    "taken AS (UPDATE lesson_jobs AS j SET claim_token = nextval('lesson_claim_tokens'), "
    "locked_until = $2::bigint, next_attempt_at = $2::bigint, "
    "attempts = j.attempts + CASE WHEN j.claim_token IS NULL THEN 0 ELSE 1 END, "
    "last_error = CASE WHEN j.claim_token IS NULL THEN j.last_error ELSE $4::text END "
    "FROM due WHERE j.id = due.id AND j.state = 'pending' "
    "RETURNING due.next_attempt_at AS due_at, j.*) "
    "SELECT " MEND_LESSONQ_JOB_COLUMNS ", claim_token FROM taken ORDER BY due_at, enqueued_at, id";
constexpr char kComplete[] = "DELETE FROM lesson_jobs WHERE " MEND_LESSONQ_HELD("$1", "$2");
constexpr char kReschedule[] =
    "UPDATE lesson_jobs SET attempts = $3, next_attempt_at = $4, last_error = $5, "
    "locked_until = NULL, claim_token = NULL "
    "WHERE id = $1 AND state = 'pending' AND claim_token = $2";
constexpr char kRelease[] =
    "UPDATE lesson_jobs SET next_attempt_at = $3, locked_until = NULL, claim_token = NULL "
    "WHERE " MEND_LESSONQ_HELD("$1", "$2");
// The claimed row leaves and its dead letter replaces any earlier one of the same id, in one
// statement: nothing happens unless the claim is still ours.
constexpr char kBury[] =
    "WITH gone AS (DELETE FROM lesson_jobs WHERE id = $1 AND state = 'pending' AND "
    "claim_token = $2 RETURNING " MEND_LESSONQ_JOB_COLUMNS
    ") "
    "INSERT INTO lesson_jobs (" MEND_LESSONQ_JOB_COLUMNS
    ", state) "
    "SELECT id, task, attempt, outcome, trigger, run_id, traceparent, enqueued_at, $3::bigint, "
    "$4::bigint, $5::text, provider, base_url, model, 'dead' FROM gone "
    "ON CONFLICT (id, state) DO UPDATE SET task = EXCLUDED.task, attempt = EXCLUDED.attempt, "
    "outcome = EXCLUDED.outcome, trigger = EXCLUDED.trigger, run_id = EXCLUDED.run_id, "
    "traceparent = EXCLUDED.traceparent, enqueued_at = EXCLUDED.enqueued_at, "
    "next_attempt_at = EXCLUDED.next_attempt_at, attempts = EXCLUDED.attempts, "
    "last_error = EXCLUDED.last_error, provider = EXCLUDED.provider, "
    "base_url = EXCLUDED.base_url, model = EXCLUDED.model RETURNING id";
constexpr char kRevive[] =
    "WITH dead AS (DELETE FROM lesson_jobs WHERE id = $1 AND state = 'dead' "
    "RETURNING " MEND_LESSONQ_JOB_COLUMNS
    ") "
    "INSERT INTO lesson_jobs (" MEND_LESSONQ_JOB_COLUMNS
    ", state) "
    "SELECT id, task, attempt, outcome, trigger, run_id, traceparent, enqueued_at, $2::bigint, "
    "0, '', provider, base_url, model, 'pending' FROM dead "
    "ON CONFLICT (id, state) DO UPDATE SET task = EXCLUDED.task, attempt = EXCLUDED.attempt, "
    "outcome = EXCLUDED.outcome, trigger = EXCLUDED.trigger, run_id = EXCLUDED.run_id, "
    "traceparent = EXCLUDED.traceparent, enqueued_at = EXCLUDED.enqueued_at, "
    "next_attempt_at = EXCLUDED.next_attempt_at, attempts = 0, last_error = '', "
    "provider = EXCLUDED.provider, base_url = EXCLUDED.base_url, model = EXCLUDED.model, "
    "locked_until = NULL, claim_token = NULL RETURNING id";
constexpr char kPurge[] = "DELETE FROM lesson_jobs WHERE id = $1 AND state = 'dead'";
constexpr char kDiscardStale[] =
    "DELETE FROM lesson_jobs WHERE state = 'pending' AND enqueued_at < $1 AND "
    "(claim_token IS NULL OR locked_until <= $2)";
constexpr char kMakeAllDue[] =
    "UPDATE lesson_jobs SET next_attempt_at = $1 WHERE state = 'pending' AND "
    "claim_token IS NULL AND next_attempt_at > $1" MEND_LESSONQ_SCOPE("$2", "$3", "$4");
constexpr char kEarliestDue[] =
    "SELECT min(next_attempt_at) FROM lesson_jobs WHERE state = 'pending'" MEND_LESSONQ_SCOPE(
        "$1", "$2", "$3");
// The triggers of schema version 3 keep these sums (pg_schema.cc): no scan of lesson_jobs.
constexpr char kCount[] =
    "SELECT coalesce(sum(pending), 0), coalesce(sum(dead), 0) FROM lesson_queue_counts";
constexpr char kList[] = "SELECT " MEND_LESSONQ_JOB_COLUMNS
                         " FROM lesson_jobs WHERE state = $1 ORDER BY enqueued_at, id";

int64_t ToNanos(Time t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

Time FromNanos(int64_t nanos) {
  return Time(std::chrono::duration_cast<Time::duration>(std::chrono::nanoseconds(nanos)));
}

PgParam At(Time t) { return PgParam::Int(ToNanos(t)); }

// PostgreSQL's text takes neither NUL bytes nor invalid UTF-8; both become U+FFFD, as the WAL's
// JSON turns invalid bytes into U+FFFD. The job keeps the id of its original texts.
PgParam Text(const std::string& s) { return PgParam::Text(SanitizeUtf8WithoutNul(s)); }

std::string_view StateName(JobState state) { return state == JobState::kDead ? "dead" : "pending"; }

// A row whose first columns are MEND_LESSONQ_JOB_COLUMNS.
Result<Job> JobOfRow(const PgResult& res, int row) {
  Job job;
  job.id = res.Text(row, 0);
  job.request.task = res.Text(row, 1);
  job.request.attempt = res.Text(row, 2);
  job.request.outcome = res.Text(row, 3);
  job.request.trigger = res.Text(row, 4);
  job.request.run_id = res.Text(row, 5);
  job.request.traceparent = res.Text(row, 6);
  std::optional<int64_t> enqueued = res.Int(row, 7);
  std::optional<int64_t> next = res.Int(row, 8);
  std::optional<int64_t> attempts = res.Int(row, 9);
  if (!IsJobId(job.id) || !enqueued || !next || !attempts) {
    return DataLossError("unreadable lesson job row \"" + job.id + "\"");
  }
  job.enqueued_at = FromNanos(*enqueued);
  job.next_attempt_at = FromNanos(*next);
  job.attempts = *attempts;
  job.last_error = res.Text(row, 10);
  job.request.provider = res.Text(row, 11);
  job.request.base_url = res.Text(row, 12);
  job.request.model = res.Text(row, 13);
  return job;
}

// The three parameters of MEND_LESSONQ_SCOPE.
std::vector<PgParam> ScopeParams(const ClaimFilter& filter) {
  std::vector<PgParam> params = {PgParam::Text(filter.endpoint.provider),
                                 PgParam::Text(CanonicalBaseUrl(filter.endpoint.base_url))};
  if (!filter.ids.has_value()) {
    params.push_back(PgParam::Null());
  } else {
    std::string joined;  // ids are hex digits: a comma never occurs in one
    for (const std::string& id : *filter.ids) {
      if (!joined.empty()) joined.push_back(',');
      joined += id;
    }
    params.push_back(PgParam::Text(joined));
  }
  return params;
}

// The two parameters of MEND_LESSONQ_HELD for `jobs`.
void AddHeld(const std::vector<ClaimedJob>& jobs, std::vector<PgParam>& params) {
  std::vector<std::string> ids;
  std::string tokens = "{";
  ids.reserve(jobs.size());
  for (const ClaimedJob& held : jobs) {
    ids.push_back(held.job.id);
    if (tokens.size() > 1) tokens.push_back(',');
    tokens += std::to_string(held.token);
  }
  tokens.push_back('}');
  params.push_back(PgParam::Text(db::PgTextArray(ids)));
  params.push_back(PgParam::Text(tokens));
}

}  // namespace

PgJobTable::PgJobTable(const PgQueueOptions& options, int pool_size)
    : options_(options),
      pool_(
          options.url, options.connect_timeout, pool_size,
          [this](PgConn& conn) { return SetUp(conn, /*claims=*/false); }, options.connections),
      claim_pool_(
          options.url, options.connect_timeout, pool_size,
          [this](PgConn& conn) { return SetUp(conn, /*claims=*/true); }, options.connections) {}

Status PgJobTable::SetUp(PgConn& conn, bool claims) {
  if (!options_.schema.empty()) {
    // The schema is a session setting of every connection; a bound parameter keeps it data.
    MEND_RETURN_IF_ERROR(conn.Exec("SELECT set_config('search_path', $1, false)",
                                   {PgParam::Text(QuoteIdentifier(options_.schema))})
                             .status());
  }
  if (claims && options_.claim_commit == ClaimCommit::kAsynchronous) {
    return conn.Run("SET synchronous_commit = off");
  }
  return OkStatus();
}

Result<std::unique_ptr<PgJobTable>> PgJobTable::Open(const PgQueueOptions& options, int pool_size) {
  if (options.url.empty()) return InvalidArgumentError("lesson queue: no PostgreSQL URL");
  if (pool_size < 1) return InvalidArgumentError("lesson queue: pool_size must be at least 1");
  std::unique_ptr<PgJobTable> table(new PgJobTable(options, pool_size));
  MEND_RETURN_IF_ERROR(table->Init());
  return table;
}

std::string PgJobTable::location() const {
  return "PostgreSQL at " + store::MaskPostgresUrl(options_.url) +
         (options_.schema.empty() ? "" : " (schema " + options_.schema + ")");
}

Status PgJobTable::Init() {
  MEND_ASSIGN_OR_RETURN(PgPool::Handle conn, pool_.Acquire());
  return CreateOrMigrateQueueTables(*conn, options_.schema, location());
}

Result<PgResult> PgJobTable::Exec(const char* sql, const std::vector<PgParam>& params, Pool pool) {
  MEND_ASSIGN_OR_RETURN(PgPool::Handle conn,
                        pool == Pool::kClaims ? claim_pool_.Acquire() : pool_.Acquire());
  return conn->Exec(sql, params, PgConn::Plan::kPrepared);
}

Result<bool> PgJobTable::Insert(const Job& job, JobState state) {
  const LessonRequest& r = job.request;
  MEND_ASSIGN_OR_RETURN(
      PgResult res,
      Exec(kInsert,
           {PgParam::Text(job.id), Text(r.task), Text(r.attempt), Text(r.outcome), Text(r.trigger),
            Text(r.run_id), Text(r.traceparent), At(job.enqueued_at), At(job.next_attempt_at),
            PgParam::Int(job.attempts), Text(job.last_error), Text(r.provider), Text(r.base_url),
            Text(r.model), PgParam::Text(StateName(state))}));
  return res.affected() > 0;
}

Result<std::vector<ClaimedJob>> PgJobTable::Claim(Time now, Time locked_until, int limit,
                                                  const std::string& expired_error,
                                                  const ClaimFilter& filter,
                                                  const std::vector<ClaimedJob>& completed) {
  std::vector<PgParam> params = {At(now), At(locked_until), PgParam::Int(limit),
                                 Text(expired_error)};
  AddHeld(completed, params);
  for (PgParam& p : ScopeParams(filter)) params.push_back(std::move(p));
  MEND_ASSIGN_OR_RETURN(PgResult res, Exec(kClaim, params, Pool::kClaims));
  std::vector<ClaimedJob> out;
  out.reserve(static_cast<size_t>(res.rows()));
  for (int i = 0; i < res.rows(); ++i) {
    MEND_ASSIGN_OR_RETURN(Job job, JobOfRow(res, i));
    const Time until = job.next_attempt_at;
    out.push_back(ClaimedJob{std::move(job), res.Int(i, 14).value_or(0), until});
  }
  return out;
}

Result<bool> PgJobTable::Complete(const ClaimedJob& claimed) {
  MEND_ASSIGN_OR_RETURN(int64_t deleted, CompleteAll({claimed}));
  return deleted > 0;
}

Result<int64_t> PgJobTable::CompleteAll(const std::vector<ClaimedJob>& claimed) {
  std::vector<PgParam> params;
  AddHeld(claimed, params);
  MEND_ASSIGN_OR_RETURN(PgResult res, Exec(kComplete, params, Pool::kClaims));
  return res.affected();
}

Result<bool> PgJobTable::Reschedule(const ClaimedJob& claimed) {
  const Job& job = claimed.job;
  MEND_ASSIGN_OR_RETURN(PgResult res,
                        Exec(kReschedule, {PgParam::Text(job.id), PgParam::Int(claimed.token),
                                           PgParam::Int(job.attempts), At(job.next_attempt_at),
                                           Text(job.last_error)}));
  return res.affected() > 0;
}

Result<bool> PgJobTable::Bury(const ClaimedJob& claimed) {
  const Job& job = claimed.job;
  MEND_ASSIGN_OR_RETURN(
      PgResult res,
      Exec(kBury, {PgParam::Text(job.id), PgParam::Int(claimed.token), At(job.next_attempt_at),
                   PgParam::Int(job.attempts), Text(job.last_error)}));
  return res.rows() > 0;
}

Result<bool> PgJobTable::Release(const ClaimedJob& claimed, Time due) {
  MEND_ASSIGN_OR_RETURN(int64_t released, ReleaseAll({claimed}, due));
  return released > 0;
}

Result<int64_t> PgJobTable::ReleaseAll(const std::vector<ClaimedJob>& claimed, Time due) {
  std::vector<PgParam> params;
  AddHeld(claimed, params);
  params.push_back(At(due));
  MEND_ASSIGN_OR_RETURN(PgResult res, Exec(kRelease, params, Pool::kClaims));
  return res.affected();
}

Result<int64_t> PgJobTable::DiscardStale(Time cutoff, Time now) {
  MEND_ASSIGN_OR_RETURN(PgResult res, Exec(kDiscardStale, {At(cutoff), At(now)}));
  return res.affected();
}

Status PgJobTable::MakeAllDue(Time now, const ClaimFilter& filter) {
  std::vector<PgParam> params = {At(now)};
  for (PgParam& p : ScopeParams(filter)) params.push_back(std::move(p));
  return Exec(kMakeAllDue, params).status();
}

Result<std::optional<Time>> PgJobTable::EarliestDue(const ClaimFilter& filter) {
  MEND_ASSIGN_OR_RETURN(PgResult res, Exec(kEarliestDue, ScopeParams(filter)));
  std::optional<int64_t> nanos = res.rows() > 0 ? res.Int(0, 0) : std::nullopt;
  if (!nanos.has_value()) return std::optional<Time>();
  return std::optional<Time>(FromNanos(*nanos));
}

Result<PgJobTable::Counts> PgJobTable::Count() {
  MEND_ASSIGN_OR_RETURN(PgResult res, Exec(kCount, {}));
  return Counts{res.Int(0, 0).value_or(0), res.Int(0, 1).value_or(0)};
}

Result<std::vector<Job>> PgJobTable::List(JobState state) {
  MEND_ASSIGN_OR_RETURN(PgResult res, Exec(kList, {PgParam::Text(StateName(state))}));
  std::vector<Job> jobs;
  for (int i = 0; i < res.rows(); ++i) {
    // A row that cannot be read must not hide the others.
    Result<Job> job = JobOfRow(res, i);
    if (job.ok()) jobs.push_back(std::move(job).value());
  }
  return jobs;
}

Status PgJobTable::Revive(const std::string& id, Time now) {
  MEND_ASSIGN_OR_RETURN(PgResult res, Exec(kRevive, {PgParam::Text(id), At(now)}));
  if (res.rows() == 0) return NotFoundError("no dead-lettered lesson job " + id);
  return OkStatus();
}

Status PgJobTable::Purge(const std::string& id) {
  MEND_ASSIGN_OR_RETURN(PgResult res, Exec(kPurge, {PgParam::Text(id)}));
  if (res.affected() == 0) return NotFoundError("no dead-lettered lesson job " + id);
  return OkStatus();
}

}  // namespace mend::lessonq
