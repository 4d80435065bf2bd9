#pragma once

// The SQL of observe.db (docs/observe.md, "observe.db"). Statements are cached by address, so each
// is one constant.
namespace mend::obs::internal {

// auto_vacuum must be chosen before the first table exists; it is ignored on an existing file.
inline constexpr char kPragmas[] =
    "PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;";

inline constexpr char kCreateMeta[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL)";
inline constexpr char kSchemaVersion[] = "SELECT value FROM meta WHERE key = 'schema_version'";
inline constexpr char kHasMeta[] =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'";

inline constexpr char kCreateSchemaV1[] = R"sql(
CREATE TABLE spans(
  trace_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  parent_span_id TEXT NOT NULL,
  trace_flags INTEGER NOT NULL,
  run_id TEXT NOT NULL,
  name TEXT NOT NULL,
  kind INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL,
  status INTEGER NOT NULL,
  status_message TEXT NOT NULL,
  attributes TEXT NOT NULL,
  events TEXT NOT NULL,
  links TEXT NOT NULL,
  PRIMARY KEY (trace_id, span_id));
CREATE INDEX spans_by_run ON spans(run_id);
CREATE INDEX spans_by_end ON spans(end_ns);
CREATE TABLE runs(
  run_id TEXT PRIMARY KEY,
  trace_id TEXT NOT NULL,
  trace_rank INTEGER NOT NULL,
  agent TEXT NOT NULL,
  status TEXT NOT NULL,
  status_end_ns INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  model_turns INTEGER NOT NULL,
  tool_calls INTEGER NOT NULL,
  tool_errors INTEGER NOT NULL,
  heal_actions INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL);
CREATE INDEX runs_by_start ON runs(start_ns, run_id);
INSERT INTO meta(key, value) VALUES ('schema_version', 1), ('dropped_spans', 0);
)sql";

#define MEND_SPAN_COLUMNS                                                                  \
  "trace_id, span_id, parent_span_id, trace_flags, run_id, name, kind, start_ns, end_ns, " \
  "status, status_message, attributes, events, links"
#define MEND_SPAN_VALUES "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"

inline constexpr char kInsertSpan[] =
    "INSERT INTO spans(" MEND_SPAN_COLUMNS ") VALUES " MEND_SPAN_VALUES
    " ON CONFLICT(trace_id, span_id) DO NOTHING";
inline constexpr char kReplaceSpan[] =
    "INSERT OR REPLACE INTO spans(" MEND_SPAN_COLUMNS ") VALUES " MEND_SPAN_VALUES;
inline constexpr char kRunOfSpan[] =
    "SELECT run_id FROM spans WHERE trace_id = ?1 AND span_id = ?2";
inline constexpr char kSpansOfTrace[] =
    "SELECT " MEND_SPAN_COLUMNS " FROM spans WHERE trace_id = ?1 ORDER BY start_ns, span_id";
inline constexpr char kSpansOfRun[] = "SELECT " MEND_SPAN_COLUMNS " FROM spans WHERE run_id = ?1";

#define MEND_RUN_COLUMNS                                                                     \
  "run_id, trace_id, trace_rank, agent, status, status_end_ns, start_ns, end_ns, attempts, " \
  "model_turns, tool_calls, tool_errors, heal_actions, cost_usd, input_tokens, output_tokens"

// Merges a batch's summary of a run into the stored one; run_summary.cc has the same rules.
inline constexpr char kUpsertRun[] = "INSERT INTO runs(" MEND_RUN_COLUMNS R"sql()
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
ON CONFLICT(run_id) DO UPDATE SET
  trace_id = CASE WHEN excluded.trace_rank > runs.trace_rank THEN excluded.trace_id
                  ELSE runs.trace_id END,
  trace_rank = max(runs.trace_rank, excluded.trace_rank),
  agent = CASE WHEN runs.agent = '' THEN excluded.agent ELSE runs.agent END,
  status = CASE WHEN excluded.status_end_ns >= 0 AND excluded.status_end_ns >= runs.status_end_ns
                THEN excluded.status ELSE runs.status END,
  status_end_ns = max(runs.status_end_ns, excluded.status_end_ns),
  start_ns = min(runs.start_ns, excluded.start_ns),
  end_ns = max(runs.end_ns, excluded.end_ns),
  attempts = runs.attempts + excluded.attempts,
  model_turns = runs.model_turns + excluded.model_turns,
  tool_calls = runs.tool_calls + excluded.tool_calls,
  tool_errors = runs.tool_errors + excluded.tool_errors,
  heal_actions = runs.heal_actions + excluded.heal_actions,
  cost_usd = runs.cost_usd + excluded.cost_usd,
  input_tokens = runs.input_tokens + excluded.input_tokens,
  output_tokens = runs.output_tokens + excluded.output_tokens)sql";
inline constexpr char kDeleteRun[] = "DELETE FROM runs WHERE run_id = ?1";
inline constexpr char kRunById[] = "SELECT " MEND_RUN_COLUMNS " FROM runs WHERE run_id = ?1";
inline constexpr char kRunsFirstPage[] =
    "SELECT " MEND_RUN_COLUMNS " FROM runs ORDER BY start_ns DESC, run_id DESC LIMIT ?1";
inline constexpr char kRunsBefore[] = "SELECT " MEND_RUN_COLUMNS
                                      " FROM runs WHERE start_ns < ?2 OR (start_ns = ?2 AND "
                                      "run_id < ?3) ORDER BY start_ns DESC, run_id DESC LIMIT ?1";

inline constexpr char kAddDropped[] =
    "UPDATE meta SET value = value + ?1 WHERE key = 'dropped_spans'";
inline constexpr char kDropped[] = "SELECT value FROM meta WHERE key = 'dropped_spans'";

// Pruning spares the runs listed in temp.keep_runs (unfinished runs), filled per call.
#define MEND_NOT_KEPT " AND run_id NOT IN (SELECT run_id FROM temp.keep_runs)"
inline constexpr char kCreateKeepRuns[] =
    "CREATE TEMP TABLE IF NOT EXISTS keep_runs (run_id TEXT PRIMARY KEY) WITHOUT ROWID";
inline constexpr char kClearKeepRuns[] = "DELETE FROM temp.keep_runs";
inline constexpr char kAddKeepRun[] = "INSERT OR IGNORE INTO temp.keep_runs (run_id) VALUES (?1)";
inline constexpr char kCountEndedBefore[] =
    "SELECT count(*), coalesce(sum(length(trace_id) + length(span_id) + length(parent_span_id) + "
    "length(run_id) + length(name) + length(status_message) + length(attributes) + "
    "length(events) + length(links) + 40), 0) FROM spans WHERE end_ns < ?1" MEND_NOT_KEPT;
inline constexpr char kCountRunsEndedBefore[] =
    "SELECT count(*) FROM runs WHERE end_ns < ?1" MEND_NOT_KEPT;
inline constexpr char kRunsAcross[] =
    "SELECT run_id FROM runs WHERE start_ns < ?1 AND end_ns >= ?1" MEND_NOT_KEPT;
inline constexpr char kDeleteSpansEndedBefore[] =
    "DELETE FROM spans WHERE end_ns < ?1" MEND_NOT_KEPT;
inline constexpr char kDeleteRunsEndedBefore[] = "DELETE FROM runs WHERE end_ns < ?1" MEND_NOT_KEPT;
#undef MEND_NOT_KEPT
inline constexpr char kPageCount[] = "PRAGMA page_count";
inline constexpr char kPageSize[] = "PRAGMA page_size";

}  // namespace mend::obs::internal
