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

// Version 2 adds the per-trace summary; migrating fills it from the stored spans
// (trace_summary.cc, BackfillTraces).
#define MEND_TRACES_COLUMNS_DDL                                                              \
  "(trace_id TEXT PRIMARY KEY, root_rank INTEGER NOT NULL, root_start_ns INTEGER NOT NULL, " \
  "root_span_id TEXT NOT NULL, root_name TEXT NOT NULL, root_service TEXT NOT NULL, "        \
  "root_run_id TEXT NOT NULL, any_service TEXT NOT NULL, any_run_id TEXT NOT NULL, "         \
  "start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, span_count INTEGER NOT NULL, "        \
  "error_count INTEGER NOT NULL)"
inline constexpr char kCreateTracesV2[] =
    "CREATE TABLE traces" MEND_TRACES_COLUMNS_DDL
    ";\nCREATE INDEX traces_by_start ON traces(start_ns, trace_id);";
// A read-only open of a version 1 file builds the same summary in the connection's temporary
// schema (never in the file), so its traces are listed as a migrated file's would be.
inline constexpr char kCreateTempTraces[] =
    "CREATE TEMP TABLE traces" MEND_TRACES_COLUMNS_DDL
    ";\nCREATE INDEX temp.traces_by_start ON traces(start_ns, trace_id);";
// Version 3 keeps, per span, whether it still has to reach an OTLP collector (docs/observe.md,
// "Spans a collector has not taken"): 0 nothing to send (exported, or never meant for export),
// 1 waiting for the exporter of the process that ended it, 2 handed over (any exporter sends it).
// Spans stored before the migration count as 0.
inline constexpr char kAddOtlpStateV3[] = R"sql(
ALTER TABLE spans ADD COLUMN otlp_state INTEGER NOT NULL DEFAULT 0;
CREATE INDEX spans_otlp ON spans(otlp_state, end_ns) WHERE otlp_state <> 0;
)sql";
inline constexpr char kSetSchemaVersion[] =
    "UPDATE meta SET value = ?1 WHERE key = 'schema_version'";

#define MEND_SPAN_COLUMNS                                                                  \
  "trace_id, span_id, parent_span_id, trace_flags, run_id, name, kind, start_ns, end_ns, " \
  "status, status_message, attributes, events, links"
#define MEND_SPAN_VALUES "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
#define MEND_SPAN_VALUES_AND_STATE \
  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"

// Writing a span also sets its otlp_state (?15).
inline constexpr char kInsertSpan[] =
    "INSERT INTO spans(" MEND_SPAN_COLUMNS ", otlp_state) VALUES " MEND_SPAN_VALUES_AND_STATE
    " ON CONFLICT(trace_id, span_id) DO NOTHING";
inline constexpr char kReplaceSpan[] = "INSERT OR REPLACE INTO spans(" MEND_SPAN_COLUMNS
                                       ", otlp_state) VALUES " MEND_SPAN_VALUES_AND_STATE;
// A collector took the span; or its process gave up on exporting it (any exporter may).
inline constexpr char kOtlpExported[] =
    "UPDATE spans SET otlp_state = 0 WHERE trace_id = ?1 AND span_id = ?2 AND otlp_state <> 0";
inline constexpr char kOtlpHandOver[] =
    "UPDATE spans SET otlp_state = 2 WHERE trace_id = ?1 AND span_id = ?2 AND otlp_state = 1";
// Spans any exporter may send: handed over, or waiting for a process since before ?1 (one that
// died, or whose hand-over was lost), oldest first.
inline constexpr char kOtlpToSend[] =
    "SELECT " MEND_SPAN_COLUMNS
    " FROM spans WHERE otlp_state <> 0 AND (otlp_state = 2 OR end_ns < ?1) ORDER BY end_ns "
    "LIMIT ?2";
inline constexpr char kOtlpExpire[] =
    "UPDATE spans SET otlp_state = 0 WHERE otlp_state <> 0 AND end_ns < ?1";
inline constexpr char kOtlpWaiting[] = "SELECT count(*) FROM spans WHERE otlp_state <> 0";
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

