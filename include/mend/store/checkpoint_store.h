#pragma once

// CheckpointStore, the durable record of runs (docs/runs.md, docs/store_schema.md): runs,
// checkpoints, leases fenced by epochs, pages of runs, forks and pruning. Both implementations
// (sqlite_store.h, postgres_store.h) pass one conformance suite; they are thread-safe and safe
// across processes.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/store/prune.h"
#include "mend/store/recovery_page.h"
#include "mend/store/run_page.h"
#include "mend/store/run_record.h"

namespace mend::store {

/// Proof of holding a run. Every write that changes a run's progress carries it; the store accepts
/// the write only while `epoch` is the run's current epoch (fencing).
struct Lease {
  std::string run_id;  ///< the run held
  int64_t epoch = 0;   ///< the run's epoch when claimed
  LeaseHolder holder;  ///< who holds it
  Time expires_at;     ///< unless renewed
};

/// One checkpoint. The conversation of a run only grows, so a checkpoint stores the messages added
/// since the previous checkpoint plus the small run state; a 500-step run costs about its content.
/// Messages and state are opaque to the store (the agent layer serialises them as JSON).
struct Checkpoint {
  int64_t step = 0;                       ///< 1, 2, 3, ... : exactly the run's step + 1 when saved
  std::vector<std::string> new_messages;  ///< the messages added since the previous checkpoint
  std::string state;  ///< the run state after this step (usage, cost, pending calls, ...)
  Time created_at;    ///< when it was saved
};

/// What a run looked like at a checkpoint: the whole conversation up to it and its state.
struct RunSnapshot {
  RunRecord run;                      ///< the run's record
  int64_t step = 0;                   ///< the checkpoint
  std::vector<std::string> messages;  ///< the whole conversation up to it
  std::string state;                  ///< the run state at it
};

/// Changes to a run's record that go with a checkpoint or stand alone. Unset fields keep their
/// value.
struct RunUpdate {
  std::optional<RunStatus> status;                    ///< a new status (CheckRunTransition applies)
  std::optional<std::string> waiting;                 ///< what the run waits for
  std::optional<std::optional<RunError>> last_error;  ///< set to nullopt-inside to clear
  std::optional<int64_t> attempts;                    ///< recovery attempts
  std::optional<std::optional<Time>> next_attempt_at;  ///< nullopt-inside clears it
  std::optional<std::string> metadata;                 ///< replaces the whole object
};

/// One kept checkpoint, without its content (CheckpointStore::History).
struct CheckpointInfo {
  int64_t step = 0;           ///< the checkpoint
  int64_t message_count = 0;  ///< length of the conversation at this checkpoint
  Time created_at;            ///< when it was saved
};

/// The newest checkpoint of a run without its conversation (CheckpointStore::LatestStates).
struct CheckpointState {
  std::string run_id;  ///< the run
  int64_t step = 0;    ///< the checkpoint's step: the run's step
  std::string state;   ///< RunSnapshot::state at that checkpoint; empty when `status` is not OK
  Status status;       ///< kDataLoss naming the run when the stored state fails its checksum
};

/// Which runs CheckpointStore::ListRuns returns.
struct ListOptions {
  bool unfinished_only = true;  ///< every status but completed
  size_t limit = 0;             ///< 0: no limit
};

/// Durable runs, checkpoints and leases (docs/runs.md). Every implementation passes the conformance
/// suite in tests/store/. Implementations are thread-safe and safe across processes sharing the
/// same database.
///
/// Errors: kNotFound (no such run or step), kAlreadyExists (CreateRun of an existing id),
/// kAborted (stale epoch: the caller lost its lease — stop working on the run),
/// kUnavailable (the run is leased by a live holder), kFailedPrecondition (a transition the status
/// machine forbids, or a step that is not run.step + 1), kDataLoss (a corrupt row: affects that run
/// only), kInternal (the database failed).
class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;

