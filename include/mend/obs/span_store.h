#pragma once

// SpanStore, observe.db (docs/observe.md, "observe.db"): finished spans in SQLite with per-run and
// per-trace summaries, pages of runs and traces, the OTLP backlog and pruning. Thread-safe; several
// processes may open one file.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/obs/trace.h"

namespace mend::db {
class SqliteConn;
}  // namespace mend::db

namespace mend::obs {

/// The observe.db schema this build writes (docs/observe.md, "observe.db").
inline constexpr int64_t kSpanStoreSchemaVersion = 3;
/// The largest page ListRuns returns.
inline constexpr size_t kMaxRunTracePageSize = 1000;
/// The largest page ListTraces returns.
inline constexpr size_t kMaxTracePageSize = 1000;

/// A position in the newest-first list of runs: the page after it starts with the next older run.
/// Runs are ordered by their first span's start time, then by run id (both descending).
struct RunTraceCursor {
  Time start{};        ///< the run's first span start
  std::string run_id;  ///< the run
  /// Field by field.
  bool operator==(const RunTraceCursor&) const = default;
};
/// "<start in unix nanoseconds>:<run id>"; opaque to users.
std::string FormatRunTraceCursor(const RunTraceCursor& cursor);
/// kInvalidArgument for text FormatRunTraceCursor cannot have produced.
Result<RunTraceCursor> ParseRunTraceCursor(std::string_view text);

/// A page of SpanStore::ListRuns.
struct RunTraceQuery {
  size_t limit = 20;                     ///< 1..kMaxRunTracePageSize
  std::optional<RunTraceCursor> before;  ///< only runs older than this; unset: the newest
};

/// What the spans of one run add up to (spans with an empty run id belong to no run).
struct RunTraceSummary {
  std::string run_id;  ///< the run
  /// the trace of its invoke_agent spans (else of its first span written)
  std::string trace_id;
  std::string agent;          ///< gen_ai.agent.name of its invoke_agent spans
  std::string status;         ///< mend.run.status of the invoke_agent span that ended last
  Time start{};               ///< earliest span start
  Time end{};                 ///< latest span end
  int64_t attempts = 0;       ///< invoke_agent spans
  int64_t model_turns = 0;    ///< chat spans
  int64_t tool_calls = 0;     ///< execute_tool spans
  int64_t tool_errors = 0;    ///< execute_tool spans with status ERROR
  int64_t heal_actions = 0;   ///< heal.action events on any of its spans
  double cost_usd = 0;        ///< sum of mend.cost_usd over chat spans
  int64_t input_tokens = 0;   ///< sums over chat spans
  int64_t output_tokens = 0;  ///< sums over chat spans
  /// Field by field.
  bool operator==(const RunTraceSummary&) const = default;
};

/// One page of SpanStore::ListRuns.
struct RunTracePage {
  std::vector<RunTraceSummary> runs;   ///< newest first
  std::optional<RunTraceCursor> next;  ///< set when older runs exist
};

/// A position in the newest-first list of traces: the page after it starts with the next older
/// trace. Traces are ordered by their earliest span start, then by trace id (both descending).
struct TraceCursor {
  Time start{};          ///< the trace's earliest span start
  std::string trace_id;  ///< the trace
  /// Field by field.
  bool operator==(const TraceCursor&) const = default;
};
/// "<start in unix nanoseconds>:<trace id>"; opaque to users.
std::string FormatTraceCursor(const TraceCursor& cursor);
/// kInvalidArgument for text FormatTraceCursor cannot have produced.
Result<TraceCursor> ParseTraceCursor(std::string_view text);

/// Which traces a TraceQuery keeps by their spans' status.
enum class TraceOutcome {
  kAny,    ///< every trace
  kOk,     ///< traces without a span of status ERROR
  kError,  ///< traces with at least one span of status ERROR
};

/// A page of SpanStore::ListTraces. Each filter that is set narrows the list and they combine (a
/// trace must pass all of them); the page's total and more count only the traces that pass. The
/// filters are applied by the database, through the per-trace summary and the spans of each
/// candidate trace, never by reading every trace into memory.
struct TraceQuery {
  size_t limit = 20;                  ///< 1..kMaxTracePageSize
  std::optional<TraceCursor> before;  ///< only traces older than this; unset: the newest
  /// "": any; else a span of the trace has the string attribute gen_ai.agent.name equal to it.
  std::string agent;
  /// "": any; else the trace's TraceSummary::service_name equals it.
  std::string service;
  TraceOutcome outcome = TraceOutcome::kAny;  ///< by the trace's error count
  /// "": any; else a span of the trace has gen_ai.request.model or gen_ai.response.model equal to
  /// it.
  std::string model;
  std::optional<Time> from;  ///< only traces whose earliest span started at or after this
  std::optional<Time> to;    ///< only traces whose earliest span started before this
  /// "": any; else a span of the trace with status ERROR holds it (ASCII letters in any case) in
  /// its status message, or in an error.type, exception.type or exception.message attribute of
  /// the span or of one of its events.
  std::string error_text;
};

/// What the stored spans of one trace add up to: mend's own runs and spans other programs sent
/// (OTLP receiver) alike. The trace's root is the span without a parent that started first; while
/// no such span is stored (a root still in flight, or a trace continuing a caller's span), the span
/// that started first stands in for it and `has_root` is false.
struct TraceSummary {
  std::string trace_id;      ///< the trace
  std::string root_span_id;  ///< its root (or stand-in) span
  std::string root_name;     ///< that span's name
  bool has_root = false;     ///< whether the root itself is stored
  /// service.name of the root, else the smallest non-empty one among the trace's spans. mend's own
  /// spans carry no service.name; a span with a mend run id and none counts as service "mend".
  std::string service_name;
  /// The run id of the root, else the smallest non-empty one among the trace's spans; "" when no
  /// span belongs to a mend run.
  std::string run_id;
  Time start{};             ///< earliest span start
  Time end{};               ///< latest span end
  int64_t span_count = 0;   ///< spans stored
  int64_t error_count = 0;  ///< spans with status ERROR
  /// Field by field.
  bool operator==(const TraceSummary&) const = default;
};

/// One page of SpanStore::ListTraces.
struct TracePage {
  std::vector<TraceSummary> traces;  ///< newest first
  std::optional<TraceCursor> next;   ///< set when older traces exist
  int64_t total = 0;                 ///< traces stored
  int64_t more = 0;                  ///< traces after this page
};

/// The largest number of buckets SpanStore::Series adds up in one query.
inline constexpr int64_t kMaxSeriesBuckets = 1000;

/// What SpanStore::Series counts and groups by.
enum class SeriesBy {
  kAgent,  ///< runs (the per-run summaries, without mend proxy's "proxy-" ones), by agent
  kModel,  ///< model calls (chat spans), by the model that answered (else the one requested)
};

/// A query of SpanStore::Series: the things that started in [from, to), in buckets of `bucket`
/// counted from `from`.
struct SeriesQuery {
  Time from{};        ///< the first bucket starts here
  Time to{};          ///< after `from`
  Duration bucket{};  ///< positive; at most kMaxSeriesBuckets buckets between from and to
  SeriesBy by = SeriesBy::kAgent;  ///< what is counted and how it is grouped
};

/// What the runs (or model calls) of one key that started in one bucket add up to.
struct SeriesPoint {
  std::string key;     ///< the agent or model; "" when the span did not say
  int64_t bucket = 0;  ///< 0 for the bucket starting at SeriesQuery::from, 1 for the next, ...
  int64_t count = 0;   ///< runs or model calls
  /// Runs whose last status is failed or quarantined; model calls of status ERROR.
  int64_t failed = 0;
  double cost_usd = 0;        ///< sum of mend.cost_usd
  int64_t input_tokens = 0;   ///< sum of gen_ai.usage.input_tokens
  int64_t output_tokens = 0;  ///< sum of gen_ai.usage.output_tokens
  double mean_ms = 0;         ///< mean duration (a run: first span start to last span end)
  double max_ms = 0;          ///< longest duration
  /// Field by field.
  bool operator==(const SeriesPoint&) const = default;
};

/// Whether spans written now still have to reach an OTLP collector (docs/observe.md, "Spans a
/// collector has not taken").
enum class OtlpExport {
  kNone,   ///< no exporter in this process: nothing to send later (spans received over OTLP too)
  kAwait,  ///< this process's exporter sends them; until it says so they wait in observe.db
};

/// The ids of a stored span.
struct SpanKey {
  std::string trace_id;  ///< lowercase hex
  std::string span_id;   ///< lowercase hex
  /// Field by field.
  bool operator==(const SpanKey&) const = default;
};

/// What DeleteEndedBefore removed (or, in a dry run, would remove).
struct SpanPruneResult {
  int64_t spans = 0;   ///< spans that ended before the cutoff
  int64_t runs = 0;    ///< runs left with no span at all
  int64_t traces = 0;  ///< traces left with no span at all
  /// Bytes the file shrank by; in a dry run, an estimate (the size of the spans' columns).
  int64_t bytes_reclaimed = 0;
};

/// observe.db: finished spans in SQLite (WAL mode, synchronous=NORMAL), with per-run and per-trace
/// summaries the writer keeps up to date in the same transaction, so listing runs or traces does
/// not scan spans. The
/// format is in docs/observe.md. Errors: kUnavailable when the database is busy (locked),
/// kResourceExhausted when the disk is full, kDataLoss when it is corrupt, kInternal for other
/// SQLite failures (I/O errors included). All methods are thread-safe (one connection behind a
/// mutex); several processes may open the same file (SQLite's locking).
class SpanStore {
 public:
  /// Opens or creates `path` (its directory is created 0700 when missing; the file is made 0600)
  /// and brings its schema to kSpanStoreSchemaVersion (an older file is migrated in one
  /// transaction; docs/observe.md lists the migrations). `vfs` names a registered SQLite VFS (tests
  /// inject faults through one); empty is SQLite's default. kFailedPrecondition when the file was
  /// written by a newer schema.
  static Result<std::unique_ptr<SpanStore>> Open(const std::string& path,
                                                 const std::string& vfs = "");
  /// Opens an existing file read-only; writes fail. kNotFound when `path` does not exist,
  /// kFailedPrecondition when it has no schema or a newer one. An older schema is not migrated,
  /// and reads as a migrated one: the trace list a version 1 file lacks is built from its spans
  /// in the connection's temporary schema (never in the file), and a file older than version 3
  /// has no span waiting for a collector.
  static Result<std::unique_ptr<SpanStore>> OpenReadOnly(const std::string& path);
  /// The schema version of the file at `path`, read without creating or changing anything: 0 when
  /// the file or its schema does not exist yet (for `mend migrate`). kDataLoss when the file is
  /// not a database or its version is unreadable; kUnavailable when it stays locked.
  static Result<int64_t> ReadSchemaVersion(const std::string& path);
  ~SpanStore();
  SpanStore(const SpanStore&) = delete;
  SpanStore& operator=(const SpanStore&) = delete;