// What a trace summary needs of a span (trace_summary.cc, FactsOfRow).
#define MEND_TRACE_FACT_COLUMNS \
  "trace_id, span_id, parent_span_id, run_id, name, start_ns, end_ns, status, attributes"
inline constexpr char kTraceFactsOf[] =
    "SELECT " MEND_TRACE_FACT_COLUMNS " FROM spans WHERE trace_id = ?1";
inline constexpr char kTraceFactsAll[] =
    "SELECT " MEND_TRACE_FACT_COLUMNS " FROM spans ORDER BY trace_id";

#define MEND_TRACE_COLUMNS                                                                   \
  "trace_id, root_rank, root_start_ns, root_span_id, root_name, root_service, root_run_id, " \
  "any_service, any_run_id, start_ns, end_ns, span_count, error_count"
// The stored root stays unless the batch's candidate sorts first by (rank, start, span id): a span
// without a parent (rank 0) before any other (rank 1), then the earliest start.
#define MEND_ROOT_OF(column)                                                                \
  column                                                                                    \
      " = CASE WHEN (excluded.root_rank, excluded.root_start_ns, excluded.root_span_id) < " \
      "(traces.root_rank, traces.root_start_ns, traces.root_span_id) THEN excluded." column \
      " ELSE traces." column " END"
#define MEND_MIN_NON_EMPTY(column)                                                            \
  column " = CASE WHEN traces." column " = '' THEN excluded." column " WHEN excluded." column \
         " = '' THEN traces." column " ELSE min(traces." column ", excluded." column ") END"

// Merges a batch's summary of a trace into the stored one; trace_summary.cc has the same rules.
// clang-format off
inline constexpr char kUpsertTrace[] =
    "INSERT INTO traces(" MEND_TRACE_COLUMNS ") "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
    "ON CONFLICT(trace_id) DO UPDATE SET "
    MEND_ROOT_OF("root_rank") ", "
    MEND_ROOT_OF("root_start_ns") ", "
    MEND_ROOT_OF("root_span_id") ", "
    MEND_ROOT_OF("root_name") ", "
    MEND_ROOT_OF("root_service") ", "
    MEND_ROOT_OF("root_run_id") ", "
    MEND_MIN_NON_EMPTY("any_service") ", "
    MEND_MIN_NON_EMPTY("any_run_id") ", "
    "start_ns = min(traces.start_ns, excluded.start_ns), "
    "end_ns = max(traces.end_ns, excluded.end_ns), "
    "span_count = traces.span_count + excluded.span_count, "
    "error_count = traces.error_count + excluded.error_count";
// clang-format on
#undef MEND_ROOT_OF
#undef MEND_MIN_NON_EMPTY
inline constexpr char kDeleteTrace[] = "DELETE FROM traces WHERE trace_id = ?1";
inline constexpr char kTraceById[] =
    "SELECT " MEND_TRACE_COLUMNS " FROM traces WHERE trace_id = ?1";
inline constexpr char kTracesFirstPage[] = "SELECT " MEND_TRACE_COLUMNS
                                           " FROM traces ORDER BY start_ns DESC, trace_id DESC "
                                           "LIMIT ?1";
// A row-value comparison, so the page starts with a seek in traces_by_start, however deep it is.
inline constexpr char kTracesBefore[] = "SELECT " MEND_TRACE_COLUMNS
                                        " FROM traces WHERE (start_ns, trace_id) < (?2, ?3) "
                                        "ORDER BY start_ns DESC, trace_id DESC LIMIT ?1";
// A filtered page (TraceQuery's filters). ?2, ?3: the page's upper bound, a cursor or the `to`
// time; ?4: the `from` time; ?5 service, ?6 outcome (0 any, 1 ok, 2 error), ?7 agent, ?8 model,
// ?9 error text in lower case; "" (or 0) lets every trace pass. The agent and model filters first
// look for the attribute's key in the span's JSON text, so only spans that hold it are parsed.
// clang-format off
#define MEND_ATTRIBUTE_IS(attributes, key_test, value_test)                    \
  "EXISTS (SELECT 1 FROM json_each(" attributes ") a WHERE "                   \
  "json_extract(a.value, '$.k') " key_test " AND " value_test ")"
