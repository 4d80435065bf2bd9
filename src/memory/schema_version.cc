// Memory's schema versions, read without touching the tables, for mend migrate.
#include "mend/memory/schema_version.h"

#include "memory/fact_store_sql.h"
#include "memory/pg_fact_store_sql.h"
#include "mend/db/schema_read.h"

namespace mend::memory {
namespace {

constexpr char kVersionKey[] = "memory.schema_version";

}  // namespace

int64_t SqliteMemorySchemaVersion() { return internal::kMemorySchemaVersion; }

int64_t PostgresMemorySchemaVersion() { return internal::kPgMemorySchemaVersion; }

Result<int64_t> ReadSqliteMemorySchemaVersion(const std::string& path) {
  return db::ReadSqliteMetaVersion(path, kVersionKey);
}

Result<int64_t> ReadPostgresMemorySchemaVersion(const std::string& url, const std::string& schema,
                                                Duration connect_timeout) {
  return db::ReadPostgresMetaVersion(url, schema, connect_timeout, kVersionKey);
}

}  // namespace mend::memory
