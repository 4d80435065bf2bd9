#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/db/sqlite.h"
#include "mend/obs/span_store.h"
#include "mend/obs/trace.h"

namespace mend::obs::internal {

using db::SqliteConn;
using db::SqliteStmt;

// What a trace's summary needs of one span. Views into the span (or the row) it came from.
struct TraceSpanFacts {
  std::string_view trace_id;
  std::string_view span_id;
  std::string_view name;
  std::string_view run_id;
  std::string_view service;  // ServiceOf
  bool is_root = false;      // no parent span
  bool is_error = false;     // status ERROR
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// service.name among `attributes` when it is a string; else "mend" for a span of a mend run (mend's
// own spans carry no resource); else "".
std::string_view ServiceOf(const std::vector<Attribute>& attributes, std::string_view run_id);
TraceSpanFacts FactsOf(const SpanData& span);

// A trace's summary while spans are added to it, with what is needed to merge it with the stored
// one (SpanStore keeps the same rules in SQL, kUpsertTrace in span_store_sql.h): the root is the
// candidate that sorts first by (rank, start, span id), rank 0 for a span without a parent and 1
// for any other; `any_*` keep the smallest non-empty value seen.
struct TraceAccumulator {
  std::string trace_id;
  bool empty = true;
  int64_t root_rank = 2;  // no candidate yet
  int64_t root_start_ns = 0;
  std::string root_span_id, root_name, root_service, root_run_id;
  std::string any_service, any_run_id;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t span_count = 0;
  int64_t error_count = 0;

  void Add(const TraceSpanFacts& span);
};

// Binds `acc` to kUpsertTrace's parameters.
void BindTrace(SqliteStmt& stmt, const TraceAccumulator& acc);
// The summary of a row selected with MEND_TRACE_COLUMNS.
TraceSummary TraceOfRow(const SqliteStmt& stmt);

// Rebuilds the stored summary of `trace_id` from its spans (deleting it when none is left). Called
// inside a write transaction.
Status RecomputeTrace(SqliteConn& conn, const std::string& trace_id);
// Fills the (empty) traces table from every stored span: the migration to schema version 2.
// Called inside a write transaction.
Status BackfillTraces(SqliteConn& conn);

}  // namespace mend::obs::internal
