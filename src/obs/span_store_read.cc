// observe.db: reading traces and run summaries, and pruning.
#include <charconv>
#include <string>
#include <vector>

#include "mend/obs/span_store.h"
#include "obs/span_codec.h"
#include "obs/span_store_rows.h"
#include "obs/span_store_sql.h"
#include "obs/trace_summary.h"

namespace mend::obs {

using internal::SqliteConn;
using internal::SqliteStmt;
using internal::UnixNanos;

namespace {

// After the spans that ended before `cutoff_ns` are gone: removes the traces left with no span
// (counted in `removed`) and rebuilds the others that lost spans.
Status PruneTraces(SqliteConn& conn, int64_t cutoff_ns, int64_t* removed) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt empty, conn.Prepare(internal::kDeleteEmptyTracesBefore));
  MEND_RETURN_IF_ERROR(empty.Bind(1, cutoff_ns).Run());
  *removed = conn.Changes();
  std::vector<std::string> left;
  {
    MEND_ASSIGN_OR_RETURN(SqliteStmt select, conn.Prepare(internal::kTracesStartedBefore));
    select.Bind(1, cutoff_ns);
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      left.push_back(select.Text(0));
    }
  }
  for (const std::string& trace_id : left) {
    MEND_RETURN_IF_ERROR(internal::RecomputeTrace(conn, trace_id));
  }
  return OkStatus();
}

}  // namespace

std::string FormatRunTraceCursor(const RunTraceCursor& cursor) {
  return std::to_string(UnixNanos(cursor.start)) + ":" + cursor.run_id;
}

Result<RunTraceCursor> ParseRunTraceCursor(std::string_view text) {
  const size_t colon = text.find(':');
  int64_t ns = 0;
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return InvalidArgumentError("malformed cursor \"" + std::string(text) + "\"");
  }
  const char* end = text.data() + colon;
  auto [ptr, ec] = std::from_chars(text.data(), end, ns);
  if (ec != std::errc() || ptr != end) {
    return InvalidArgumentError("malformed cursor \"" + std::string(text) + "\"");
  }
  return RunTraceCursor{internal::FromUnixNanos(ns), std::string(text.substr(colon + 1))};
}

Result<std::vector<SpanData>> SpanStore::SpansOfTrace(const std::string& trace_id) {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn_->Prepare(internal::kSpansOfTrace));
  stmt.BindText(1, trace_id);
  std::vector<SpanData> spans;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return spans;
    MEND_ASSIGN_OR_RETURN(SpanData span, internal::SpanOfRow(stmt));
    spans.push_back(std::move(span));
  }
}

Result<RunTraceSummary> SpanStore::RunSummary(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn_->Prepare(internal::kRunById));
  stmt.BindText(1, run_id);
  MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return NotFoundError("no spans of run " + run_id + " in observe.db");
  return internal::RunOfRow(stmt);
}

Result<std::string> SpanStore::TraceIdOfRun(const std::string& run_id) {
  MEND_ASSIGN_OR_RETURN(RunTraceSummary summary, RunSummary(run_id));
  return summary.trace_id;
}

Result<RunTracePage> SpanStore::ListRuns(const RunTraceQuery& query) {
  if (query.limit < 1 || query.limit > kMaxRunTracePageSize) {
    return InvalidArgumentError("the page size must be between 1 and " +
                                std::to_string(kMaxRunTracePageSize));
  }
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      conn_->Prepare(query.before.has_value() ? internal::kRunsBefore : internal::kRunsFirstPage));
  // One more than asked for tells whether there is a next page.
  stmt.Bind(1, static_cast<int64_t>(query.limit + 1));
  if (query.before.has_value()) {
    stmt.Bind(2, UnixNanos(query.before->start)).BindText(3, query.before->run_id);
  }
  RunTracePage page;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    if (page.runs.size() == query.limit) {
      const RunTraceSummary& last = page.runs.back();
      page.next = RunTraceCursor{last.start, last.run_id};
      break;
    }
    page.runs.push_back(internal::RunOfRow(stmt));
  }
  return page;
}

