#pragma once

// The schema version of the proxy's conversation table in mend.db, and a reader that reports the
// version of an existing file without changing it (`mend version`; docs/proxy.md).

#include <cstdint>
#include <string>

#include "mend/base/result.h"

namespace mend::proxy {

/// The version of the proxy's conversation table in mend.db (`proxy_conversations`, docs/proxy.md,
/// "Conversations and memory") that this build writes, kept under the key `proxy.schema_version`
/// of table `meta`. A newer version is refused when the proxy opens the table.
inline constexpr int64_t kProxySchemaVersion = 1;

/// The proxy's schema version in the SQLite file `path`, read without creating or changing
/// anything: 0 when the file, the table `meta` or the key does not exist yet. Errors: kDataLoss for
/// a file that is not a database or a version that is not a positive integer; kUnavailable when the
/// file stays locked; kInternal for other SQLite failures. Thread-safe.
Result<int64_t> ReadSqliteProxySchemaVersion(const std::string& path);

}  // namespace mend::proxy
