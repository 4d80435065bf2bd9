#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mend/db/sqlite.h"
#include "mend/store/checkpoint_store.h"
#include "mend/store/sqlite_store.h"
#include "store/group_commit.h"
#include "store/pending_plan.h"
#include "store/sqlite_rows.h"
#include "store/wal_checkpointer.h"

namespace mend::store::internal {

// The SQLite CheckpointStore (docs/store_schema.md). One connection serialised by `mu_`. Reads are
// one transaction each; writes go through the group commit `writes_`, which runs the writes of a
// batch in one transaction and runs it again without a write that failed, so each is still atomic
// towards other threads and processes and fails alone. A thread of its own checkpoints the WAL.
class SqliteStore final : public CheckpointStore {
 public:
  SqliteStore(const SqliteStoreOptions& options, Clock& clock, std::unique_ptr<SqliteConn> db);

  // Applies the connection settings and creates or checks the schema.
  Status Init();
  // Hands the WAL's checkpoints to a thread with `conn`, its own connection to the file (see
  // SqliteStoreOptions::wal_checkpoint_pages).
  void StartCheckpointer(std::unique_ptr<SqliteConn> conn);
  // The checkpointer, or null when SQLite checkpoints inside commits; for tests.
  WalCheckpointer* checkpointer() { return checkpointer_.get(); }

  Status CreateRun(const RunRecord& run) override;
  Result<RunRecord> GetRun(const std::string& run_id) override;
  Result<std::vector<RunRecord>> ListRuns(const ListOptions& options) override;
  Result<PendingPage> ListPending(const PendingQuery& query) override;
  Result<RecoveryPage> ListRecoveryCandidates(const RecoveryQuery& query) override;
  Result<std::optional<RunCursor>> RecoveryCursor() override;
  Status SetRecoveryCursor(const std::optional<RunCursor>& cursor) override;
  Status DeleteRun(const std::string& run_id) override;
  Result<Lease> Claim(const std::string& run_id, const LeaseHolder& holder, Duration ttl) override;
  Result<Lease> Renew(const Lease& lease, Duration ttl) override;
  Status Release(const Lease& lease) override;
  Status Save(const Lease& lease, const Checkpoint& checkpoint, const RunUpdate& update) override;
  Status Update(const Lease& lease, const RunUpdate& update) override;
  Status UpdateUnleased(const std::string& run_id, const RunUpdate& update) override;
  Result<RunSnapshot> Load(const std::string& run_id, std::optional<int64_t> step) override;
  Result<std::vector<CheckpointState>> LatestStates(
      const std::vector<std::string>& run_ids) override;
  Result<std::vector<CheckpointInfo>> History(const std::string& run_id) override;
  Result<RunRecord> Fork(const std::string& run_id, int64_t step,
                         const std::string& new_id) override;
  Result<PruneReport> Prune(const PruneRequest& request) override;

  // The body of a Save, for running in a batch; it refers to the arguments, which must outlive it.
  std::function<Status()> SaveBody(const Lease& lease, const Checkpoint& checkpoint,
                                   const RunUpdate& update);
  // Runs `batch` in one write transaction, then COMMITs and sets every write's result: its own
  // error when its body failed (the batch then runs again without it, so the others' changes are
  // kept), the COMMIT's error when that failed, OK otherwise. Takes `mu_`.
  void RunBatch(std::span<PendingWrite* const> batch);

  struct WriteStats {
    int64_t transactions = 0;  // write transactions committed (or whose COMMIT failed)
    int64_t writes = 0;        // writes handed to them
    int64_t retries = 0;       // batches run again without a write that failed
    int64_t slow_saves = 0;    // saves whose one-statement fence did not hold (SaveLocked's path)
    int64_t inline_checkpoints = 0;  // WAL checkpoints run by a commit (FinishCheckpointIfDue)
  };
  WriteStats write_stats();

 private:
  // Creates the tables of a new database or brings an older schema to this version; inside the
  // write transaction of Init.
  Status CreateOrMigrateSchema();
  // Reads: runs `body` in one transaction while holding `mu_`. Writes: queues `body` for the
  // group commit and returns once the transaction containing it committed.
  Status Transact(SqliteConn::TxKind kind, const std::function<Status()>& body);

  // The helpers below run inside Transact.
  Result<StoredRun> ReadRun(const std::string& run_id);
  Result<bool> RunExists(const std::string& run_id);
  Status InsertRun(const StoredRun& run);
  Status WriteRun(const StoredRun& run);
  // kAborted unless `lease` carries the run's current epoch and has not expired.
  Status CheckFence(const RunRecord& run, const Lease& lease);
  // Whether the run's lease still excludes others: set, unexpired and its holder not gone.
  bool LeaseIsLive(const RunRecord& run);
  Status InsertMessages(const std::string& run_id, int64_t first_seq,
                        const std::vector<std::string>& messages);
  Status InsertCheckpoint(const std::string& run_id, int64_t step, int64_t message_count,
                          const std::string& state);
  // The runs matching `plan` at or after `from` (all of them when unset); see pending_plan.h.
  Result<int64_t> CountPending(const PendingPlan& plan, const std::optional<RunCursor>& from);
  // sqlite_recovery.cc: the runs of one page of recovery candidates, and the counts by class.
  Status ReadCandidates(const RecoveryQuery& query, RecoveryPage& page);
  Result<RecoveryCounts> CountForRecovery(const RecoveryQuery& query);
  Result<RunSnapshot> LoadLocked(const std::string& run_id, std::optional<int64_t> step);
  Status LoadMessages(const std::string& run_id, int64_t count, std::vector<std::string>& out);
  Status SaveLocked(const Lease& lease, const Checkpoint& checkpoint, const RunUpdate& update);
  // The common save (no RunUpdate): one UPDATE checks the fence and advances the run. False when
  // its conditions did not hold (nothing written); SaveLocked then says why.
  Result<bool> FastSave(const Lease& lease, const Checkpoint& checkpoint);
  // The lease columns (epoch, lease_*, updated_at) of `run`, written alone.
  Status WriteLease(const RunRecord& run);
  // After a COMMIT: checkpoints the WAL on this connection when the checkpointer left only a few
  // frames uncopied (finishing its work, so the WAL can start over) or fell far behind.
  void FinishCheckpointIfDue();
  // Prunes one run Prune chose and adds what it removed (or would remove) to `report`.
  Status PruneRun(const std::string& run_id, const PruneRequest& request, PruneReport& report);
  // Gives the database's free pages back to the file system (outside any transaction; takes mu_).
  Status ReclaimSpace();

  SqliteStoreOptions options_;
  Clock& clock_;
  std::mutex mu_;
  std::unique_ptr<SqliteConn> db_;  // guarded by mu_
  WriteStats stats_;                // guarded by mu_
  int64_t wal_pages_ = 0;           // the WAL's size after the newest commit; guarded by mu_
  int64_t next_checkpoint_at_ = 0;  // the WAL size that asks the checkpointer again; by mu_
  // Destroyed before db_, so that db_ is the file's last connection and, closing, removes the WAL.
  std::unique_ptr<WalCheckpointer> checkpointer_;
  GroupCommit writes_;
};

}  // namespace mend::store::internal
