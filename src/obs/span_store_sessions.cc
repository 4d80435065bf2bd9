// observe.db: runs picked by the prefix of their id, and every span of one run in order, for the
// conversations of mend proxy shown as sessions (docs/http_api.md, "Sessions").
#include <string>
#include <string_view>
#include <vector>

#include "mend/obs/span_store.h"
#include "obs/span_store_rows.h"
#include "obs/span_store_sql.h"

namespace mend::obs {

using internal::SqliteStmt;

Result<std::vector<RunTraceSummary>> SpanStore::ListRunsByPrefix(std::string_view prefix,
                                                                 size_t limit) {
  if (limit < 1 || limit > kMaxRunTracePageSize) {
    return InvalidArgumentError("the page size must be between 1 and " +
                                std::to_string(kMaxRunTracePageSize));
  }
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn_->Prepare(internal::kRunsByPrefix));
  stmt.Bind(1, static_cast<int64_t>(limit)).BindText(2, prefix);
  std::vector<RunTraceSummary> runs;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    runs.push_back(internal::RunOfRow(stmt));
  }
  return runs;
}

Result<std::vector<SpanData>> SpanStore::SpansOfRun(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn_->Prepare(internal::kSpansOfRunInOrder));
  stmt.BindText(1, run_id);
  std::vector<SpanData> spans;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    MEND_ASSIGN_OR_RETURN(SpanData span, internal::SpanOfRow(stmt));
    spans.push_back(std::move(span));
  }
  return spans;
}

}  // namespace mend::obs
