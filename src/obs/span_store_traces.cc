// observe.db: the list of traces (mend's runs and spans other programs sent alike).
#include <charconv>
#include <string>

#include "mend/obs/span_store.h"
#include "obs/span_codec.h"
#include "obs/span_store_sql.h"
#include "obs/trace_summary.h"

namespace mend::obs {

using internal::SqliteStmt;
using internal::UnixNanos;

std::string FormatTraceCursor(const TraceCursor& cursor) {
  return std::to_string(UnixNanos(cursor.start)) + ":" + cursor.trace_id;
}

Result<TraceCursor> ParseTraceCursor(std::string_view text) {
  const size_t colon = text.find(':');
  const Status malformed = InvalidArgumentError("malformed cursor \"" + std::string(text) + "\"");
  if (colon == std::string_view::npos) return malformed;
  int64_t ns = 0;
  const char* end = text.data() + colon;
  auto [ptr, ec] = std::from_chars(text.data(), end, ns);
  const std::string_view trace_id = text.substr(colon + 1);
  if (colon == 0 || ec != std::errc() || ptr != end || !IsSpanIdHex(trace_id, 32)) {
    return malformed;
  }
  return TraceCursor{internal::FromUnixNanos(ns), std::string(trace_id)};
}

Result<TracePage> SpanStore::ListTraces(const TraceQuery& query) {
  if (query.limit < 1 || query.limit > kMaxTracePageSize) {
    return InvalidArgumentError("the page size must be between 1 and " +
                                std::to_string(kMaxTracePageSize));
  }
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt,
                        conn_->Prepare(query.before.has_value() ? internal::kTracesBefore
                                                                : internal::kTracesFirstPage));
  // One more than asked for tells whether there is a next page.
  stmt.Bind(1, static_cast<int64_t>(query.limit + 1));
  if (query.before.has_value()) {
    stmt.Bind(2, UnixNanos(query.before->start)).BindText(3, query.before->trace_id);
  }
  TracePage page;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    if (page.traces.size() == query.limit) {
      const TraceSummary& last = page.traces.back();
      page.next = TraceCursor{last.start, last.trace_id};
      break;
    }
    page.traces.push_back(internal::TraceOfRow(stmt));
  }
  MEND_ASSIGN_OR_RETURN(page.total, conn_->QueryInt(internal::kCountTraces));
  if (page.next.has_value()) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt more, conn_->Prepare(internal::kCountTracesBefore));
    more.Bind(1, UnixNanos(page.next->start)).BindText(2, page.next->trace_id);
    MEND_ASSIGN_OR_RETURN(bool row, more.Step());
    if (row) page.more = more.Int(0);
  }
  return page;
}

Result<TraceSummary> SpanStore::GetTraceSummary(const std::string& trace_id) {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn_->Prepare(internal::kTraceById));
  stmt.BindText(1, trace_id);
  MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return NotFoundError("no spans of trace " + trace_id + " in observe.db");
  return internal::TraceOfRow(stmt);
}

}  // namespace mend::obs