  /// Writes `spans` in one transaction, replacing a span stored with the same trace and span id,
  /// and adds `newly_dropped` to the persisted dropped-span total in the same transaction. On error
  /// nothing of it is stored. With kAwait every ended span (not an in-progress snapshot) waits for
  /// export until MarkExported or ExpireUnexported.
  Status Write(const std::vector<SpanData>& spans, int64_t newly_dropped = 0,
               OtlpExport otlp = OtlpExport::kNone);

  /// The OTLP exporter's bookkeeping (span_store_otlp.cc). Each returns the keys it found no
  /// waiting span for (not written yet, already exported, or never meant for export), so the
  /// caller can try them again once the writer has caught up.
  ///
  /// A collector accepted these spans: they wait no more.
  Result<std::vector<SpanKey>> MarkExported(const std::vector<SpanKey>& keys);
  /// The exporter of the process that ended these spans gave up on them: any exporter may send
  /// them now (SpansToExport).
  Result<std::vector<SpanKey>> HandOver(const std::vector<SpanKey>& keys);
  /// Up to `limit` spans any exporter may send, oldest end first: those handed over, and those
  /// still waiting for their own process's exporter that ended before `orphaned_before` (a process
  /// that died with them).
  Result<std::vector<SpanData>> SpansToExport(Time orphaned_before, size_t limit);
  /// Stops waiting for the spans that ended before `cutoff` and were never exported; how many.
  Result<int64_t> ExpireUnexported(Time cutoff);
  /// Spans waiting for export, for tests and status output.
  Result<int64_t> UnexportedCount();

