// The checkpoint half of the SQLite store: Save, Load, LatestStates, History and Fork.

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/hash.h"
#include "store/lease_rules.h"
#include "store/sqlite_store_impl.h"

namespace mend::store::internal {
namespace {

constexpr char kInsertMessage[] =
    "INSERT INTO messages (run_id, seq, body, crc) VALUES (?1, ?2, ?3, ?4)";
constexpr char kInsertCheckpoint[] =
    "INSERT INTO checkpoints (run_id, step, message_count, state, crc, created_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
// The common Save changes only the progress columns; touching nothing indexed keeps it cheap.
constexpr char kUpdateProgress[] =
    "UPDATE runs SET step = ?2, message_count = ?3, updated_at = ?4 WHERE id = ?1";
constexpr char kTrimHistory[] = "DELETE FROM checkpoints WHERE run_id = ?1 AND step <= ?2";
// The fence of a Save without a RunUpdate and the run's progress in one statement: it changes the
// row only when CheckFence and SaveLocked's checks would pass (the lease's epoch, a lease that is
// held and unexpired at ?6, a run not completed, the next step), and then returns the run's new
// message count. When it changes nothing, SaveLocked reads the row and says why.
constexpr char kAdvanceRun[] =
    "UPDATE runs SET step = ?2, message_count = message_count + ?3, updated_at = ?4 "
    "WHERE id = ?1 AND epoch = ?5 AND lease_id IS NOT NULL AND lease_expires_at > ?4 "
    "AND status <> 'completed' AND step = ?2 - 1 RETURNING message_count";
constexpr char kSelectCheckpoint[] =
    "SELECT message_count, state, crc FROM checkpoints WHERE run_id = ?1 AND step = ?2";
constexpr char kSelectMessages[] =
    "SELECT seq, body, crc FROM messages WHERE run_id = ?1 AND seq < ?2 ORDER BY seq";
// The newest checkpoint of one run: the row at the run's step, found through both primary keys.
constexpr char kSelectLatestState[] =
    "SELECT c.step, c.state, c.crc FROM runs r JOIN checkpoints c "
    "ON c.run_id = r.id AND c.step = r.step WHERE r.id = ?1";
constexpr char kSelectHistory[] =
    "SELECT step, message_count, created_at FROM checkpoints WHERE run_id = ?1 ORDER BY step";

int64_t CrcOf(std::string_view bytes) { return static_cast<int64_t>(Crc32(bytes)); }

bool BlobIntact(const SqliteStmt& stmt, int blob_col, int crc_col) {
  return stmt.ColumnType(blob_col) == SQLITE_BLOB && stmt.ColumnType(crc_col) == SQLITE_INTEGER &&
         CrcOf(stmt.Blob(blob_col)) == stmt.Int(crc_col);
}

}  // namespace

Status SqliteStore::InsertMessages(const std::string& run_id, int64_t first_seq,
                                   const std::vector<std::string>& messages) {
  for (size_t i = 0; i < messages.size(); ++i) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kInsertMessage));
    stmt.BindText(1, run_id).Bind(2, first_seq + static_cast<int64_t>(i));
    stmt.BindBlob(3, messages[i]).Bind(4, CrcOf(messages[i]));
    MEND_RETURN_IF_ERROR(stmt.Run());
  }
  return OkStatus();
}

Status SqliteStore::InsertCheckpoint(const std::string& run_id, int64_t step, int64_t message_count,
                                     const std::string& state) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kInsertCheckpoint));
  stmt.BindText(1, run_id).Bind(2, step).Bind(3, message_count);
  stmt.BindBlob(4, state).Bind(5, CrcOf(state)).Bind(6, ToNanos(clock_.Now()));
  return stmt.Run();
}

Status SqliteStore::Save(const Lease& lease, const Checkpoint& checkpoint,
                         const RunUpdate& update) {
  return Transact(SqliteConn::TxKind::kWrite, SaveBody(lease, checkpoint, update));
}

