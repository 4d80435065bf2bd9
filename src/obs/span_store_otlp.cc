// observe.db as the OTLP exporter's durable copy: which spans still have to reach a collector
// (docs/observe.md, "Spans a collector has not taken").
#include <utility>

#include "mend/obs/span_store.h"
#include "obs/span_codec.h"
#include "obs/span_store_rows.h"
#include "obs/span_store_sql.h"

namespace mend::obs {
namespace {

using internal::SqliteConn;
using internal::SqliteStmt;

// Runs `sql` (?1 trace id, ?2 span id) for each key in one transaction; the keys it changed no
// row for come back.
Result<std::vector<SpanKey>> UpdateEach(SqliteConn& conn, const char* sql,
                                        const std::vector<SpanKey>& keys) {
  std::vector<SpanKey> unmatched;
  if (keys.empty()) return unmatched;
  MEND_RETURN_IF_ERROR(conn.InTransaction(SqliteConn::TxKind::kWrite, [&]() -> Status {
    unmatched.clear();  // a retried transaction starts over
    for (const SpanKey& key : keys) {
      MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn.Prepare(sql));
      stmt.BindTextRef(1, key.trace_id).BindTextRef(2, key.span_id);
      MEND_RETURN_IF_ERROR(stmt.Run());
      if (conn.Changes() == 0) unmatched.push_back(key);
    }
    return OkStatus();
  }));
  return unmatched;
}

}  // namespace

Result<std::vector<SpanKey>> SpanStore::MarkExported(const std::vector<SpanKey>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  return UpdateEach(*conn_, internal::kOtlpExported, keys);
}

Result<std::vector<SpanKey>> SpanStore::HandOver(const std::vector<SpanKey>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  return UpdateEach(*conn_, internal::kOtlpHandOver, keys);
}

Result<std::vector<SpanData>> SpanStore::SpansToExport(Time orphaned_before, size_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn_->Prepare(internal::kOtlpToSend));
  stmt.Bind(1, internal::UnixNanos(orphaned_before)).Bind(2, static_cast<int64_t>(limit));
  std::vector<SpanData> spans;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return spans;
    MEND_ASSIGN_OR_RETURN(SpanData span, internal::SpanOfRow(stmt));
    spans.push_back(std::move(span));
  }
}

Result<int64_t> SpanStore::ExpireUnexported(Time cutoff) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t expired = 0;
  MEND_RETURN_IF_ERROR(conn_->InTransaction(SqliteConn::TxKind::kWrite, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn_->Prepare(internal::kOtlpExpire));
    MEND_RETURN_IF_ERROR(stmt.Bind(1, internal::UnixNanos(cutoff)).Run());
    expired = conn_->Changes();
    return OkStatus();
  }));
  return expired;
}

Result<int64_t> SpanStore::UnexportedCount() {
  // A file older than version 3 (opened read-only) keeps no export state: as after its migration,
  // its spans wait for no collector.
  if (schema_version_ < 3) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->QueryInt(internal::kOtlpWaiting);
}

}  // namespace mend::obs
