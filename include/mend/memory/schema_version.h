#pragma once

// Long-term memory's schema versions, and readers that report the version of an existing memory
// without changing it (`mend migrate`; docs/memory.md).

#include <chrono>
#include <cstdint>
#include <string>

#include "mend/base/clock.h"
#include "mend/base/result.h"

namespace mend::memory {

///@{
/// The versions of long-term memory's schema this build writes (docs/memory.md): in mend.db
/// (FactStore::Open) and on PostgreSQL (OpenPostgresFactStore). Opening older memory migrates it
/// to these; newer memory is refused.
int64_t SqliteMemorySchemaVersion();
int64_t PostgresMemorySchemaVersion();
///@}

/// Memory's schema version in the SQLite file `path` (key `memory.schema_version` of table
/// `meta`), read without creating or changing anything: 0 when the file, the table or the key does
/// not exist yet. Errors: kDataLoss for a file that is not a database or an unreadable version;
/// kUnavailable when the file stays locked; kInternal for other SQLite failures.
Result<int64_t> ReadSqliteMemorySchemaVersion(const std::string& path);

/// The same on PostgreSQL at `url`, in `schema` (empty: the connection's default), on a connection
/// of its own. Errors as OpenPostgresFactStore's for the connection, kDataLoss for an unreadable
/// version.
Result<int64_t> ReadPostgresMemorySchemaVersion(const std::string& url,
                                                const std::string& schema = "",
                                                Duration connect_timeout = std::chrono::seconds(5));

}  // namespace mend::memory
