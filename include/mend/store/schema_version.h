#pragma once

// The runs store's schema versions, and readers that report the version of an existing store
// without changing it (`mend migrate`; docs/store_schema.md).

#include <chrono>
#include <cstdint>
#include <string>

#include "mend/base/clock.h"
#include "mend/base/result.h"

namespace mend::store {

///@{
/// The versions of the runs store's schema this build writes (docs/store_schema.md). Opening an
/// older store migrates it to these; a newer one is refused.
inline constexpr int64_t kSqliteStoreSchemaVersion = 4;
inline constexpr int64_t kPostgresStoreSchemaVersion = 4;
///@}

/// The runs store's schema version in the SQLite file `path` (key `store.schema_version` of table
/// `meta`), read without creating or changing anything: 0 when the file, the table or the key does
/// not exist yet. Errors: kDataLoss for a file that is not a database or a version that is not a
/// positive integer; kUnavailable when the file stays locked; kInternal for other SQLite failures.
Result<int64_t> ReadSqliteStoreSchemaVersion(const std::string& path);

/// The same for the PostgreSQL store at `url`, in `schema` (empty: the connection's default), read
/// in one read-only query on a connection of its own. Errors as OpenPostgresStore's for the
/// connection (kInvalidArgument, kUnavailable), kDataLoss for an unreadable version.
Result<int64_t> ReadPostgresStoreSchemaVersion(const std::string& url,
                                               const std::string& schema = "",
                                               Duration connect_timeout = std::chrono::seconds(5));

}  // namespace mend::store
