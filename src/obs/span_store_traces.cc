// observe.db: the list of traces (mend's runs and spans other programs sent alike).
#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <utility>

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

namespace {

bool HasFilters(const TraceQuery& q) {
  return !q.agent.empty() || !q.service.empty() || q.outcome != TraceOutcome::kAny ||
         !q.model.empty() || q.from.has_value() || q.to.has_value() || !q.error_text.empty();
}

std::string AsciiLower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

// The upper bound of the traces a filtered query may list: the cursor, or `to` when that comes
// first. ("" sorts before every trace id, so (to, "") keeps exactly the traces started before
// `to`; with neither, only a trace started at the largest time representable is left out.)
std::pair<int64_t, std::string> UpperBound(const TraceQuery& q,
                                           const std::optional<TraceCursor>& cursor) {
  std::pair<int64_t, std::string> bound{std::numeric_limits<int64_t>::max(), ""};
  if (q.to.has_value()) bound = {UnixNanos(*q.to), ""};
  if (cursor.has_value()) {
    bound = std::min(bound, std::make_pair(UnixNanos(cursor->start), cursor->trace_id));
  }
  return bound;
}

// Binds kTracesFiltered's and kCountTracesFiltered's parameters from ?2 on.
void BindFilters(SqliteStmt& stmt, const TraceQuery& q,
                 const std::pair<int64_t, std::string>& bound, const std::string& error_text) {
  stmt.Bind(2, bound.first)
      .BindText(3, bound.second)
      .Bind(4, q.from.has_value() ? UnixNanos(*q.from) : std::numeric_limits<int64_t>::min())
      .BindText(5, q.service)
      .Bind(6, static_cast<int64_t>(q.outcome))
      .BindText(7, q.agent)
      .BindText(8, q.model)
      .BindText(9, error_text);
}

}  // namespace

Result<TracePage> SpanStore::ListTraces(const TraceQuery& query) {
  if (query.limit < 1 || query.limit > kMaxTracePageSize) {
    return InvalidArgumentError("the page size must be between 1 and " +
                                std::to_string(kMaxTracePageSize));
  }
  const bool filtered = HasFilters(query);
  const std::string error_text = AsciiLower(query.error_text);
  std::lock_guard<std::mutex> lock(mu_);
  const char* sql = filtered                   ? internal::kTracesFiltered
                    : query.before.has_value() ? internal::kTracesBefore
                                               : internal::kTracesFirstPage;
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn_->Prepare(sql));
  // One more than asked for tells whether there is a next page.
  stmt.Bind(1, static_cast<int64_t>(query.limit + 1));
  if (filtered) {
    BindFilters(stmt, query, UpperBound(query, query.before), error_text);
  } else if (query.before.has_value()) {
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
  if (filtered) {
    MEND_ASSIGN_OR_RETURN(page.total, CountFiltered(query, std::nullopt, error_text));
    if (page.next.has_value()) {
      MEND_ASSIGN_OR_RETURN(page.more, CountFiltered(query, page.next, error_text));
    }
    return page;
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

Result<int64_t> SpanStore::CountFiltered(const TraceQuery& query,
                                         const std::optional<TraceCursor>& before,
                                         const std::string& error_text) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt count, conn_->Prepare(internal::kCountTracesFiltered));
  BindFilters(count, query, UpperBound(query, before), error_text);
  MEND_ASSIGN_OR_RETURN(bool row, count.Step());
  return row ? count.Int(0) : 0;
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