  /// Every span of `trace_id`, by start time (then span id); empty when there is none.
  Result<std::vector<SpanData>> SpansOfTrace(const std::string& trace_id);
  /// The trace of run `run_id`; kNotFound when no span of the run is stored.
  Result<std::string> TraceIdOfRun(const std::string& run_id);
  /// The summary of one run; kNotFound when no span of the run is stored.
  Result<RunTraceSummary> RunSummary(const std::string& run_id);
  /// A page of runs, newest first. kInvalidArgument for a limit outside 1..kMaxRunTracePageSize.
  Result<RunTracePage> ListRuns(const RunTraceQuery& query);
  /// A page of traces, newest first, whether or not they belong to a mend run, narrowed by the
  /// query's filters. kInvalidArgument for a limit outside 1..kMaxTracePageSize;
  /// kFailedPrecondition on a version 1 file opened read-only.
  Result<TracePage> ListTraces(const TraceQuery& query);
  /// The summary of one trace; kNotFound when none of its spans is stored, kFailedPrecondition as
  /// for ListTraces.
  Result<TraceSummary> GetTraceSummary(const std::string& trace_id);

  /// What the runs or model calls that started in [query.from, query.to) add up to per key and
  /// bucket, summed by the database; ordered by key, then bucket; buckets with nothing are left
  /// out. kInvalidArgument for `to` not after `from`, a bucket that is not positive, or more than
  /// kMaxSeriesBuckets buckets.
  Result<std::vector<SeriesPoint>> Series(const SeriesQuery& query);

