// The runs store's schema version as `mend migrate` reads it, without touching the store.
#include "mend/store/schema_version.h"

#include "mend/db/schema_read.h"

namespace mend::store {

Result<int64_t> ReadSqliteStoreSchemaVersion(const std::string& path) {
  return db::ReadSqliteMetaVersion(path, "store.schema_version");
}

Result<int64_t> ReadPostgresStoreSchemaVersion(const std::string& url, const std::string& schema,
                                               Duration connect_timeout) {
  return db::ReadPostgresMetaVersion(url, schema, connect_timeout, "store.schema_version");
}

}  // namespace mend::store
