// mend migrate: every store's schema version is read first, and only when all of them can be
// brought to this build's versions is any store opened (which migrates it). Stopping before any
// change when one store is newer keeps a home from ending up half on the new schemas while an
// older mend still runs against it.
#include "mend/app/migrate.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "mend/base/home_layout.h"
#include "mend/improve/attempt_store.h"
#include "mend/lessonq/postgres_queue.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/postgres_fact_store.h"
#include "mend/memory/schema_version.h"
#include "mend/obs/span_store.h"
#include "mend/store/postgres_store.h"
#include "mend/store/schema_version.h"
#include "mend/store/sqlite_store.h"

namespace mend::app {
namespace {

// Opening a store migrates it; closing it right away leaves only the schema behind.
template <typename T>
Status OpenAndClose(Result<std::unique_ptr<T>> opened) {
  return opened.status();
}

SchemaStore SqliteRuns(const std::string& home, const Env& env) {
  const std::string path = home::DatabaseFile(home);
  return {"runs",
          "sqlite",
          path,
          store::kSqliteStoreSchemaVersion,
          [path] { return store::ReadSqliteStoreSchemaVersion(path); },
          [path, home, env]() -> Status {
            MEND_RETURN_IF_ERROR(env.fs->CreateDirs(home));
            store::SqliteStoreOptions options;
            options.path = path;
            return OpenAndClose(store::OpenSqliteStore(options, *env.clock));
          }};
}

SchemaStore PostgresRuns(const std::string& url, const Env& env) {
  return {"runs",
          "postgres",
          store::MaskPostgresUrl(url),
          store::kPostgresStoreSchemaVersion,
          [url] { return store::ReadPostgresStoreSchemaVersion(url); },
          [url, env] {
            store::PostgresStoreOptions options;
            options.url = url;
            options.pool_size = 1;
            return OpenAndClose(store::OpenPostgresStore(options, *env.clock));
          }};
}

SchemaStore SqliteMemory(const std::string& home, const Env& env) {
  const std::string path = home::DatabaseFile(home);
  return {"memory",
          "sqlite",
          path,
          memory::SqliteMemorySchemaVersion(),
          [path] { return memory::ReadSqliteMemorySchemaVersion(path); },
          [path, home, env]() -> Status {
            MEND_RETURN_IF_ERROR(env.fs->CreateDirs(home));
            memory::FactStoreOptions options;
            options.clock = env.clock;
            return OpenAndClose(memory::FactStore::Open(path, options));
          }};
}

SchemaStore PostgresMemory(const std::string& url, const Env& env) {
  return {"memory",
          "postgres",
          store::MaskPostgresUrl(url),
          memory::PostgresMemorySchemaVersion(),
          [url] { return memory::ReadPostgresMemorySchemaVersion(url); },
          [url, env] {
            memory::PostgresFactStoreOptions options;
            options.url = url;
            options.pool_size = 1;
            return OpenAndClose(memory::OpenPostgresFactStore(options, *env.clock));
          }};
}

SchemaStore PostgresLessons(const std::string& url, const std::string& home, const Env& env) {
  return {"lessons",
          "postgres",
          store::MaskPostgresUrl(url),
          lessonq::PostgresLessonQueueSchemaVersion(),
          [url] { return lessonq::ReadPostgresLessonQueueSchemaVersion(url); },
          [url, home, env] {
            lessonq::QueueOptions options;
            options.base_dir = home::LessonQueueDir(home);  // not used by this backend
            lessonq::PgQueueOptions pg;
            pg.url = url;
            pg.pool_size = 1;
            return OpenAndClose(lessonq::OpenPostgresLessonQueue(env, options, pg, nullptr));
          }};
}

SchemaStore PostgresImprove(const std::string& url, const std::string& home, const Env& env) {
  return {"improve",
          "postgres",
          store::MaskPostgresUrl(url),
          improve::PostgresAttemptStoreSchemaVersion(),
          [url] { return improve::ReadPostgresAttemptStoreSchemaVersion(url); },
          [url, home, env] {
            improve::PostgresAttemptStoreOptions options;
            options.url = url;
            options.home = home;
            options.pool_size = 1;
            return OpenAndClose(improve::OpenPostgresAttemptStore(options, *env.fs));
          }};
}

SchemaStore Traces(const std::string& home) {
  const std::string path = home::ObserveFile(home);
  return {"traces", "sqlite", path, obs::kSpanStoreSchemaVersion,
          [path] { return obs::SpanStore::ReadSchemaVersion(path); },
          // SpanStore::Open creates the home directory (0700) itself.
          [path] { return OpenAndClose(obs::SpanStore::Open(path)); }};
}

Status NewerError(const SchemaStore& store, int64_t found) {
  return FailedPreconditionError(store.location + ": the " + store.name + " schema (version " +
                                 std::to_string(found) + ") was written by a newer mend; this " +
                                 "build writes version " + std::to_string(store.version) +
                                 "; upgrade mend");
}

// Reads every version; the report's status is the first store's error.
MigrateReport ReadVersions(const std::vector<SchemaStore>& stores) {
  MigrateReport report;
  for (const SchemaStore& store : stores) {
    StoreMigration& entry = report.stores.emplace_back();
    entry.store = store.name;
    entry.backend = store.backend;
    entry.location = store.location;
    Result<int64_t> found = store.read_version();
    if (!found.ok()) {
      entry.status = found.status().Annotate(store.name + " store");
    } else {
      entry.from = *found;
      entry.to = *found;
      if (*found > store.version) entry.status = NewerError(store, *found);
    }
    if (report.status.ok() && !entry.status.ok()) report.status = entry.status;
  }
  return report;
}

}  // namespace

Result<std::vector<SchemaStore>> ConfiguredSchemaStores(const Config& config, const Env& env) {
  const std::string& home = config.GetString("home");
  const std::string& url = config.GetString("store.url");
  const bool postgres = store::IsPostgresUrl(url);
  if (!postgres && !url.empty()) {
    return InvalidArgumentError(
        "store.url must be empty (SQLite in the home directory) or a postgres:// URL");
  }
  std::vector<SchemaStore> stores;
  stores.push_back(postgres ? PostgresRuns(url, env) : SqliteRuns(home, env));
  const bool memory_on_postgres = postgres && !config.GetBool("memory.local");
  stores.push_back(memory_on_postgres ? PostgresMemory(url, env) : SqliteMemory(home, env));
  // The WAL queue's records carry no schema of their own; the PostgreSQL queue's tables do.
  if (postgres && config.GetString("reflexion.queue.backend") == "postgres") {
    stores.push_back(PostgresLessons(url, home, env));
  }
  // Attempts and proposals are shared on PostgreSQL; locally they are the audit folders.
  if (postgres) stores.push_back(PostgresImprove(url, home, env));
  // observe.db is read by `mend traces` even after tracing is switched off.
  if (config.GetBool("observe.enabled") || env.fs->Stat(home::ObserveFile(home)).ok()) {
    stores.push_back(Traces(home));
  }
  return stores;
}

MigrateReport MigrateStores(const std::vector<SchemaStore>& stores, MigrateMode mode) {
  MigrateReport report = ReadVersions(stores);
  if (!report.status.ok()) return report;
  for (size_t i = 0; i < stores.size(); ++i) {
    const SchemaStore& store = stores[i];
    StoreMigration& entry = report.stores[i];
    if (*entry.from == store.version) continue;
    if (mode == MigrateMode::kDryRun) {
      entry.to = store.version;
      continue;
    }
    Status opened = store.open();
    Result<int64_t> after = opened.ok() ? store.read_version() : Result<int64_t>(std::move(opened));
    if (!after.ok()) {
      entry.to.reset();
      entry.status = after.status().Annotate("migrating the " + store.name + " store");
      report.status = entry.status;
      return report;
    }
    entry.to = *after;
  }
  return report;
}

}  // namespace mend::app
