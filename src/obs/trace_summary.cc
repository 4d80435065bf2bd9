#include "obs/trace_summary.h"

#include <algorithm>

#include "obs/span_codec.h"
#include "obs/span_store_sql.h"

namespace mend::obs::internal {
namespace {

constexpr std::string_view kServiceName = "service.name";

// The smaller of two values, an empty one counting as absent.
void KeepSmallestNonEmpty(std::string& kept, std::string_view candidate) {
  if (candidate.empty()) return;
  if (kept.empty() || candidate < kept) kept = std::string(candidate);
}

// A span row's facts, with the strings they point into.
struct FactsRow {
  std::string trace_id, span_id, run_id, name, service;
  TraceSpanFacts facts;
};

// Reads a row selected with MEND_TRACE_FACT_COLUMNS. Only rows whose attributes mention
// service.name have them decoded; kDataLoss when those are malformed.
Status ReadFacts(const SqliteStmt& stmt, FactsRow& row) {
  row.trace_id = stmt.Text(0);
  row.span_id = stmt.Text(1);
  const bool is_root = stmt.Text(2).empty();
  row.run_id = stmt.Text(3);
  row.name = stmt.Text(4);
  const std::string attributes = stmt.Text(8);
  if (attributes.find("\"service.name\"") != std::string::npos) {
    MEND_ASSIGN_OR_RETURN(std::vector<Attribute> decoded, DecodeAttributes(attributes));
    row.service = std::string(ServiceOf(decoded, row.run_id));
  } else {
    row.service = std::string(ServiceOf({}, row.run_id));
  }
  row.facts = TraceSpanFacts{row.trace_id, row.span_id,      row.name,    row.run_id, row.service,
                             is_root,      stmt.Int(7) == 2, stmt.Int(5), stmt.Int(6)};
  return OkStatus();
}

Status StoreTrace(SqliteConn& conn, const TraceAccumulator& acc) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt upsert, conn.Prepare(kUpsertTrace));
  BindTrace(upsert, acc);
  return upsert.Run();
}

}  // namespace

std::string_view ServiceOf(const std::vector<Attribute>& attributes, std::string_view run_id) {
  if (const AttributeValue* v = FindAttribute(attributes, kServiceName)) {
    if (const auto* s = std::get_if<std::string>(v)) return *s;
  }
  return run_id.empty() ? std::string_view() : std::string_view("mend");
}

TraceSpanFacts FactsOf(const SpanData& span) {
  return TraceSpanFacts{span.context.trace_id,
                        span.context.span_id,
                        span.name,
                        span.run_id,
                        ServiceOf(span.attributes, span.run_id),
                        span.parent_span_id.empty(),
                        span.status == SpanStatus::kError,
                        UnixNanos(span.start),
                        UnixNanos(span.end)};
}

void TraceAccumulator::Add(const TraceSpanFacts& span) {
  if (empty) {
    trace_id = std::string(span.trace_id);
    start_ns = span.start_ns;
    end_ns = span.end_ns;
    empty = false;
  }
  start_ns = std::min(start_ns, span.start_ns);
  end_ns = std::max(end_ns, span.end_ns);
  ++span_count;
  if (span.is_error) ++error_count;
  const int64_t rank = span.is_root ? 0 : 1;
  const bool better = rank != root_rank                ? rank < root_rank
                      : span.start_ns != root_start_ns ? span.start_ns < root_start_ns
                                                       : span.span_id < root_span_id;
  if (better) {
    root_rank = rank;
    root_start_ns = span.start_ns;
    root_span_id = std::string(span.span_id);
    root_name = std::string(span.name);
    root_service = std::string(span.service);
    root_run_id = std::string(span.run_id);
  }
  KeepSmallestNonEmpty(any_service, span.service);
  KeepSmallestNonEmpty(any_run_id, span.run_id);
}

void BindTrace(SqliteStmt& stmt, const TraceAccumulator& acc) {
  stmt.BindText(1, acc.trace_id)
      .Bind(2, acc.root_rank)
      .Bind(3, acc.root_start_ns)
      .BindText(4, acc.root_span_id)
      .BindText(5, acc.root_name)
      .BindText(6, acc.root_service)
      .BindText(7, acc.root_run_id)
      .BindText(8, acc.any_service)
      .BindText(9, acc.any_run_id)
      .Bind(10, acc.start_ns)
      .Bind(11, acc.end_ns)
      .Bind(12, acc.span_count)
      .Bind(13, acc.error_count);
}

TraceSummary TraceOfRow(const SqliteStmt& stmt) {
  TraceSummary t;
  t.trace_id = stmt.Text(0);
  t.has_root = stmt.Int(1) == 0;
  t.root_span_id = stmt.Text(3);
  t.root_name = stmt.Text(4);
  t.service_name = stmt.Text(5);
  if (t.service_name.empty()) t.service_name = stmt.Text(7);
  t.run_id = stmt.Text(6);
  if (t.run_id.empty()) t.run_id = stmt.Text(8);
  t.start = FromUnixNanos(stmt.Int(9));
  t.end = FromUnixNanos(stmt.Int(10));
  t.span_count = stmt.Int(11);
  t.error_count = stmt.Int(12);
  return t;
}

Status RecomputeTrace(SqliteConn& conn, const std::string& trace_id) {
  TraceAccumulator acc;
  {
    MEND_ASSIGN_OR_RETURN(SqliteStmt select, conn.Prepare(kTraceFactsOf));
    select.BindText(1, trace_id);
    FactsRow row;
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool more, select.Step());
      if (!more) break;
      MEND_RETURN_IF_ERROR(ReadFacts(select, row));
      acc.Add(row.facts);
    }
  }
  MEND_ASSIGN_OR_RETURN(SqliteStmt erase, conn.Prepare(kDeleteTrace));
  MEND_RETURN_IF_ERROR(erase.BindText(1, trace_id).Run());
  if (acc.empty) return OkStatus();
  return StoreTrace(conn, acc);
}

Status BackfillTraces(SqliteConn& conn) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt select, conn.Prepare(kTraceFactsAll));
  TraceAccumulator acc;
  FactsRow row;
  // Rows come grouped by trace (the primary key's order): one summary is built at a time.
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool more, select.Step());
    if (!more) break;
    MEND_RETURN_IF_ERROR(ReadFacts(select, row));
    if (!acc.empty && acc.trace_id != row.trace_id) {
      MEND_RETURN_IF_ERROR(StoreTrace(conn, acc));
      acc = TraceAccumulator();
    }
    acc.Add(row.facts);
  }
  return acc.empty ? OkStatus() : StoreTrace(conn, acc);
}

}  // namespace mend::obs::internal
