#pragma once

// Reading a schema version from a `meta` table (key TEXT, value TEXT) without creating or changing
// anything, for `mend migrate`. The runs store and long-term memory keep their versions in the same
// table under keys of their own.

#include <cstdint>
#include <string>
#include <string_view>

#include "mend/base/clock.h"
#include "mend/base/result.h"

namespace mend::db {

/// The value of `key` in table `meta` of the SQLite file `path`, parsed as a positive integer; 0
/// when the file, the table or the key does not exist. Nothing is written: the file is opened
/// without being created and only read.
Result<int64_t> ReadSqliteMetaVersion(const std::string& path, std::string_view key);

/// The same from table `table` (default `meta`) in `schema` (empty: the connection's search path)
/// of the PostgreSQL database at `url`.
Result<int64_t> ReadPostgresMetaVersion(const std::string& url, const std::string& schema,
                                        Duration connect_timeout, std::string_view key,
                                        const std::string& table = "meta");

}  // namespace mend::db
