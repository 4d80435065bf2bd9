// The checkpoint half of the PostgreSQL store: Save, Load, LatestStates, History and Fork.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/hash.h"
#include "store/lease_rules.h"
#include "store/pg_store_impl.h"

namespace mend::store::internal {
namespace {

constexpr char kInsertMessage[] =
    "INSERT INTO messages (run_id, seq, body, crc) VALUES ($1, $2, $3, $4)";
constexpr char kInsertCheckpoint[] =
    "INSERT INTO checkpoints (run_id, step, message_count, state, crc, created_at) "
    "VALUES ($1, $2, $3, $4, $5, $6)";
// The common Save changes only the progress columns; touching nothing indexed keeps it a HOT
// update.
constexpr char kUpdateProgress[] =
    "UPDATE runs SET step = $2, message_count = $3, updated_at = $4 WHERE id = $1";
constexpr char kTrimHistory[] = "DELETE FROM checkpoints WHERE run_id = $1 AND step <= $2";
constexpr char kSelectCheckpoint[] =
    "SELECT message_count, state, crc FROM checkpoints WHERE run_id = $1 AND step = $2";
constexpr char kSelectMessages[] =
    "SELECT seq, body, crc FROM messages WHERE run_id = $1 AND seq < $2 ORDER BY seq";
// The newest checkpoint of each run of a text[] of ids: the row at the run's step.
constexpr char kSelectLatestStates[] =
    "SELECT c.run_id, c.step, c.state, c.crc FROM runs r JOIN checkpoints c "
    "ON c.run_id = r.id AND c.step = r.step WHERE r.id = ANY($1::text[])";
constexpr char kSelectHistory[] =
    "SELECT step, message_count, created_at FROM checkpoints WHERE run_id = $1 ORDER BY step";

int64_t CrcOf(std::string_view bytes) { return static_cast<int64_t>(Crc32(bytes)); }

// The bytes of column `blob_col` when they match the CRC in `crc_col`.
std::optional<std::string> IntactBytes(const PgResult& res, int row, int blob_col, int crc_col) {
  std::optional<std::string> bytes = res.Bytes(row, blob_col);
  std::optional<int64_t> crc = res.Int(row, crc_col);
  if (!bytes.has_value() || !crc.has_value() || CrcOf(*bytes) != *crc) return std::nullopt;
  return bytes;
}

}  // namespace

Status PgStore::InsertMessages(PgConn& conn, const std::string& run_id, int64_t first_seq,
                               const std::vector<std::string>& messages) {
  for (size_t i = 0; i < messages.size(); ++i) {
    MEND_RETURN_IF_ERROR(
        conn.Exec(kInsertMessage,
                  {PgParam::Text(run_id), PgParam::Int(first_seq + static_cast<int64_t>(i)),
                   PgParam::Bytes(messages[i]), PgParam::Int(CrcOf(messages[i]))},
                  PgConn::Plan::kPrepared)
            .status());
  }
  return OkStatus();
}

Status PgStore::InsertCheckpoint(PgConn& conn, const std::string& run_id, int64_t step,
                                 int64_t message_count, const std::string& state) {
  return conn
      .Exec(
          kInsertCheckpoint,
          {PgParam::Text(run_id), PgParam::Int(step), PgParam::Int(message_count),
           PgParam::Bytes(state), PgParam::Int(CrcOf(state)), PgParam::Int(ToNanos(clock_.Now()))},
          PgConn::Plan::kPrepared)
      .status();
}

Status PgStore::Save(const Lease& lease, const Checkpoint& checkpoint, const RunUpdate& update) {
  std::function<Status()> body = SaveBody(lease, checkpoint, update);
  PgSaveWork work(lease, checkpoint, update);
  return writes_.Submit(body, &work);
}

std::function<Status()> PgStore::SaveBody(const Lease& lease, const Checkpoint& checkpoint,
                                          const RunUpdate& update) {
  return [this, &lease, &checkpoint, &update] {
    return Transact(TxKind::kWrite,
                    [&](PgConn& conn) { return SaveIn(conn, lease, checkpoint, update); });
  };
}

Status PgStore::SaveIn(PgConn& conn, const Lease& lease, const Checkpoint& checkpoint,
                       const RunUpdate& update) {
  // The row lock is held to COMMIT: no Claim can bump the epoch between the fence and the write.
  MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(conn, lease.run_id, RowLock::kUpdate));
  RunRecord& r = run.record;
  MEND_RETURN_IF_ERROR(CheckFence(r, lease));
  if (r.status == RunStatus::kCompleted) {
    return FailedPreconditionError("run " + Quote(r.id) + " is completed");
  }
  if (checkpoint.step != r.step + 1) {
    return FailedPreconditionError("run " + Quote(r.id) + " is at step " + std::to_string(r.step) +
                                   "; cannot save step " + std::to_string(checkpoint.step));
  }
  MEND_RETURN_IF_ERROR(ApplyUpdate(update, r));
  MEND_RETURN_IF_ERROR(InsertMessages(conn, r.id, run.message_count, checkpoint.new_messages));
  run.message_count += static_cast<int64_t>(checkpoint.new_messages.size());
  r.step = checkpoint.step;
  r.updated_at = clock_.Now();
  MEND_RETURN_IF_ERROR(InsertCheckpoint(conn, r.id, r.step, run.message_count, checkpoint.state));
  if (IsEmpty(update)) {
    MEND_RETURN_IF_ERROR(
        conn.Exec(kUpdateProgress,
                  {PgParam::Text(r.id), PgParam::Int(r.step), PgParam::Int(run.message_count),
                   PgParam::Int(ToNanos(r.updated_at))},
                  PgConn::Plan::kPrepared)
            .status());
  } else {
    MEND_RETURN_IF_ERROR(WriteRun(conn, run));
  }
  int64_t oldest_dropped = r.step - static_cast<int64_t>(options_.history_limit);
  return conn
      .Exec(kTrimHistory, {PgParam::Text(r.id), PgParam::Int(oldest_dropped)},
            PgConn::Plan::kPrepared)
      .status();
}