#define MEND_ERROR_KEYS "IN ('error.type', 'exception.type', 'exception.message')"
#define MEND_HOLDS_TEXT "instr(lower(json_extract(a.value, '$.s')), ?9) > 0"
#define MEND_TRACE_FILTERS                                                                    \
  " WHERE (start_ns, trace_id) < (?2, ?3) AND start_ns >= ?4"                                 \
  " AND (?5 = '' OR (CASE WHEN root_service <> '' THEN root_service ELSE any_service END) = ?5)" \
  " AND (?6 = 0 OR (?6 = 1 AND error_count = 0) OR (?6 = 2 AND error_count > 0))"            \
  " AND (?7 = '' OR EXISTS (SELECT 1 FROM spans s WHERE s.trace_id = traces.trace_id"        \
  " AND instr(s.attributes, '\"gen_ai.agent.name\"') > 0 AND "                               \
  MEND_ATTRIBUTE_IS("s.attributes", "= 'gen_ai.agent.name'", "json_extract(a.value, '$.s') = ?7") \
  "))"                                                                                        \
  " AND (?8 = '' OR EXISTS (SELECT 1 FROM spans s WHERE s.trace_id = traces.trace_id"        \
  " AND instr(s.attributes, '.model\"') > 0 AND "                                             \
  MEND_ATTRIBUTE_IS("s.attributes", "IN ('gen_ai.request.model', 'gen_ai.response.model')",  \
                    "json_extract(a.value, '$.s') = ?8")                                      \
  "))"                                                                                        \
  " AND (?9 = '' OR (error_count > 0 AND EXISTS (SELECT 1 FROM spans s WHERE"                \
  " s.trace_id = traces.trace_id AND s.status = 2 AND (instr(lower(s.status_message), ?9) > 0" \
  " OR " MEND_ATTRIBUTE_IS("s.attributes", MEND_ERROR_KEYS, MEND_HOLDS_TEXT)                  \
  " OR EXISTS (SELECT 1 FROM json_each(s.events) e WHERE "                                    \
  MEND_ATTRIBUTE_IS("e.value, '$.attributes'", MEND_ERROR_KEYS, MEND_HOLDS_TEXT) ")))))"
inline constexpr char kTracesFiltered[] = "SELECT " MEND_TRACE_COLUMNS " FROM traces"
    MEND_TRACE_FILTERS " ORDER BY start_ns DESC, trace_id DESC LIMIT ?1";
inline constexpr char kCountTracesFiltered[] = "SELECT count(*) FROM traces" MEND_TRACE_FILTERS;
// clang-format on
#undef MEND_TRACE_FILTERS
#undef MEND_HOLDS_TEXT
#undef MEND_ERROR_KEYS
#undef MEND_ATTRIBUTE_IS
inline constexpr char kCountTraces[] = "SELECT count(*) FROM traces";
inline constexpr char kCountTracesBefore[] =
    "SELECT count(*) FROM traces WHERE (start_ns, trace_id) < (?1, ?2)";

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
// A trace loses spans only when it started before the cutoff; those left with no span go, the
// others are rebuilt from what is left.
inline constexpr char kCountTracesEmptiedBefore[] =
    "SELECT count(*) FROM traces WHERE start_ns < ?1 AND NOT EXISTS (SELECT 1 FROM spans WHERE "
    "spans.trace_id = traces.trace_id AND (spans.end_ns >= ?1 OR spans.run_id IN (SELECT run_id "
    "FROM temp.keep_runs)))";
inline constexpr char kDeleteEmptyTracesBefore[] =
    "DELETE FROM traces WHERE start_ns < ?1 AND NOT EXISTS (SELECT 1 FROM spans WHERE "
    "spans.trace_id = traces.trace_id)";