  /// Stores a new run; kAlreadyExists when its id is taken.
  virtual Status CreateRun(const RunRecord& run) = 0;
  /// The run's record; kNotFound when there is none.
  virtual Result<RunRecord> GetRun(const std::string& run_id) = 0;
  /// Ordered by created_at, then id (oldest first; ids compare as bytes).
  virtual Result<std::vector<RunRecord>> ListRuns(const ListOptions& options) = 0;
  /// One page of runs of the query's scope (unfinished ones, or all), newest first, with the
  /// number of runs matching and of those not listed yet (run_page.h). Costs about the page plus
  /// counting the matching runs in an index, not reading them. kInvalidArgument for a query
  /// ValidatePendingQuery rejects.
  virtual Result<PendingPage> ListPending(const PendingQuery& query) = 0;
  /// One page of the runs a recovery pass acts on (recovery_page.h), oldest first, and with
  /// RecoveryCounting::kInclude the counts of every unfinished run by class, from one snapshot.
  /// kInvalidArgument for a query ValidateRecoveryQuery rejects. This default lists every
  /// unfinished run (ListRuns) and keeps the page (RecoveryPageOf); the SQL stores answer from an
  /// index instead, at about the cost of the page plus, for the counts, a walk of that index
  /// without reading a row. A store that forwards to another must forward this too.
  virtual Result<RecoveryPage> ListRecoveryCandidates(const RecoveryQuery& query);
  /// The state of the newest checkpoint of each run of `run_ids` (what Load(id).state gives,
  /// without reading the conversation), in the order of `run_ids`: what `mend runs` reads for a
  /// page. A run without a checkpoint yet and an unknown id are left out; a repeated id is listed
  /// once. A state that fails its checksum affects its run only: its entry carries kDataLoss.
  /// Other errors are the database's. This default calls GetRun and Load for each run; the SQL
  /// stores read the checkpoint rows alone, in one snapshot, so a page costs about the page. A
  /// store that forwards to another must forward this too.
  virtual Result<std::vector<CheckpointState>> LatestStates(
      const std::vector<std::string>& run_ids);
  /// Where the recovery loop's last pass stopped (docs/heal.md, "One pass"): the next pass, in
  /// this process or another one started later, goes on from there. nullopt: from the oldest run.
  /// The SQL stores keep it in `meta` (`recovery.cursor`); this default keeps nothing (always
  /// nullopt). A store that forwards to another must forward both.
  virtual Result<std::optional<RunCursor>> RecoveryCursor();
  /// Stores the position RecoveryCursor gives back; nullopt clears it. This default does nothing.
  virtual Status SetRecoveryCursor(const std::optional<RunCursor>& cursor);
  /// Removes the run, its checkpoints and messages. Refused (kUnavailable) while a live holder
  /// has the lease.
  virtual Status DeleteRun(const std::string& run_id) = 0;

  /// Claims the run: succeeds when nobody holds it, the lease expired, or the holder's process on
  /// this host is gone; bumps the epoch. kUnavailable when a live holder has it.
  virtual Result<Lease> Claim(const std::string& run_id, const LeaseHolder& holder,
                              Duration ttl) = 0;
  virtual Result<Lease> Renew(const Lease& lease, Duration ttl) = 0;  ///< kAborted if stale
  virtual Status Release(const Lease& lease) = 0;                     ///< kAborted if stale

  /// Appends a checkpoint and applies `update` atomically; durable when it returns OK. Keeps only
  /// the newest `history_limit` checkpoints (the messages they reference stay).
  virtual Status Save(const Lease& lease, const Checkpoint& checkpoint,
                      const RunUpdate& update) = 0;
  /// Applies `update` without a checkpoint (fenced like Save).
  virtual Status Update(const Lease& lease, const RunUpdate& update) = 0;
  /// Recovery bookkeeping that must work without holding the run (attempts, next attempt, status
  /// quarantined). Not fenced; never changes step or messages.
  virtual Status UpdateUnleased(const std::string& run_id, const RunUpdate& update) = 0;

  /// The run at checkpoint `step` (default: the newest). kNotFound when the step is older than the
  /// kept history.
  virtual Result<RunSnapshot> Load(const std::string& run_id,
                                   std::optional<int64_t> step = std::nullopt) = 0;
  /// The kept checkpoints of a run, oldest first.
  virtual Result<std::vector<CheckpointInfo>> History(const std::string& run_id) = 0;

  /// Creates run `new_id` whose conversation and state are those of `run_id` at `step`, with
  /// status running, no lease, parent_id/parent_step set, and a first checkpoint numbered `step`.
  virtual Result<RunRecord> Fork(const std::string& run_id, int64_t step,
                                 const std::string& new_id) = 0;

  /// Retention (prune.h): in one transaction, for every run OldEnoughToPrune(run, request.cutoff)
  /// accepts whose lease no live holder has, removes every checkpoint but the newest (kHistory:
  /// Load, the conversation and the final state stay as they were, and updated_at is not touched)
  /// or the whole run (kWholeRuns). Other runs, and corrupt rows, are left alone. kDryRun reports
  /// the same counts and changes nothing. After a prune that removed something a store may reclaim
  /// the space (the SQLite store does; docs/store_schema.md). Errors: the database's.
  virtual Result<PruneReport> Prune(const PruneRequest& request) = 0;
};

}  // namespace mend::store