Status PgStore::LoadMessages(PgConn& conn, const std::string& run_id, int64_t count,
                             std::vector<std::string>& out) {
  MEND_ASSIGN_OR_RETURN(PgResult res,
                        conn.Exec(kSelectMessages, {PgParam::Text(run_id), PgParam::Int(count)}));
  out.reserve(static_cast<size_t>(count));
  for (int i = 0; i < res.rows(); ++i) {
    int64_t expected = static_cast<int64_t>(out.size());
    if (res.Int(i, 0) != expected) {
      return DataLossError("run " + Quote(run_id) + ": message " + std::to_string(expected) +
                           " is missing");
    }
    std::optional<std::string> body = IntactBytes(res, i, 1, 2);
    if (!body.has_value()) {
      return DataLossError("run " + Quote(run_id) + ": message " + std::to_string(expected) +
                           " is corrupt (checksum mismatch)");
    }
    out.push_back(std::move(*body));
  }
  if (static_cast<int64_t>(out.size()) != count) {
    return DataLossError("run " + Quote(run_id) + ": has " + std::to_string(out.size()) + " of " +
                         std::to_string(count) + " messages");
  }
  return OkStatus();
}

Result<RunSnapshot> PgStore::LoadIn(PgConn& conn, const std::string& run_id,
                                    std::optional<int64_t> step, RowLock lock) {
  MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(conn, run_id, lock));
  RunSnapshot snap;
  snap.step = step.value_or(run.record.step);
  if (snap.step < 0 || snap.step > run.record.step) {
    return NotFoundError("run " + Quote(run_id) + " has no step " + std::to_string(snap.step) +
                         " (newest: " + std::to_string(run.record.step) + ")");
  }
  MEND_ASSIGN_OR_RETURN(
      PgResult res, conn.Exec(kSelectCheckpoint, {PgParam::Text(run_id), PgParam::Int(snap.step)}));
  if (res.rows() == 0 && snap.step == 0) {
    snap.run = std::move(run.record);  // nothing saved yet: an empty conversation
    return snap;
  }
  if (res.rows() == 0) {
    return NotFoundError("step " + std::to_string(snap.step) + " of run " + Quote(run_id) +
                         " is older than the kept checkpoint history");
  }
  std::optional<int64_t> message_count = res.Int(0, 0);
  std::optional<std::string> state = IntactBytes(res, 0, 1, 2);
  if (!message_count.has_value() || !state.has_value()) {
    return DataLossError("run " + Quote(run_id) + ": checkpoint at step " +
                         std::to_string(snap.step) + " is corrupt (checksum mismatch)");
  }
  snap.state = std::move(*state);
  MEND_RETURN_IF_ERROR(LoadMessages(conn, run_id, *message_count, snap.messages));
  snap.run = std::move(run.record);
  return snap;
}

