#pragma once

// Schema versions and migrations (`mend migrate`; docs/operations.md, "Upgrading mend"):
// ConfiguredSchemaStores lists the stores a configuration uses; MigrateStores reads their versions
// and migrates them.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mend/base/config.h"
#include "mend/base/env.h"
#include "mend/base/result.h"

namespace mend::app {

/// One store with a schema of its own, as migrate sees it.
struct SchemaStore {
  std::string name;      ///< "runs", "memory", "lessons", "improve", "traces"
  std::string backend;   ///< "sqlite" or "postgres"
  std::string location;  ///< a file path, or a PostgreSQL URL with its password masked
  int64_t version = 0;   ///< the schema version this build writes
  /// The version stored now, read without creating or changing anything; 0 when the store does not
  /// exist yet.
  std::function<Result<int64_t>()> read_version;
  /// Opens the store, which creates it or migrates its schema to `version`, and closes it again.
  std::function<Status()> open;
};

/// The stores `config` uses, in the order migrate reports them: the runs (store.url), long-term
/// memory (in mend.db, or on PostgreSQL when store.url is postgres:// and memory.local is false),
/// the lesson queue's and improve's tables on PostgreSQL when they are there, and the traces
/// (observe.db, when observe.enabled is true or the file exists). A store with a schema of its own
/// is added here and nowhere else. `env.fs` and `env.clock` must outlive the
/// returned functions. kInvalidArgument when store.url is neither empty nor a postgres:// URL.
Result<std::vector<SchemaStore>> ConfiguredSchemaStores(const Config& config, const Env& env);

/// Whether MigrateStores changes anything.
enum class MigrateMode { kApply, kDryRun };

/// What migrate found and did for one store.
struct StoreMigration {
  std::string store;     ///< which store: "runs", "memory", ...
  std::string backend;   ///< "sqlite" or "postgres"
  std::string location;  ///< its file, or its URL with the password masked
  /// The version before; 0 when the store did not exist; nullopt when it could not be read.
  std::optional<int64_t> from;
  /// The version after (with kDryRun: what it would be); nullopt when unknown.
  std::optional<int64_t> to;
  /// Why this store stopped migrate (unreadable, newer than this build, failed to migrate).
  Status status;

  /// Whether the version changed (or, with kDryRun, would change).
  bool migrated() const { return from.has_value() && to.has_value() && *from != *to; }
};

/// What MigrateStores found and did.
struct MigrateReport {
  std::vector<StoreMigration> stores;  ///< one per store, in the order given
  Status status;                       ///< the first store's error, or OK
};

/// Brings every store of `stores` to its version. First it reads every version; when one cannot be
/// read or is newer than this build (kFailedPrecondition: "... written by a newer mend ...; upgrade
/// mend"), nothing is migrated and every store is reported as found. Otherwise it opens, one after
/// the other, each store below its version (stores at their version are not opened, so a second
/// run changes nothing) and reads the version again; a failure stops there, the stores before it
/// staying migrated. kDryRun reads the versions only and reports what kApply would do.
MigrateReport MigrateStores(const std::vector<SchemaStore>& stores, MigrateMode mode);

}  // namespace mend::app
