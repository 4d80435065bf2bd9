// Group commit for the PostgreSQL store: the saves of a batch as one statement each, in one
// transaction sent in one round trip; each save keeps its own outcome.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "mend/base/hash.h"
#include "store/pg_store_impl.h"

namespace mend::store::internal {
namespace {

// A save with no RunUpdate, in one statement. The UPDATE checks what SaveIn checks on the locked
// row (the fence of CheckFence: same epoch, a lease recorded and unexpired at $4; a run not
// completed; the step next after the run's) and takes the row lock; the inserts and the history
// trim are driven by the row it returns, so a save whose checks fail writes nothing and returns no
// row; the trim looks for rows only once the run has had more than history_limit checkpoints
// (checkpoint steps start at 1). Each parameter is cast where it is used, so none takes its type
// from an arithmetic context. $1 run id, $2 step, $3 epoch, $4 now (nanoseconds), $5 the new
// messages (bytea[]), $6 their CRCs (bigint[]), $7 the state, $8 its CRC, $9 the newest step the
// history drops.
constexpr char kSaveInOneStatement[] =
    "WITH run AS ("
    "UPDATE runs SET step = $2::bigint, "
    "message_count = message_count + cardinality($6::bigint[]), updated_at = $4::bigint "
    "WHERE id = $1::text AND epoch = $3::bigint AND lease_id IS NOT NULL "
    "AND lease_expires_at > $4::bigint AND status <> 'completed' AND step = $2::bigint - 1 "
    "RETURNING message_count), "
    "new_messages AS ("
    "INSERT INTO messages (run_id, seq, body, crc) "
    "SELECT $1::text, run.message_count - cardinality($6::bigint[]) + m.n - 1, m.body, m.crc "
    "FROM run, unnest($5::bytea[], $6::bigint[]) WITH ORDINALITY AS m (body, crc, n)), "
    "new_checkpoint AS ("
    "INSERT INTO checkpoints (run_id, step, message_count, state, crc, created_at) "
    "SELECT $1::text, $2::bigint, run.message_count, $7::bytea, $8::bigint, $4::bigint FROM run), "
    "trimmed AS ("
    "DELETE FROM checkpoints WHERE $9::bigint > 0 AND run_id = $1::text AND step <= $9::bigint "
    "AND EXISTS (SELECT FROM run)) "
    "SELECT 1 FROM run";
constexpr int kSaveParams = 9;

int64_t CrcOf(std::string_view bytes) { return static_cast<int64_t>(Crc32(bytes)); }

std::vector<PgParam> SaveParams(const PgSaveWork& save, int64_t now, size_t history_limit) {
  const Checkpoint& cp = save.checkpoint;
  std::vector<std::string> crcs;
  crcs.reserve(cp.new_messages.size());
  for (const std::string& m : cp.new_messages) crcs.push_back(std::to_string(CrcOf(m)));
  return {PgParam::Text(save.lease.run_id),
          PgParam::Int(cp.step),
          PgParam::Int(save.lease.epoch),
          PgParam::Int(now),
          PgParam::BytesArray(cp.new_messages),
          PgParam::Text(PgTextArray(crcs)),
          PgParam::Bytes(cp.state),
          PgParam::Int(CrcOf(cp.state)),
          PgParam::Int(cp.step - static_cast<int64_t>(history_limit))};
}

// Whether the server reported `s` (it carries a SQLSTATE), as opposed to libpq losing the
// connection, after which the server may have run more than its answers show.
bool ServerReported(const Status& s) { return !s.ok() && !s.detail_code().empty(); }

// Whether `save` can be one statement: no RunUpdate to apply (SaveIn's checks of an update need
// the row), and a step the statement's `step = $2 - 1` cannot confuse with a corrupt row's.
bool OneStatement(const PgSaveWork& save) {
  return IsEmpty(save.update) && save.checkpoint.step >= 1;
}

}  // namespace

struct PgPipelineOutcome {
  enum class End {
    kCommitted,   // `applied` says which saves wrote; the others wrote nothing
    kRolledBack,  // the server failed a statement, so nothing was written
    kNotSent,     // no COMMIT reached the server, so nothing was written
    kFailed,      // the COMMIT failed or may have been applied: every save gets `error`
  };
  End end = End::kNotSent;
  Status error;
  std::vector<bool> applied;
  bool sent = false;  // the transaction reached the server, COMMIT included
};

namespace {

using End = PgPipelineOutcome::End;

// Reads the answers to BEGIN, `saves` one-statement saves and COMMIT, sent in one pipeline, and
// leaves the connection outside the pipeline and any transaction (or broken, for the pool to drop).
PgPipelineOutcome ReadPipeline(PgConn& conn, size_t saves) {
  PgPipelineOutcome out{End::kCommitted, OkStatus(), std::vector<bool>(saves, false), true};
  Status first_error = conn.Receive("BEGIN").status();
  for (size_t i = 0; i < saves; ++i) {
    Result<PgResult> res = conn.Receive(kSaveInOneStatement);
    if (res.ok()) {
      out.applied[i] = res->rows() > 0;
    } else if (first_error.ok()) {
      first_error = res.status();
    }
  }
  Status commit = conn.Receive("COMMIT").status();
  if (first_error.ok() && commit.ok()) {
    // COMMIT's answer comes once the commit is durable; nothing after it can undo that.
    if (conn.AwaitSync().ok()) conn.ExitPipeline().IgnoreError();
    return out;
  }
  if (conn.healthy() && conn.AwaitSync().ok() && conn.ExitPipeline().ok() && !conn.idle()) {
    conn.Run("ROLLBACK").IgnoreError();
  }
  if (ServerReported(first_error)) {
    // The server failed a statement before COMMIT, so it skipped the COMMIT (or ran it as a
    // ROLLBACK of the failed transaction), whatever became of the connection afterwards.
    out.end = End::kRolledBack;
    return out;
  }
  out.end = End::kFailed;
  out.error = first_error.ok() ? commit : first_error;
  return out;
}

}  // namespace

// BEGIN, the saves, COMMIT and a sync leave in one write and their answers come back in one read.
// Returns an error only when no COMMIT reached the server, so nothing can have been applied.
Result<PgPipelineOutcome> PgStore::SendPipeline(PgConn& conn,
                                                std::span<const PgSaveWork* const> saves) {
  // Preparing is synchronous; it cannot happen inside the pipeline.
  MEND_RETURN_IF_ERROR(conn.Prepare(kSaveInOneStatement, kSaveParams));
  MEND_RETURN_IF_ERROR(conn.EnterPipeline());
  const int64_t now = ToNanos(clock_.Now());
  Status sent = conn.Send("BEGIN");
  for (const PgSaveWork* save : saves) {
    if (!sent.ok()) break;
    sent = conn.Send(kSaveInOneStatement, SaveParams(*save, now, options_.history_limit),
                     PgConn::Plan::kPrepared);
  }
  if (sent.ok()) sent = conn.Send("COMMIT");
  // A failed send leaves the COMMIT unsent or cut short: the server cannot have committed. The
  // connection, left in the pipeline, is dropped by the pool.
  if (!sent.ok()) return sent;
  if (Status synced = conn.Sync(); !synced.ok()) {
    // The COMMIT may have left with what was flushed before the failure, and without the sync
    // the server's answers cannot be awaited.
    return PgPipelineOutcome{End::kFailed, synced, {}, true};
  }
  return ReadPipeline(conn, saves.size());
}

PgPipelineOutcome PgStore::RunPipeline(std::span<const PgSaveWork* const> saves) {
  // A pooled connection the server closed while it was idle is found before anything is sent; the
  // batch then goes once more on a fresh connection (the pool drops the broken one).
  for (int attempt = 1;; ++attempt) {
    Result<PgPool::Handle> conn = pool_.Acquire();
    if (!conn.ok()) return {End::kFailed, conn.status(), {}, false};
    Result<PgPipelineOutcome> out = SendPipeline(**conn, saves);
    if (out.ok()) return std::move(out).value();
    if (attempt == 1 && !(*conn)->healthy()) continue;
    // Nothing was applied; every save runs alone and meets the problem (or not) itself.
    return {End::kNotSent, out.status(), {}, false};
  }
}

// The saves that can be one statement go into the pipeline, at most one per run: the first save
// of each run in the batch. The others (a save with a RunUpdate, and every later save of a run
// already in the batch) run alone after the pipeline's COMMIT, in the order they were submitted,
// together with the pipelined saves whose statement wrote nothing, so they say why (or succeed
// now). Each run's saves are thus applied in submission order, and each save that runs alone
// sees exactly what the saves before it left.
void PgStore::RunBatch(std::span<PendingWrite* const> batch) {
  std::vector<const PgSaveWork*> pipelined;
  std::vector<size_t> pipelined_at;  // their places in `batch`
  std::unordered_set<std::string_view> runs;
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i]->result = OkStatus();
    const auto* save = static_cast<const PgSaveWork*>(batch[i]->work);
    if (save == nullptr) continue;
    bool first_of_run = runs.insert(save->lease.run_id).second;
    if (first_of_run && OneStatement(*save)) {
      pipelined.push_back(save);
      pipelined_at.push_back(i);
    }
  }
  PgPipelineOutcome out{End::kCommitted, OkStatus(), {}, false};
  if (!pipelined.empty()) out = RunPipeline(pipelined);
  int64_t fallbacks = 0;
  if (out.end == End::kFailed) {
    for (PendingWrite* w : batch) w->result = out.error;
  } else {
    std::vector<bool> done(batch.size(), false);
    for (size_t k = 0; k < pipelined.size(); ++k) {
      done[pipelined_at[k]] = out.end == End::kCommitted && out.applied[k];
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (done[i]) continue;
      batch[i]->result = (*batch[i]->body)();
      fallbacks += 1;
    }
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.writes += static_cast<int64_t>(batch.size());
  stats_.fallbacks += fallbacks;
  if (out.sent) stats_.transactions += 1;
  if (out.end == End::kRolledBack) stats_.rollbacks += 1;
}

PgStore::WriteStats PgStore::write_stats() {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

}  // namespace mend::store::internal
