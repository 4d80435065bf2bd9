#pragma once

// What `mend --version` says: the build's version, and the versions of every file format with a
// version of its own that this build writes (docs/home.md, "Schema versions").

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"

namespace mend::cli {

// The text after "mend " in `mend --version`: the package version alone when the build's
// description says nothing more (no description, or a tag naming that version, with or without a
// leading "v"); otherwise the package version and the description in parentheses, after "git "
// when it came from git: "0.1.0 (git a09cd62-dirty)", "0.1.0 (git v0.1.0-3-g1f2e3d4)",
// "0.1.0 (0.1.0-1)" for a packager's override. `source` is "git", "override" or "".
std::string VersionText(std::string_view package, std::string_view describe,
                        std::string_view source);
// The same for this build (cmake/Version.cmake).
std::string VersionText();

// This build's package version, description and its source, as cmake/Version.cmake recorded them.
std::string_view PackageVersion();
std::string_view BuildDescribe();
std::string_view BuildDescribeSource();

// One versioned format this build writes.
struct SchemaVersionInfo {
  std::string file;    // "mend.db", "observe.db", "reflexion/wal", "postgres"
  std::string schema;  // "runs", "memory", "proxy", "traces", "lesson records", "lessons", ...
  std::string key;     // where the version is kept: "store.schema_version", the record field "v"
  int64_t writes = 0;  // the version this build writes
  // Reads the version stored in the home `home` without creating or changing anything (0 when
  // the file or its version does not exist yet); empty when this format is not read from a home
  // (PostgreSQL, whose versions `mend migrate --dry-run` reads, and the lesson records).
  std::function<Result<int64_t>(const std::string& home)> read_found;
};

// Every versioned format, in the order `mend version --verbose` prints them: mend.db's parts,
// observe.db, the lesson queue's records, then the PostgreSQL tables.
std::vector<SchemaVersionInfo> SchemaVersions();

}  // namespace mend::cli
