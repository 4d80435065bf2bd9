#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mend/db/pg_conn.h"
#include "mend/store/checkpoint_store.h"
#include "mend/store/postgres_store.h"
#include "store/pending_plan.h"
#include "store/pg_rows.h"

namespace mend::store::internal {

// The PostgreSQL CheckpointStore (docs/store_schema.md, "PostgreSQL"). Every operation is one
// transaction on a pooled connection. Writes lock the run's row (SELECT ... FOR UPDATE) before
// checking the lease, so the check and the write are atomic towards every other writer, in this
// process or elsewhere. Reads use one REPEATABLE READ snapshot.
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

  PostgresStoreOptions options_;
  Clock& clock_;
  PgPool pool_;
};

}  // namespace mend::store::internal