Result<SpanPruneResult> SpanStore::DeleteEndedBefore(Time cutoff, Mode mode,
                                                     const std::vector<std::string>& keep_runs) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t cutoff_ns = UnixNanos(cutoff);
  SpanPruneResult result;
  MEND_RETURN_IF_ERROR(conn_->Exec(internal::kCreateKeepRuns));
  MEND_RETURN_IF_ERROR(conn_->Exec(internal::kClearKeepRuns));
  for (const std::string& run_id : keep_runs) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt keep, conn_->Prepare(internal::kAddKeepRun));
    MEND_RETURN_IF_ERROR(keep.BindText(1, run_id).Run());
  }
  if (mode == Mode::kDryRun) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt count, conn_->Prepare(internal::kCountEndedBefore));
    count.Bind(1, cutoff_ns);
    MEND_ASSIGN_OR_RETURN(bool row, count.Step());
    if (row) result.spans = count.Int(0), result.bytes_reclaimed = count.Int(1);
    MEND_ASSIGN_OR_RETURN(SqliteStmt runs, conn_->Prepare(internal::kCountRunsEndedBefore));
    runs.Bind(1, cutoff_ns);
    MEND_ASSIGN_OR_RETURN(bool run_row, runs.Step());
    if (run_row) result.runs = runs.Int(0);
    MEND_ASSIGN_OR_RETURN(SqliteStmt traces, conn_->Prepare(internal::kCountTracesEmptiedBefore));
    traces.Bind(1, cutoff_ns);
    MEND_ASSIGN_OR_RETURN(bool trace_row, traces.Step());
    if (trace_row) result.traces = traces.Int(0);
    return result;
  }
  MEND_ASSIGN_OR_RETURN(int64_t pages_before, conn_->QueryInt(internal::kPageCount));
  MEND_RETURN_IF_ERROR(conn_->InTransaction(SqliteConn::TxKind::kWrite, [&]() -> Status {
    // Runs with spans on both sides of the cutoff keep a summary of what is left.
    std::vector<std::string> across;
    {
      MEND_ASSIGN_OR_RETURN(SqliteStmt select, conn_->Prepare(internal::kRunsAcross));
      select.Bind(1, cutoff_ns);
      while (true) {
        MEND_ASSIGN_OR_RETURN(bool row, select.Step());
        if (!row) break;
        across.push_back(select.Text(0));
      }
    }
    MEND_ASSIGN_OR_RETURN(SqliteStmt spans, conn_->Prepare(internal::kDeleteSpansEndedBefore));
    MEND_RETURN_IF_ERROR(spans.Bind(1, cutoff_ns).Run());
    result.spans = conn_->Changes();
    MEND_ASSIGN_OR_RETURN(SqliteStmt runs, conn_->Prepare(internal::kDeleteRunsEndedBefore));
    MEND_RETURN_IF_ERROR(runs.Bind(1, cutoff_ns).Run());
    result.runs = conn_->Changes();
    for (const std::string& run_id : across) {
      MEND_RETURN_IF_ERROR(internal::RecomputeRun(*conn_, run_id));
    }
    return PruneTraces(*conn_, cutoff_ns, &result.traces);
  }));
  // Free pages go back to the file system: incremental_vacuum moves them to the end and truncates
  // (the database is in auto_vacuum=INCREMENTAL mode), and the checkpoint shrinks the WAL.
  MEND_RETURN_IF_ERROR(conn_->Exec("PRAGMA incremental_vacuum"));
  MEND_ASSIGN_OR_RETURN(int64_t pages_after, conn_->QueryInt(internal::kPageCount));
  MEND_ASSIGN_OR_RETURN(int64_t page_size, conn_->QueryInt(internal::kPageSize));
  MEND_RETURN_IF_ERROR(conn_->Exec("PRAGMA wal_checkpoint(TRUNCATE)"));
  result.bytes_reclaimed = std::max<int64_t>(0, pages_before - pages_after) * page_size;
  return result;
}

}  // namespace mend::obs
