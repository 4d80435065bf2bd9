// observe.db: runs and model calls added up per key and time bucket, for charts over time
// (docs/http_api.md, "Metrics over time").
#include <string>
#include <vector>

#include "mend/obs/span_store.h"
#include "obs/span_codec.h"
#include "obs/span_store_rows.h"
#include "obs/span_store_sql.h"

namespace mend::obs {

using internal::SqliteStmt;
using internal::UnixNanos;

namespace {

Status CheckSeriesQuery(const SeriesQuery& q) {
  if (q.to <= q.from) return InvalidArgumentError("the series must end after it starts");
  if (q.bucket <= Duration::zero()) return InvalidArgumentError("the bucket must be positive");
  const auto span = q.to - q.from;
  if ((span + q.bucket - Duration(1)) / q.bucket > kMaxSeriesBuckets) {
    return InvalidArgumentError("at most " + std::to_string(kMaxSeriesBuckets) +
                                " buckets fit in one series");
  }
  return OkStatus();
}

constexpr double kNanosPerMilli = 1e6;

SeriesPoint PointOfRow(const SqliteStmt& stmt) {
  SeriesPoint p;
  p.key = stmt.IsNull(0) ? "" : stmt.Text(0);
  p.bucket = stmt.Int(1);
  p.count = stmt.Int(2);
  p.failed = stmt.Int(3);
  p.cost_usd = stmt.Double(4);
  p.input_tokens = static_cast<int64_t>(stmt.Double(5));
  p.output_tokens = static_cast<int64_t>(stmt.Double(6));
  p.mean_ms = stmt.Double(7) / kNanosPerMilli;
  p.max_ms = static_cast<double>(stmt.Int(8)) / kNanosPerMilli;
  return p;
}

}  // namespace

Result<std::vector<SeriesPoint>> SpanStore::Series(const SeriesQuery& query) {
  MEND_RETURN_IF_ERROR(CheckSeriesQuery(query));
  std::lock_guard<std::mutex> lock(mu_);
  const char* sql =
      query.by == SeriesBy::kAgent ? internal::kSeriesByAgent : internal::kSeriesByModel;
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn_->Prepare(sql));
  stmt.Bind(1, UnixNanos(query.from)).Bind(2, UnixNanos(query.to)).Bind(3, query.bucket.count());
  std::vector<SeriesPoint> points;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    points.push_back(PointOfRow(stmt));
  }
  return points;
}

}  // namespace mend::obs