inline constexpr char kTracesStartedBefore[] = "SELECT trace_id FROM traces WHERE start_ns < ?1";
#undef MEND_NOT_KEPT
inline constexpr char kPageCount[] = "PRAGMA page_count";
inline constexpr char kPageSize[] = "PRAGMA page_size";

// Series (span_store_series.cc): ?1 from, ?2 to, ?3 bucket width, all in unix nanoseconds. Runs
// are summed from their summaries (not mend proxy's conversations, run ids "proxy-..."); model
// calls from the chat spans, whose attributes are read with json_each (the attribute's value is
// under "s", "i" or "d" by its type).
inline constexpr char kSeriesByAgent[] = R"sql(
SELECT agent, (start_ns - ?1) / ?3 AS bucket, count(*),
  sum(status IN ('failed', 'quarantined')), total(cost_usd), total(input_tokens),
  total(output_tokens), avg(end_ns - start_ns), max(end_ns - start_ns)
FROM runs WHERE start_ns >= ?1 AND start_ns < ?2 AND substr(run_id, 1, 6) <> 'proxy-'
GROUP BY agent, bucket ORDER BY agent, bucket)sql";
#define MEND_ATTR(key, value)                                    \
  "(SELECT " value                                               \
  " FROM json_each(s.attributes) a WHERE json_extract(a.value, " \
  "'$.k') = '" key "' LIMIT 1)"
#define MEND_ATTR_NUMBER(key) \
  MEND_ATTR(key, "coalesce(json_extract(a.value, '$.d'), json_extract(a.value, '$.i'))")
inline constexpr char kSeriesByModel[] =
    "WITH calls AS (SELECT s.start_ns AS start_ns, s.end_ns - s.start_ns AS took, "
    "s.status AS status, coalesce(" MEND_ATTR("gen_ai.response.model", "json_extract(a.value, '$.s')")
    ", " MEND_ATTR("gen_ai.request.model", "json_extract(a.value, '$.s')")
    ", '') AS model, " MEND_ATTR_NUMBER("mend.cost_usd") " AS cost, " MEND_ATTR_NUMBER(
        "gen_ai.usage.input_tokens") " AS input, " MEND_ATTR_NUMBER("gen_ai.usage.output_tokens")
    " AS output FROM spans s WHERE s.end_ns >= ?1 AND s.start_ns >= ?1 AND s.start_ns < ?2 "
    "AND instr(s.attributes, '\"chat\"') > 0 AND " MEND_ATTR(
        "gen_ai.operation.name", "json_extract(a.value, '$.s')") " = 'chat') "
    "SELECT model, (start_ns - ?1) / ?3 AS bucket, count(*), sum(status = 2), total(cost), "
    "total(input), total(output), avg(took), max(took) FROM calls GROUP BY model, bucket "
    "ORDER BY model, bucket";
#undef MEND_ATTR_NUMBER
#undef MEND_ATTR

// Sessions (span_store_sessions.cc): ?1 limit, ?2 prefix of the run ids. The agent falls back to
// the mend.agent attribute of one of the run's spans (mend proxy's spans carry that one).
inline constexpr char kRunsByPrefix[] =
    "SELECT run_id, trace_id, trace_rank, CASE WHEN agent <> '' THEN agent ELSE coalesce((SELECT "
    "json_extract(a.value, '$.s') FROM spans s, json_each(s.attributes) a WHERE s.run_id = "
    "runs.run_id AND json_extract(a.value, '$.k') = 'mend.agent' LIMIT 1), '') END, status, "
    "status_end_ns, start_ns, end_ns, attempts, model_turns, tool_calls, tool_errors, "
    "heal_actions, cost_usd, input_tokens, output_tokens FROM runs WHERE substr(run_id, 1, "
    "length(?2)) = ?2 ORDER BY end_ns DESC, run_id DESC LIMIT ?1";
inline constexpr char kSpansOfRunInOrder[] = "SELECT " MEND_SPAN_COLUMNS
                                             " FROM spans WHERE run_id = ?1 ORDER BY start_ns, "
                                             "span_id";

}  // namespace mend::obs::internal
