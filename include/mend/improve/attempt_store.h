#pragma once

// AttemptStore, the record of improve attempts and their proposals (docs/improve.md, "Proposals"):
// in the home's audit folders, or on PostgreSQL shared by every host, with each proposal decided
// once. Thread-safe.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/improve/proposal.h"

namespace mend::db {
class PgBudget;
}  // namespace mend::db

namespace mend::improve {

/// Where improve's attempts are listed and their proposals kept and decided (docs/improve.md,
/// "Proposals"; docs/operations.md for several hosts). An attempt's audit folder always stays on
/// the host that ran it, under `<home>/improve/<attempt-id>/`; the store says which attempts exist,
/// what became of them, where their folder is, and holds the proposals:
///   - the local store keeps everything in the audit folders (proposal.json), so the queue is the
///     set of folders of one home;
///   - the PostgreSQL store (OpenPostgresAttemptStore) keeps a row per attempt, with its
///     proposal, shared by every host on the database: a proposal made on one replica is listed,
///     shown, applied or rejected from any of them, and decided once.
/// Implementations are thread-safe.
class AttemptStore {
 public:
  virtual ~AttemptStore() = default;

  /// Records what an attempt of this home came to, read from its audit folder (ListAttempts'
  /// reading): called when an attempt ends. The local store has nothing to do. kNotFound when the
  /// folder does not exist.
  virtual Status RecordAttempt(std::string_view attempt_id) = 0;

  /// Stores a new proposal, or replaces a queued one's note (auto mode's refusal). The audit
  /// folder must exist in this home (kNotFound otherwise); kInvalidArgument for an invalid id.
  virtual Status PutProposal(const Proposal& proposal) = 0;

  /// kNotFound for an unknown attempt or one that made no proposal; kDataLoss for a stored
  /// proposal that does not parse.
  virtual Result<Proposal> GetProposal(std::string_view attempt_id) = 0;

  /// Every attempt, newest first (attempt ids sort by time). The PostgreSQL store lists the rows
  /// of every host, and with them the attempts of this home not recorded there yet (one that is
  /// still running, or made before the home moved to PostgreSQL).
  virtual Result<std::vector<AttemptSummary>> List() = 0;

  /// Decides a queued proposal: `decide` gets it and changes it, e.g. writes its files and sets
  /// the status and decided_at; it is stored only when `decide` returns OK. Deciders of one
  /// proposal run one at a time, across hosts on PostgreSQL, so a proposal is applied or rejected
  /// once: kFailedPrecondition ("already applied") for one that is not queued.
  virtual Result<Proposal> Decide(std::string_view attempt_id,
                                  const std::function<Status(Proposal&)>& decide) = 0;

  /// Where the attempt's audit folder is: this host's home (`here`), or another host's.
  struct Location {
    std::string host;       ///< "" when unknown (the local store)
    std::string audit_dir;  ///< absolute path on `host`
    bool here = false;      ///< the folder is readable in this home
  };
  /// kNotFound for an unknown attempt.
  virtual Result<Location> Locate(std::string_view attempt_id) = 0;
  /// What the store knows of an attempt without its audit folder (the PostgreSQL store's row):
  /// kNotFound for an unknown attempt.
  virtual Result<AttemptSummary> Summary(std::string_view attempt_id) = 0;
};

/// The attempts of `home` as its audit folders hold them. `fs` must outlive the store.
std::unique_ptr<AttemptStore> OpenLocalAttemptStore(FileSystem& fs, std::string home);

/// Where OpenPostgresAttemptStore keeps the attempts.
struct PostgresAttemptStoreOptions {
  /// A libpq connection URI, e.g. "postgres://mend@db.example/mend"; the password never appears
  /// in an error.
  std::string url;
  /// The schema of the tables (created when missing); empty: the connection's default.
  std::string schema;
  Duration connect_timeout = std::chrono::seconds(5);  ///< opening one connection
  int pool_size = 2;                                   ///< at least 1
  /// The connections this process may hold to the database, shared with its other pools
  /// (db::PgBudget, `postgres.max_connections`); null: only pool_size bounds this pool.
  std::shared_ptr<db::PgBudget> connections;
  /// This host's name and home: recorded with each attempt, so others know where its folder is.
  std::string host;
  std::string home;  ///< see host
};

/// The attempts of every host on one PostgreSQL database. `fs` reads this home's audit folders; it
/// must outlive the store. Errors: kInvalidArgument for a URL
/// libpq cannot parse, kUnavailable when the server cannot be reached, kFailedPrecondition when the
/// tables were written by a newer mend, kDataLoss for an unreadable schema version.
Result<std::unique_ptr<AttemptStore>> OpenPostgresAttemptStore(
    const PostgresAttemptStoreOptions& options, FileSystem& fs);

///@{
/// The schema version this build writes, and the one stored at `url` in `schema` (empty: the
/// connection's default; 0 when there is none), read without creating anything; for
/// `mend migrate`.
int64_t PostgresAttemptStoreSchemaVersion();
Result<int64_t> ReadPostgresAttemptStoreSchemaVersion(const std::string& url,
                                                      const std::string& schema = "");
///@}

///@{
/// Decisions through a store: as ApplyProposal and RejectProposal (proposal.h), with the proposal
/// read and stored by `store`, decided once. Applying writes this host's agent folder and keeps
/// the backup in this home's `improve/<id>/backup/` (created when the attempt ran elsewhere).
Result<Proposal> ApplyProposal(FileSystem& fs, Clock& clock, AttemptStore& store,
                               std::string_view home, std::string_view attempt_id);
Result<Proposal> RejectProposal(Clock& clock, AttemptStore& store, std::string_view attempt_id,
                                std::string reason);
///@}

}  // namespace mend::improve