std::function<Status()> SqliteStore::SaveBody(const Lease& lease, const Checkpoint& checkpoint,
                                              const RunUpdate& update) {
  return [this, &lease, &checkpoint, &update]() -> Status {
    if (IsEmpty(update)) {
      MEND_ASSIGN_OR_RETURN(bool saved, FastSave(lease, checkpoint));
      if (saved) return OkStatus();
      stats_.slow_saves += 1;
    }
    return SaveLocked(lease, checkpoint, update);
  };
}

Result<bool> SqliteStore::FastSave(const Lease& lease, const Checkpoint& checkpoint) {
  const int64_t added = static_cast<int64_t>(checkpoint.new_messages.size());
  const Time now = clock_.Now();
  int64_t message_count = 0;
  {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kAdvanceRun));
    stmt.BindText(1, lease.run_id).Bind(2, checkpoint.step).Bind(3, added);
    stmt.Bind(4, ToNanos(now)).Bind(5, lease.epoch);
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return false;
    message_count = stmt.Int(0);
    // Stepped to the end, so the UPDATE is complete before the next statement runs.
    MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
    if (more) return InternalError("run " + Quote(lease.run_id) + " is stored twice");
  }
  MEND_RETURN_IF_ERROR(
      InsertMessages(lease.run_id, message_count - added, checkpoint.new_messages));
  MEND_RETURN_IF_ERROR(
      InsertCheckpoint(lease.run_id, checkpoint.step, message_count, checkpoint.state));
  const int64_t oldest_dropped = checkpoint.step - options_.history_limit;
  if (oldest_dropped < 1) return true;  // the history is not full yet: nothing to trim
  MEND_ASSIGN_OR_RETURN(SqliteStmt trim, db_->Prepare(kTrimHistory));
  MEND_RETURN_IF_ERROR(trim.BindText(1, lease.run_id).Bind(2, oldest_dropped).Run());
  return true;
}

Status SqliteStore::SaveLocked(const Lease& lease, const Checkpoint& checkpoint,
                               const RunUpdate& update) {
  MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(lease.run_id));
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
  MEND_RETURN_IF_ERROR(InsertMessages(r.id, run.message_count, checkpoint.new_messages));
  run.message_count += static_cast<int64_t>(checkpoint.new_messages.size());
  r.step = checkpoint.step;
  r.updated_at = clock_.Now();
  MEND_RETURN_IF_ERROR(InsertCheckpoint(r.id, r.step, run.message_count, checkpoint.state));
  if (IsEmpty(update)) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kUpdateProgress));
    stmt.BindText(1, r.id).Bind(2, r.step).Bind(3, run.message_count);
    MEND_RETURN_IF_ERROR(stmt.Bind(4, ToNanos(r.updated_at)).Run());
  } else {
    MEND_RETURN_IF_ERROR(WriteRun(run));
  }
  MEND_ASSIGN_OR_RETURN(SqliteStmt trim, db_->Prepare(kTrimHistory));
  return trim.BindText(1, r.id).Bind(2, r.step - options_.history_limit).Run();
}

Status SqliteStore::LoadMessages(const std::string& run_id, int64_t count,
                                 std::vector<std::string>& out) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSelectMessages));
  stmt.BindText(1, run_id).Bind(2, count);
  out.reserve(static_cast<size_t>(count));
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    int64_t expected = static_cast<int64_t>(out.size());
    if (stmt.ColumnType(0) != SQLITE_INTEGER || stmt.Int(0) != expected) {
      return DataLossError("run " + Quote(run_id) + ": message " + std::to_string(expected) +
                           " is missing");
    }
    if (!BlobIntact(stmt, 1, 2)) {
      return DataLossError("run " + Quote(run_id) + ": message " + std::to_string(expected) +
                           " is corrupt (checksum mismatch)");
    }
    out.push_back(stmt.Blob(1));
  }
  if (static_cast<int64_t>(out.size()) != count) {
    return DataLossError("run " + Quote(run_id) + ": has " + std::to_string(out.size()) + " of " +
                         std::to_string(count) + " messages");
  }
  return OkStatus();
}

