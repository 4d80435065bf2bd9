#pragma once

#include <string>

#include "mend/db/sqlite.h"
#include "mend/obs/span_store.h"
#include "obs/run_summary.h"

namespace mend::obs::internal {

using db::SqliteConn;
using db::SqliteStmt;

// The encoded JSON columns of the span being written; kept across the spans of a batch so their
// buffers are allocated once.
struct SpanRowText {
  std::string attributes, events, links;
};

// Binds `span` to a statement with MEND_SPAN_VALUES' parameters, without copying: `span` and
// `text` (which receives the encoded columns) must outlive `stmt`'s use.
void BindSpan(SqliteStmt& stmt, const SpanData& span, SpanRowText& text);
// The span of a row selected with MEND_SPAN_COLUMNS; kDataLoss for malformed JSON columns.
Result<SpanData> SpanOfRow(const SqliteStmt& stmt);

// Binds `acc` to kUpsertRun's parameters.
void BindRun(SqliteStmt& stmt, const RunAccumulator& acc);
// The summary of a row selected with MEND_RUN_COLUMNS.
RunTraceSummary RunOfRow(const SqliteStmt& stmt);

// Rebuilds the stored summary of `run_id` from its spans (deleting it when none is left). Called
// inside a write transaction.
Status RecomputeRun(SqliteConn& conn, const std::string& run_id);

}  // namespace mend::obs::internal
