// The PostgreSQL lesson queue's tables and their migrations (docs/lesson_queue.md, "The PostgreSQL
// queue").

#include "lessonq/pg_schema.h"

#include "mend/db/schema_read.h"
#include "mend/lessonq/postgres_queue.h"

namespace mend::lessonq {
namespace {

using db::PgParam;
using db::PgResult;

// Held while the tables are created or checked, so that queues opening at once do not race on
// CREATE ... IF NOT EXISTS (which is not safe against concurrent creators).
constexpr char kLockSchema[] = "SELECT pg_advisory_xact_lock(7230188513270843395)";
constexpr char kCreateMeta[] =
    "CREATE TABLE IF NOT EXISTS lesson_queue_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
constexpr char kSelectVersion[] =
    "SELECT value FROM lesson_queue_meta WHERE key = 'lessonq.schema_version'";
constexpr char kInsertVersion[] =
    "INSERT INTO lesson_queue_meta (key, value) VALUES ('lessonq.schema_version', $1)";
constexpr char kUpdateVersion[] =
    "UPDATE lesson_queue_meta SET value = $1 WHERE key = 'lessonq.schema_version'";

// Version 1. Times are nanoseconds since the Unix epoch on the clock of the process that wrote
// them. While a job is claimed, next_attempt_at = locked_until, so lesson_jobs_due finds due jobs
// and expired claims alike and a claim reads only the rows it takes.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE lesson_jobs (
  id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'dead')),
  task TEXT NOT NULL,
  attempt TEXT NOT NULL,
  outcome TEXT NOT NULL,
  trigger TEXT NOT NULL,
  run_id TEXT NOT NULL,
  traceparent TEXT NOT NULL,
  enqueued_at BIGINT NOT NULL,
  next_attempt_at BIGINT NOT NULL,
  attempts BIGINT NOT NULL,
  last_error TEXT NOT NULL,
  locked_until BIGINT,
  claim_token BIGINT,
  PRIMARY KEY (id, state)
);
CREATE INDEX lesson_jobs_due ON lesson_jobs (next_attempt_at, enqueued_at) WHERE state = 'pending';
CREATE SEQUENCE lesson_claim_tokens;
)sql";

// Version 2: the provider a job is generated with (docs/lesson_queue.md). Rows of version 1 get
// empty values: "not recorded". IF NOT EXISTS keeps the step harmless when repeated.
constexpr char kSchemaV2[] = R"sql(
ALTER TABLE lesson_jobs ADD COLUMN IF NOT EXISTS provider TEXT NOT NULL DEFAULT '';
ALTER TABLE lesson_jobs ADD COLUMN IF NOT EXISTS base_url TEXT NOT NULL DEFAULT '';
ALTER TABLE lesson_jobs ADD COLUMN IF NOT EXISTS model TEXT NOT NULL DEFAULT '';
)sql";

// Version 3: the numbers of pending and dead rows, kept by triggers in the transaction of every
// change, so that reading them costs no scan of lesson_jobs. Each statement adds its change to
// the row of its backend (pg_backend_pid() modulo 64): two connections rarely share a row, so
// writers do not queue behind one another's commits, and a statement locks that row only after
// every job row it changes, so waiting for it cannot close a cycle. The total is the sum of the
// rows. The triggers see every writer, other programs and manual statements included; an UPDATE
// of `state` is counted too, although mend never makes one. The function names its schema
// itself, since writers may run with any search_path. The CREATE TRIGGERs lock out writers until
// the step commits, so the counts taken at its end are exact.
constexpr char kSchemaV3[] = R"sql(
CREATE TABLE IF NOT EXISTS lesson_queue_counts (
  slot INT PRIMARY KEY,
  pending BIGINT NOT NULL,
  dead BIGINT NOT NULL
) WITH (fillfactor = 20);
INSERT INTO lesson_queue_counts SELECT s, 0, 0 FROM generate_series(0, 63) AS s
  ON CONFLICT (slot) DO NOTHING;
CREATE OR REPLACE FUNCTION lesson_jobs_count() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  p BIGINT := 0;
  d BIGINT := 0;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state = 'dead')
      INTO p, d FROM added;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT -count(*) FILTER (WHERE state = 'pending'), -count(*) FILTER (WHERE state = 'dead')
      INTO p, d FROM removed;
  ELSIF TG_OP = 'UPDATE' THEN
    p := (NEW.state = 'pending')::int - (OLD.state = 'pending')::int;
    d := (NEW.state = 'dead')::int - (OLD.state = 'dead')::int;
  ELSE
    UPDATE lesson_queue_counts SET pending = 0, dead = 0 WHERE pending <> 0 OR dead <> 0;
    RETURN NULL;
  END IF;
  IF p <> 0 OR d <> 0 THEN
    UPDATE lesson_queue_counts SET pending = pending + p, dead = dead + d
      WHERE slot = pg_backend_pid() % 64;
  END IF;
  RETURN NULL;
