// The proxy's schema version, read without touching its table (`mend version --verbose`).
#include "mend/proxy/schema_version.h"

#include "mend/db/schema_read.h"

namespace mend::proxy {

Result<int64_t> ReadSqliteProxySchemaVersion(const std::string& path) {
  return db::ReadSqliteMetaVersion(path, "proxy.schema_version");
}

}  // namespace mend::proxy
