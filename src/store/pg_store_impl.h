#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mend/db/pg_conn.h"
#include "mend/store/checkpoint_store.h"
#include "mend/store/postgres_store.h"
#include "store/group_commit.h"
#include "store/pending_plan.h"
#include "store/pg_rows.h"

namespace mend::store::internal {

// One Save as the group commit carries it (PendingWrite::work); it refers to the caller's
// arguments.
struct PgSaveWork final : WriteWork {
  PgSaveWork(const Lease& l, const Checkpoint& c, const RunUpdate& u)
      : lease(l), checkpoint(c), update(u) {}
  const Lease& lease;
  const Checkpoint& checkpoint;
  const RunUpdate& update;
};

// What became of a batch's pipelined transaction (pg_save_batch.cc).
struct PgPipelineOutcome;

// The PostgreSQL CheckpointStore (docs/store_schema.md, "PostgreSQL"). Every operation but Save is
// one transaction on a pooled connection. Writes lock the run's row (SELECT ... FOR UPDATE) before
// checking the lease, so the check and the write are atomic towards every other writer, in this
// process or elsewhere. Saves go through the group commit `writes_` (pg_save_batch.cc): the common
// save is one statement whose UPDATE of the run row checks the fence and takes the row lock, the
// saves of a batch share one pipelined transaction, and up to two batches run at once on
// different connections. Reads use one REPEATABLE READ snapshot.
class PgStore final : public CheckpointStore {
 public:
  PgStore(const PostgresStoreOptions& options, Clock& clock);

  // Creates or checks the schema and the tables.
  Status Init();

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

  // A Save alone: SaveIn in a transaction of its own. For the group commit, which runs it for the
  // saves a batch cannot do in its pipeline; it refers to the arguments, which must outlive it.
  std::function<Status()> SaveBody(const Lease& lease, const Checkpoint& checkpoint,
                                   const RunUpdate& update);
  // Runs `batch`, whose writes carry a PgSaveWork, and sets every write's result
  // (pg_save_batch.cc).
  void RunBatch(std::span<PendingWrite* const> batch);
  // How many Saves wait for a batch; for tests.
  size_t QueuedSaves() { return writes_.Queued(); }

  struct WriteStats {
    int64_t writes = 0;        // saves handed to batches
    int64_t transactions = 0;  // pipelined transactions whose COMMIT was sent
    int64_t rollbacks = 0;     // of those, rolled back because a statement failed
    int64_t fallbacks = 0;     // saves run alone, in a transaction of their own (SaveBody)
  };
  WriteStats write_stats();

 private:
  enum class TxKind { kRead, kWrite };
  enum class RowLock { kNone, kShare, kUpdate };

  // Runs `body` in one transaction on a pooled connection: COMMIT when it returns OK, ROLLBACK
  // otherwise. A serialization failure or deadlock runs it again, a few times at most.
  Status Transact(TxKind kind, const std::function<Status(PgConn&)>& body);
  Status SetUpConnection(PgConn& conn);
  Status CreateOrCheckSchema(PgConn& conn);

  // The helpers below run inside Transact.
  Result<StoredRun> ReadRun(PgConn& conn, const std::string& run_id, RowLock lock);
  Result<bool> RunExists(PgConn& conn, const std::string& run_id);
  // kAlreadyExists when the id is taken.
  Status InsertRun(PgConn& conn, const StoredRun& run);
  Status WriteRun(PgConn& conn, const StoredRun& run);
  // kAborted unless `lease` carries the run's current epoch and has not expired.
  Status CheckFence(const RunRecord& run, const Lease& lease);
  // Whether the run's lease still excludes others: set, unexpired and its holder not gone.
  bool LeaseIsLive(const RunRecord& run);
  Status InsertMessages(PgConn& conn, const std::string& run_id, int64_t first_seq,
                        const std::vector<std::string>& messages);
  Status InsertCheckpoint(PgConn& conn, const std::string& run_id, int64_t step,
                          int64_t message_count, const std::string& state);
  Status SaveIn(PgConn& conn, const Lease& lease, const Checkpoint& checkpoint,
                const RunUpdate& update);
  // The runs matching `plan` at or after `from` (all of them when unset); see pending_plan.h.
  Result<int64_t> CountPending(PgConn& conn, const PendingPlan& plan,
                               const std::optional<RunCursor>& from);
  Result<RunSnapshot> LoadIn(PgConn& conn, const std::string& run_id, std::optional<int64_t> step,
                             RowLock lock);
  // Prunes one run Prune chose and adds what it removed (or would remove) to `report`.
  Status PruneRun(PgConn& conn, const std::string& run_id, const PruneRequest& request,
                  PruneReport& report);
  Status LoadMessages(PgConn& conn, const std::string& run_id, int64_t count,
                      std::vector<std::string>& out);

  // pg_save_batch.cc: the one-statement saves of `saves` in one pipelined transaction.
  PgPipelineOutcome RunPipeline(std::span<const PgSaveWork* const> saves);
  Result<PgPipelineOutcome> SendPipeline(PgConn& conn, std::span<const PgSaveWork* const> saves);

  PostgresStoreOptions options_;
  Clock& clock_;
  PgPool pool_;
  std::mutex stats_mu_;
  WriteStats stats_;  // guarded by stats_mu_
  GroupCommit writes_;
};

}  // namespace mend::store::internal
