#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "mend/store/checkpoint_store.h"
#include "mend/store/sqlite_store.h"
#include "store/sqlite_db.h"
#include "store/sqlite_rows.h"

namespace mend::store::internal {

// The SQLite CheckpointStore (docs/store_schema.md). One connection serialised by `mu_`; every
// public method is one transaction, so it is atomic towards other threads and processes.
class SqliteStore final : public CheckpointStore {
 public:
  SqliteStore(const SqliteStoreOptions& options, Clock& clock, std::unique_ptr<SqliteDb> db);

  // Applies the connection settings and creates or checks the schema.
  Status Init();

  Status CreateRun(const RunRecord& run) override;
  Result<RunRecord> GetRun(const std::string& run_id) override;
  Result<std::vector<RunRecord>> ListRuns(const ListOptions& options) override;
  Status DeleteRun(const std::string& run_id) override;
  Result<Lease> Claim(const std::string& run_id, const LeaseHolder& holder, Duration ttl) override;
  Result<Lease> Renew(const Lease& lease, Duration ttl) override;
  Status Release(const Lease& lease) override;
  Status Save(const Lease& lease, const Checkpoint& checkpoint, const RunUpdate& update) override;
  Status Update(const Lease& lease, const RunUpdate& update) override;
  Status UpdateUnleased(const std::string& run_id, const RunUpdate& update) override;
  Result<RunSnapshot> Load(const std::string& run_id, std::optional<int64_t> step) override;
  Result<std::vector<CheckpointInfo>> History(const std::string& run_id) override;
  Result<RunRecord> Fork(const std::string& run_id, int64_t step,
                         const std::string& new_id) override;

 private:
  // Runs `body` in one transaction while holding `mu_`.
  Status Transact(SqliteDb::TxKind kind, const std::function<Status()>& body);

  // The helpers below run inside Transact.
  Result<StoredRun> ReadRun(const std::string& run_id);
  Result<bool> RunExists(const std::string& run_id);
  Status InsertRun(const StoredRun& run);
  Status WriteRun(const StoredRun& run);
  // kAborted unless `lease` carries the run's current epoch and has not expired.
  Status CheckFence(const RunRecord& run, const Lease& lease);
  // Whether the run's lease still excludes others: set, unexpired and its holder not gone.
  bool LeaseIsLive(const RunRecord& run);
  bool HolderGone(const LeaseHolder& holder);
  Status InsertMessages(const std::string& run_id, int64_t first_seq,
                        const std::vector<std::string>& messages);
  Status InsertCheckpoint(const std::string& run_id, int64_t step, int64_t message_count,
                          const std::string& state);
  Result<RunSnapshot> LoadLocked(const std::string& run_id, std::optional<int64_t> step);
  Status LoadMessages(const std::string& run_id, int64_t count, std::vector<std::string>& out);
  Status SaveLocked(const Lease& lease, const Checkpoint& checkpoint, const RunUpdate& update);

  SqliteStoreOptions options_;
  Clock& clock_;
  std::mutex mu_;
  std::unique_ptr<SqliteDb> db_;  // guarded by mu_
};

}  // namespace mend::store::internal
