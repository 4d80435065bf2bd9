// Retention for the PostgreSQL store. Plain DELETEs: autovacuum makes the space reusable, so there
// is nothing to reclaim by hand (docs/store_schema.md, "Pruning").

#include <string>
#include <vector>

#include "store/pg_store_impl.h"

namespace mend::store::internal {
namespace {

// FOR UPDATE makes a Claim that comes later wait for this prune and then see the run as it left
// it; SKIP LOCKED passes over runs another transaction is writing right now (a Claim, say), which
// a later prune will find again.
constexpr char kSelectFinishedBefore[] =
    "SELECT " MEND_STORE_RUN_COLUMNS
    " FROM runs WHERE status IN ('completed', 'failed') AND updated_at < $1 "
    "ORDER BY created_at, id COLLATE \"C\" FOR UPDATE SKIP LOCKED";
// Every checkpoint of a run but its newest, which Load, resume and `mend show` read.
constexpr char kCountHistory[] =
    "SELECT COUNT(*), COALESCE(SUM(octet_length(state)), 0) FROM checkpoints WHERE run_id = $1 "
    "AND step < (SELECT MAX(step) FROM checkpoints WHERE run_id = $1)";
constexpr char kDeleteHistory[] =
    "DELETE FROM checkpoints WHERE run_id = $1 AND "
    "step < (SELECT MAX(step) FROM checkpoints WHERE run_id = $1)";
constexpr char kCountCheckpoints[] =
    "SELECT COUNT(*), COALESCE(SUM(octet_length(state)), 0) FROM checkpoints WHERE run_id = $1";
constexpr char kCountMessages[] =
    "SELECT COUNT(*), COALESCE(SUM(octet_length(body)), 0) FROM messages WHERE run_id = $1";
// The cascade removes the run's messages and checkpoints.
constexpr char kDeleteWholeRun[] = "DELETE FROM runs WHERE id = $1";

struct RowsAndBytes {
  int64_t rows = 0;
  int64_t bytes = 0;
};

Result<RowsAndBytes> Count(PgConn& conn, const char* sql, const std::string& run_id) {
  MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(sql, {PgParam::Text(run_id)}));
  if (res.rows() == 0) return RowsAndBytes{};
  return RowsAndBytes{res.Int(0, 0).value_or(0), res.Int(0, 1).value_or(0)};
}

}  // namespace

Result<PruneReport> PgStore::Prune(const PruneRequest& request) {
  PruneReport report;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kWrite, [&](PgConn& conn) -> Status {
    report = PruneReport{};  // Transact runs the body again after a serialization failure
    MEND_ASSIGN_OR_RETURN(
        PgResult res, conn.Exec(kSelectFinishedBefore, {PgParam::Int(ToNanos(request.cutoff))}));
    std::vector<std::string> ids;
    for (int i = 0; i < res.rows(); ++i) {
      // A corrupt row is left for DeleteRun: nothing about it can be trusted, its age included.
      Result<StoredRun> run = ParsePgRunRow(res, i);
      if (!run.ok()) continue;
      if (OldEnoughToPrune(run->record, request.cutoff) && !LeaseIsLive(run->record)) {
        ids.push_back(run->record.id);
      }
    }
    for (const std::string& id : ids) MEND_RETURN_IF_ERROR(PruneRun(conn, id, request, report));
    return OkStatus();
  }));
  return report;
}

Status PgStore::PruneRun(PgConn& conn, const std::string& run_id, const PruneRequest& request,
                         PruneReport& report) {
  const bool whole = request.scope == PruneScope::kWholeRuns;
  MEND_ASSIGN_OR_RETURN(RowsAndBytes checkpoints,
                        Count(conn, whole ? kCountCheckpoints : kCountHistory, run_id));
  RowsAndBytes messages;
  if (whole) {
    MEND_ASSIGN_OR_RETURN(messages, Count(conn, kCountMessages, run_id));
  } else if (checkpoints.rows == 0) {
    return OkStatus();  // nothing but the final checkpoint: nothing to prune
  }
  report.runs += 1;
  report.runs_deleted += whole ? 1 : 0;
  report.checkpoints += checkpoints.rows;
  report.messages += messages.rows;
  report.bytes += checkpoints.bytes + messages.bytes;
  if (request.mode == PruneMode::kDryRun) return OkStatus();
  return conn.Exec(whole ? kDeleteWholeRun : kDeleteHistory, {PgParam::Text(run_id)}).status();
}

}  // namespace mend::store::internal
