#pragma once

// CanaryStore, where canaries live (docs/improve.md, "Canary"): which proposal an agent is
// canarying with what share, every run's arm and outcome, and the decision, in the home's
// database (SQLite, mend.db) or on PostgreSQL shared by every replica, each canary decided once.
// Thread-safe.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/improve/canary.h"

namespace mend::db {
class PgBudget;
}  // namespace mend::db

namespace mend::improve {

/// Where a canary stands.
enum class CanaryState {
  kRunning,     ///< new runs of the agent split between the arms
  kPromoted,    ///< the proposal's files were written into the agent folder
  kRolledBack,  ///< the baseline stays; no new run takes the proposal
};
/// "running", "promoted", "rolled_back".
std::string_view CanaryStateName(CanaryState state);
/// kInvalidArgument for anything but the three names above.
Result<CanaryState> ParseCanaryState(std::string_view name);

/// One canary: a queued proposal tried on a share of an agent's live runs.
struct Canary {
  std::string proposal_id;   ///< the attempt that made the proposal (its id names the canary)
  std::string agent_dir;     ///< absolute: the agent folder the proposal edits
  double percent = 0;        ///< the share of new runs that take the proposal, in (0, 100]
  bool auto_decide = false;  ///< --auto: the canary promotes or rolls back on its own
  CanaryRule rule;           ///< the rule's settings when it started (decisions recompute with it)
  CanaryState state = CanaryState::kRunning;  ///< where it stands
  std::string started_at;                     ///< RFC 3339 UTC
  std::string decided_at;                     ///< empty while running
  /// The decision's verdict ("promote", "roll_back", "roll_back_unproven") or "promote_manual",
  /// "roll_back_manual" for `mend improve promote` / `rollback` against the rule; empty while
  /// running.
  std::string verdict;
  std::string reason;  ///< one sentence: why it was decided; empty while running
  /// Field by field (the rule's too; CanaryRule has no operator== of its own).
  friend bool operator==(const Canary&, const Canary&);
};

/// The arm names a run records: "baseline", or the proposal id.
inline constexpr std::string_view kBaselineArm = "baseline";

/// What one run of a canaried agent came to, as it counts for its arm.
struct CanaryRunOutcome {
  std::string proposal_id;  ///< the canary
  std::string run_id;       ///< the run
  /// kBaselineArm or the proposal id.
  std::string arm;
  ArmRun run;               ///< status, error code, whether its checks passed, cost, steps, tokens
  std::string recorded_at;  ///< RFC 3339 UTC, set by the store
  /// Field by field.
  friend bool operator==(const CanaryRunOutcome&, const CanaryRunOutcome&) = default;
};

/// Where canaries are kept. Implementations are thread-safe, and safe across processes of one
/// home (SQLite) or hosts of one database (PostgreSQL).
class CanaryStore {
 public:
  virtual ~CanaryStore() = default;

  /// Records a new running canary, started now (the store's clock sets started_at; the state,
  /// decided_at, verdict and reason given are not read). kAlreadyExists when the agent folder
  /// already has a running canary (naming its proposal) or this proposal was canaried before;
  /// kInvalidArgument for an empty id or folder, a percent outside (0, 100], or a rule
  /// ValidateCanaryRule refuses.
  virtual Status Start(const Canary& canary) = 0;

  /// kNotFound ("no canary for proposal X") for an unknown proposal.
  virtual Result<Canary> Get(std::string_view proposal_id) = 0;

  /// The running canary of `agent_dir`, std::nullopt when it has none.
  virtual Result<std::optional<Canary>> Running(std::string_view agent_dir) = 0;

  /// Every canary, newest start first.
  virtual Result<std::vector<Canary>> List() = 0;

  /// Records (or replaces: a run that failed and was resumed ends again) the outcome of one run,
  /// keyed by run id. kNotFound for an unknown canary; kFailedPrecondition when the canary is not
  /// running (outcomes after the decision are not counted); kInvalidArgument for an empty run id or
  /// an arm that is neither kBaselineArm nor the proposal id.
  virtual Status RecordOutcome(const CanaryRunOutcome& outcome) = 0;

  /// Every outcome recorded for the canary, in run id order. kNotFound for an unknown canary.
  virtual Result<std::vector<CanaryRunOutcome>> Outcomes(std::string_view proposal_id) = 0;

  /// Decides a running canary once: `decide` gets the canary and the outcomes recorded so far and
  /// changes the canary (state, decided_at, verdict, reason; e.g. after writing the proposal's
  /// files); the change is stored only when `decide` returns OK. Deciders of one canary run one
  /// at a time, across processes and hosts, and no outcome is recorded while one runs:
  /// kFailedPrecondition ("canary X was already promoted") for a canary that is not running.
  /// `decide` may return kFailedPrecondition itself to leave the canary running (e.g. the rule says
  /// continue); its error is returned and nothing is stored. Of the canary only state, decided_at
  /// (the store's clock when left empty), verdict and reason are stored; kInvalidArgument when
  /// `decide` returns OK but leaves the state running. `decide` must not call this store.
  virtual Result<Canary> Decide(
      std::string_view proposal_id,
      const std::function<Status(Canary&, const std::vector<CanaryRunOutcome>&)>& decide) = 0;
};

/// Canaries in the SQLite database at `path` (`<home>/mend.db`; created 0600 when missing), in
/// tables of their own beside the run store's.
Result<std::unique_ptr<CanaryStore>> OpenSqliteCanaryStore(const std::string& path, Clock& clock);

/// Where OpenPostgresCanaryStore keeps canaries.
struct PostgresCanaryStoreOptions {
  /// A libpq connection URI; the password never appears in an error.
  std::string url;
  /// The schema of the tables (created when missing); empty: the connection's default.
  std::string schema;
  Duration connect_timeout = std::chrono::seconds(5);  ///< opening one connection
  int pool_size = 2;                                   ///< at least 1
  /// The connections this process may hold to the database, shared with its other pools
  /// (db::PgBudget); null: only pool_size bounds this pool.
  std::shared_ptr<db::PgBudget> connections;
};

/// Canaries of every replica on one PostgreSQL database. Errors: kInvalidArgument for a URL libpq
/// cannot parse, kUnavailable when the server cannot be reached, kFailedPrecondition when the
/// tables were written by a newer mend.
Result<std::unique_ptr<CanaryStore>> OpenPostgresCanaryStore(
    const PostgresCanaryStoreOptions& options, Clock& clock);

///@{
/// The schema version of the canaries' tables this build writes (the same on SQLite, key
/// `canary.schema_version` of mend.db's `meta`, and on PostgreSQL), and the one stored in the
/// SQLite file `path` or at `url` in `schema` (empty: the connection's default), 0 when there is
/// none, read without creating anything; for `mend migrate` and `mend version --verbose`.
int64_t CanaryStoreSchemaVersion();
Result<int64_t> ReadSqliteCanaryStoreSchemaVersion(const std::string& path);
Result<int64_t> ReadPostgresCanaryStoreSchemaVersion(const std::string& url,
                                                     const std::string& schema = "");
///@}

/// Each arm's outcomes summed from the recorded runs with CountRun: `baseline` from arm
/// kBaselineArm, `proposal` from the rest. Both are overwritten, not added to.
void SumOutcomes(const std::vector<CanaryRunOutcome>& outcomes, ArmOutcomes& baseline,
                 ArmOutcomes& proposal);

}  // namespace mend::improve