Result<RunSnapshot> SqliteStore::LoadLocked(const std::string& run_id,
                                            std::optional<int64_t> step) {
  MEND_ASSIGN_OR_RETURN(StoredRun run, ReadRun(run_id));
  RunSnapshot snap;
  snap.step = step.value_or(run.record.step);
  if (snap.step < 0 || snap.step > run.record.step) {
    return NotFoundError("run " + Quote(run_id) + " has no step " + std::to_string(snap.step) +
                         " (newest: " + std::to_string(run.record.step) + ")");
  }
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSelectCheckpoint));
  stmt.BindText(1, run_id).Bind(2, snap.step);
  MEND_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found && snap.step == 0) {
    snap.run = std::move(run.record);  // nothing saved yet: an empty conversation
    return snap;
  }
  if (!found) {
    return NotFoundError("step " + std::to_string(snap.step) + " of run " + Quote(run_id) +
                         " is older than the kept checkpoint history");
  }
  if (stmt.ColumnType(0) != SQLITE_INTEGER || !BlobIntact(stmt, 1, 2)) {
    return DataLossError("run " + Quote(run_id) + ": checkpoint at step " +
                         std::to_string(snap.step) + " is corrupt (checksum mismatch)");
  }
  int64_t message_count = stmt.Int(0);
  snap.state = stmt.Blob(1);
  MEND_RETURN_IF_ERROR(LoadMessages(run_id, message_count, snap.messages));
  snap.run = std::move(run.record);
  return snap;
}

Result<RunSnapshot> SqliteStore::Load(const std::string& run_id, std::optional<int64_t> step) {
  std::optional<RunSnapshot> out;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kRead, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(out, LoadLocked(run_id, step));
    return OkStatus();
  }));
  return std::move(*out);
}

Result<std::vector<CheckpointState>> SqliteStore::LatestStates(
    const std::vector<std::string>& run_ids) {
  std::vector<CheckpointState> out;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kRead, [&]() -> Status {
    out.clear();
    std::set<std::string> seen;
    for (const std::string& id : run_ids) {
      if (!seen.insert(id).second) continue;
      MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSelectLatestState));
      stmt.BindText(1, id);
      MEND_ASSIGN_OR_RETURN(bool found, stmt.Step());
      if (!found) continue;  // no checkpoint yet, or no such run
      if (stmt.ColumnType(0) != SQLITE_INTEGER || !BlobIntact(stmt, 1, 2)) {
        out.push_back({id, 0, "",
                       DataLossError("run " + Quote(id) +
                                     ": its newest checkpoint is corrupt (checksum mismatch)")});
        continue;
      }
      out.push_back({id, stmt.Int(0), stmt.Blob(1), OkStatus()});
    }
    return OkStatus();
  }));
  return out;
}

Result<std::vector<CheckpointInfo>> SqliteStore::History(const std::string& run_id) {
  std::vector<CheckpointInfo> out;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kRead, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(bool exists, RunExists(run_id));
    if (!exists) return NotFoundError("no run " + Quote(run_id));
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSelectHistory));
    stmt.BindText(1, run_id);
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) return OkStatus();
      out.push_back(CheckpointInfo{stmt.Int(0), stmt.Int(1), FromNanos(stmt.Int(2))});
    }
  }));
  return out;
}

Result<RunRecord> SqliteStore::Fork(const std::string& run_id, int64_t step,
                                    const std::string& new_id) {
  if (new_id.empty()) return InvalidArgumentError("a fork needs an id");
  std::optional<RunRecord> out;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kWrite, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(RunSnapshot snap, LoadLocked(run_id, step));
    MEND_ASSIGN_OR_RETURN(bool exists, RunExists(new_id));
    if (exists) return AlreadyExistsError("run " + Quote(new_id) + " already exists");
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
    MEND_RETURN_IF_ERROR(InsertRun(fork));
    MEND_RETURN_IF_ERROR(InsertMessages(new_id, 0, snap.messages));
    if (step > 0) {
      MEND_RETURN_IF_ERROR(InsertCheckpoint(new_id, step, fork.message_count, snap.state));
    }
    out = std::move(f);
    return OkStatus();
  }));
  return std::move(*out);
}

}  // namespace mend::store::internal