  /// The runs whose id starts with `prefix` (such as "proxy-", the conversations of mend proxy,
  /// docs/proxy.md), the one with the latest span end first, at most `limit` (from 1 to
  /// kMaxRunTracePageSize, else kInvalidArgument). A run whose spans carry no gen_ai.agent.name
  /// takes the mend.agent attribute of one of its spans as its agent.
  Result<std::vector<RunTraceSummary>> ListRunsByPrefix(std::string_view prefix, size_t limit);
  /// Every span of run `run_id`, by start time (then span id), whatever trace each belongs to;
  /// empty when there is none.
  Result<std::vector<SpanData>> SpansOfRun(const std::string& run_id);

  /// Deletes the spans that ended before `cutoff` (nothing with kDryRun), except those of the runs
  /// in `keep_runs` (unfinished runs keep their whole trace), updates the summaries of the runs and
  /// traces they belonged to, then runs `PRAGMA incremental_vacuum` and a WAL checkpoint (TRUNCATE)
  /// so the file shrinks.
  enum class Mode { kDelete, kDryRun };
  /// See Mode.
  Result<SpanPruneResult> DeleteEndedBefore(Time cutoff, Mode mode = Mode::kDelete,
                                            const std::vector<std::string>& keep_runs = {});

  /// Spans that never reached the file (buffer full, failed writes), as writers recorded them.
  Result<int64_t> dropped_spans();

 private:
  SpanStore(std::unique_ptr<db::SqliteConn> conn, int64_t schema_version);
  /// Traces that pass `query`'s filters and sort before `before` (all when unset); mu_ held.
  Result<int64_t> CountFiltered(const TraceQuery& query, const std::optional<TraceCursor>& before,
                                const std::string& error_text);

  std::mutex mu_;
  std::unique_ptr<db::SqliteConn> conn_;
  const int64_t schema_version_;  // of the file; older than ours only when opened read-only
};

}  // namespace mend::obs
