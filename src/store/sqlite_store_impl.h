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

namespace mend::store::internal {

// The SQLite CheckpointStore (docs/store_schema.md). One connection serialised by `mu_`. Reads are
// one transaction each; writes go through the group commit `writes_`, which runs every write in
// its own savepoint inside a shared transaction, so each is still atomic towards other threads
// and processes and fails alone.
class SqliteStore final : public CheckpointStore {
 public:
  SqliteStore(const SqliteStoreOptions& options, Clock& clock, std::unique_ptr<SqliteConn> db);

  // Applies the connection settings and creates or checks the schema.
  Status Init();

  Status CreateRun(const RunRecord& run) override;
  Result<RunRecord> GetRun(const std::string& run_id) override;
  Result<std::vector<RunRecord>> ListRuns(const ListOptions& options) override;
  Result<PendingPage> ListPending(const PendingQuery& query) override;
  Result<RecoveryPage> ListRecoveryCandidates(const RecoveryQuery& query) override;
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
  // Runs `batch` in one write transaction, each write in its own savepoint, then COMMITs and sets
  // every write's result: its own error when its body failed (its changes are rolled back, the
  // others' kept), the COMMIT's error when that failed, OK otherwise. Takes `mu_`.
  void RunBatch(std::span<PendingWrite* const> batch);

  struct WriteStats {
    int64_t transactions = 0;  // write transactions committed (or whose COMMIT failed)
    int64_t writes = 0;        // writes handed to them
    int64_t retries = 0;       // batches run again without a write that failed
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
  // Prunes one run Prune chose and adds what it removed (or would remove) to `report`.
  Status PruneRun(const std::string& run_id, const PruneRequest& request, PruneReport& report);
  // Gives the database's free pages back to the file system (outside any transaction; takes mu_).
  Status ReclaimSpace();

  SqliteStoreOptions options_;
  Clock& clock_;
  std::mutex mu_;
  std::unique_ptr<SqliteConn> db_;  // guarded by mu_
  WriteStats stats_;                // guarded by mu_
  GroupCommit writes_;
};

}  // namespace mend::store::internal