END
$fn$;
DO $do$ BEGIN
  EXECUTE format('ALTER FUNCTION lesson_jobs_count() SET search_path = %I', current_schema());
END $do$;
DROP TRIGGER IF EXISTS lesson_jobs_added ON lesson_jobs;
DROP TRIGGER IF EXISTS lesson_jobs_removed ON lesson_jobs;
DROP TRIGGER IF EXISTS lesson_jobs_moved ON lesson_jobs;
DROP TRIGGER IF EXISTS lesson_jobs_emptied ON lesson_jobs;
CREATE TRIGGER lesson_jobs_added AFTER INSERT ON lesson_jobs REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION lesson_jobs_count();
CREATE TRIGGER lesson_jobs_removed AFTER DELETE ON lesson_jobs REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION lesson_jobs_count();
CREATE TRIGGER lesson_jobs_moved AFTER UPDATE OF state ON lesson_jobs FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION lesson_jobs_count();
CREATE TRIGGER lesson_jobs_emptied AFTER TRUNCATE ON lesson_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION lesson_jobs_count();
UPDATE lesson_queue_counts SET pending = CASE WHEN slot = 0 THEN c.pending ELSE 0 END,
  dead = CASE WHEN slot = 0 THEN c.dead ELSE 0 END
  FROM (SELECT count(*) FILTER (WHERE state = 'pending') AS pending,
               count(*) FILTER (WHERE state = 'dead') AS dead FROM lesson_jobs) AS c;
)sql";

// The steps after version `from`, in order; all of them commit together.
Status MigrateFrom(db::PgConn& conn, int64_t from) {
  if (from < 2) MEND_RETURN_IF_ERROR(conn.Run(kSchemaV2));
  if (from < 3) MEND_RETURN_IF_ERROR(conn.Run(kSchemaV3));
  return conn.Exec(kUpdateVersion, {PgParam::Int(kPgQueueSchemaVersion)}).status();
}

Status CreateOrMigrateLocked(db::PgConn& conn, const std::string& schema,
                             const std::string& location) {
  MEND_RETURN_IF_ERROR(conn.Run(kLockSchema));
  if (!schema.empty()) {
    const std::string create = "CREATE SCHEMA IF NOT EXISTS " + db::QuoteIdentifier(schema);
    MEND_RETURN_IF_ERROR(conn.Run(create.c_str()));
  }
  MEND_RETURN_IF_ERROR(conn.Run(kCreateMeta));
  MEND_ASSIGN_OR_RETURN(PgResult version, conn.Exec(kSelectVersion));
  if (version.rows() == 0) {
    MEND_RETURN_IF_ERROR(conn.Run(kSchemaV1));
    MEND_RETURN_IF_ERROR(conn.Exec(kInsertVersion, {PgParam::Int(1)}).status());
    return MigrateFrom(conn, 1);
  }
  const int64_t v = version.Int(0, 0).value_or(0);
  if (v < 1) return DataLossError(location + ": unreadable lesson queue schema version");
  if (v > kPgQueueSchemaVersion) {
    return FailedPreconditionError(location +
                                   ": the lesson queue's tables were written by a newer mend "
                                   "(schema " +
                                   std::to_string(v) + " > " +
                                   std::to_string(kPgQueueSchemaVersion) + "); upgrade mend");
  }
  if (v == kPgQueueSchemaVersion) return OkStatus();
  return MigrateFrom(conn, v);
}

}  // namespace

Status CreateOrMigrateQueueTables(db::PgConn& conn, const std::string& schema,
                                  const std::string& location) {
  MEND_RETURN_IF_ERROR(conn.Run("BEGIN"));
  Status s = CreateOrMigrateLocked(conn, schema, location);
  if (!s.ok()) {
    conn.Run("ROLLBACK").IgnoreError();
    return s;
  }
  return conn.Run("COMMIT");
}

int64_t PostgresLessonQueueSchemaVersion() { return kPgQueueSchemaVersion; }

Result<int64_t> ReadPostgresLessonQueueSchemaVersion(const std::string& url,
                                                     const std::string& schema,
                                                     Duration connect_timeout) {
  return db::ReadPostgresMetaVersion(url, schema, connect_timeout, "lessonq.schema_version",
                                     "lesson_queue_meta");
}

}  // namespace mend::lessonq
