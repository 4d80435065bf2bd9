// The version texts of the build and the table of versioned formats. The build's description
// comes from a header generated when the build is configured, included here only, so a new
// description recompiles this file alone.
#include "cli/version_info.h"

#include "mend/base/home_layout.h"
#include "mend/improve/attempt_store.h"
#include "mend/improve/canary_store.h"
#include "mend/lessonq/postgres_queue.h"
#include "mend/lessonq/wal_codec.h"
#include "mend/memory/schema_version.h"
#include "mend/obs/span_store.h"
#include "mend/proxy/schema_version.h"
#include "mend/store/schema_version.h"
#include "mend_build_version.h"

namespace mend::cli {

std::string_view PackageVersion() { return MEND_PACKAGE_VERSION; }
std::string_view BuildDescribe() { return MEND_BUILD_DESCRIBE; }
std::string_view BuildDescribeSource() { return MEND_BUILD_DESCRIBE_SOURCE; }

std::string VersionText(std::string_view package, std::string_view describe,
                        std::string_view source) {
  std::string_view tag = describe;
  if (source == "git" && tag.starts_with("v")) tag.remove_prefix(1);
  if (describe.empty() || tag == package) return std::string(package);
  const std::string prefix = source == "git" ? "git " : "";
  return std::string(package) + " (" + prefix + std::string(describe) + ")";
}

std::string VersionText() {
  return VersionText(PackageVersion(), BuildDescribe(), BuildDescribeSource());
}

std::vector<SchemaVersionInfo> SchemaVersions() {
  auto in_db = [](auto read) {
    return [read](const std::string& home) { return read(home::DatabaseFile(home)); };
  };
  std::vector<SchemaVersionInfo> versions;
  versions.push_back({"mend.db", "runs", "store.schema_version", store::kSqliteStoreSchemaVersion,
                      in_db(store::ReadSqliteStoreSchemaVersion)});
  versions.push_back({"mend.db", "memory", "memory.schema_version",
                      memory::SqliteMemorySchemaVersion(),
                      in_db(memory::ReadSqliteMemorySchemaVersion)});
  versions.push_back({"mend.db", "proxy", "proxy.schema_version", proxy::kProxySchemaVersion,
                      in_db(proxy::ReadSqliteProxySchemaVersion)});
  versions.push_back({"mend.db", "canaries", "canary.schema_version",
                      improve::CanaryStoreSchemaVersion(),
                      in_db(improve::ReadSqliteCanaryStoreSchemaVersion)});
  versions.push_back({"observe.db", "traces", "schema_version", obs::kSpanStoreSchemaVersion,
                      [](const std::string& home) {
                        return obs::SpanStore::ReadSchemaVersion(home::ObserveFile(home));
                      }});
  versions.push_back({"reflexion/wal", "lesson records", "v", lessonq::kWalVersion, nullptr});
  versions.push_back(
      {"postgres", "runs", "store.schema_version", store::kPostgresStoreSchemaVersion, nullptr});
  versions.push_back({"postgres", "memory", "memory.schema_version",
                      memory::PostgresMemorySchemaVersion(), nullptr});
  versions.push_back({"postgres", "lessons", "lessonq.schema_version",
                      lessonq::PostgresLessonQueueSchemaVersion(), nullptr});
  versions.push_back({"postgres", "improve", "improve.schema_version",
                      improve::PostgresAttemptStoreSchemaVersion(), nullptr});
  versions.push_back({"postgres", "canaries", "canary.schema_version",
                      improve::CanaryStoreSchemaVersion(), nullptr});
  return versions;
}

}  // namespace mend::cli