Result<RunSnapshot> PgStore::Load(const std::string& run_id, std::optional<int64_t> step) {
  std::optional<RunSnapshot> out;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kRead, [&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(out, LoadIn(conn, run_id, step, RowLock::kNone));
    return OkStatus();
  }));
  return std::move(*out);
}

Result<std::vector<CheckpointState>> PgStore::LatestStates(
    const std::vector<std::string>& run_ids) {
  std::vector<CheckpointState> out;
  if (run_ids.empty()) return out;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kRead, [&](PgConn& conn) -> Status {
    out.clear();
    MEND_ASSIGN_OR_RETURN(PgResult res,
                          conn.Exec(kSelectLatestStates, {PgParam::Text(PgTextArray(run_ids))}));
    std::map<std::string, CheckpointState> found;
    for (int i = 0; i < res.rows(); ++i) {
      const std::string id = res.Text(i, 0);
      std::optional<int64_t> step = res.Int(i, 1);
      std::optional<std::string> state = IntactBytes(res, i, 2, 3);
      if (!step.has_value() || !state.has_value()) {
        found[id] = {id, 0, "",
                     DataLossError("run " + Quote(id) +
                                   ": its newest checkpoint is corrupt (checksum mismatch)")};
      } else {
        found[id] = {id, *step, std::move(*state), OkStatus()};
      }
    }
    // The caller's order, each run once.
    for (const std::string& id : run_ids) {
      auto it = found.find(id);
      if (it == found.end()) continue;
      out.push_back(std::move(it->second));
      found.erase(it);
    }
    return OkStatus();
  }));
  return out;
}

Result<std::vector<CheckpointInfo>> PgStore::History(const std::string& run_id) {
  std::vector<CheckpointInfo> out;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kRead, [&](PgConn& conn) -> Status {
    out.clear();
    MEND_ASSIGN_OR_RETURN(bool exists, RunExists(conn, run_id));
    if (!exists) return NotFoundError("no run " + Quote(run_id));
    MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kSelectHistory, {PgParam::Text(run_id)}));
    for (int i = 0; i < res.rows(); ++i) {
      out.push_back(CheckpointInfo{res.Int(i, 0).value_or(0), res.Int(i, 1).value_or(0),
                                   FromNanos(res.Int(i, 2).value_or(0))});
    }
    return OkStatus();
  }));
  return out;
}

Result<RunRecord> PgStore::Fork(const std::string& run_id, int64_t step,
                                const std::string& new_id) {
  if (new_id.empty()) return InvalidArgumentError("a fork needs an id");
  std::optional<RunRecord> out;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kWrite, [&](PgConn& conn) -> Status {
    // FOR SHARE keeps the source's checkpoint ring still while it is copied.
    MEND_ASSIGN_OR_RETURN(RunSnapshot snap, LoadIn(conn, run_id, step, RowLock::kShare));
    StoredRun fork;
    RunRecord& f = fork.record;
    f.id = new_id;
    f.agent = snap.run.agent;
    f.agent_dir = snap.run.agent_dir;
    f.task = snap.run.task;
    f.metadata = snap.run.metadata;
    f.status = RunStatus::kRunning;
    f.step = step;
    f.parent_id = run_id;
    f.parent_step = step;
    f.created_at = f.updated_at = clock_.Now();
    fork.message_count = static_cast<int64_t>(snap.messages.size());
    MEND_RETURN_IF_ERROR(InsertRun(conn, fork));
    MEND_RETURN_IF_ERROR(InsertMessages(conn, new_id, 0, snap.messages));
    if (step > 0) {
      MEND_RETURN_IF_ERROR(InsertCheckpoint(conn, new_id, step, fork.message_count, snap.state));
    }
    out = std::move(f);
    return OkStatus();
  }));
  return std::move(*out);
}

}  // namespace mend::store::internal
