// `mend --version`, `-V` and `mend version`: the build's version and, with --verbose, the versions
// of every versioned format this build writes beside those found in the home. Nothing is created
// or migrated: a home that does not exist stays so, and the databases are only read.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/version_info.h"
#include "mend/base/json.h"

namespace mend::cli {
namespace {

struct VersionFlags {
  bool version = false;          // --version or -V
  bool global_verbose = false;   // --verbose of the top level
  bool command_verbose = false;  // --verbose of `mend version`
  bool command = false;          // `mend version` was given
};

// One row of the verbose listing: what this build writes and, when it was read, what the home
// holds.
struct SchemaRow {
  SchemaVersionInfo info;
  bool read = false;
  std::optional<int64_t> found;  // empty when the read failed
  std::string error;
};

// The home of this invocation, or the reason it cannot be located (an invalid configuration).
struct HomeProbe {
  std::string path;
  bool exists = false;
  std::string error;
};

HomeProbe ProbeHome(CliContext& ctx) {
  HomeProbe probe;
  Result<Config> config = LoadCliConfig(ctx);
  if (!config.ok()) {
    probe.error = std::string(config.status().message());
    return probe;
  }
  probe.path = config->GetString("home");
  Result<FileInfo> info = ctx.fs.Stat(probe.path);
  probe.exists = info.ok() && info->is_directory;
  return probe;
}

std::vector<SchemaRow> ReadSchemaRows(const HomeProbe& home) {
  std::vector<SchemaRow> rows;
  for (SchemaVersionInfo& info : SchemaVersions()) {
    SchemaRow& row = rows.emplace_back();
    row.info = std::move(info);
    if (!home.exists || !row.info.read_found) continue;
    row.read = true;
    Result<int64_t> found = row.info.read_found(home.path);
    if (found.ok()) {
      row.found = *found;
    } else {
      row.error = std::string(found.status().message());
    }
  }
  return rows;
}

nlohmann::json BuildJson() {
  return {{"version", std::string(PackageVersion())},
          {"build", std::string(BuildDescribe())},
          {"build_source", std::string(BuildDescribeSource())}};
}

nlohmann::json VerboseJson(const HomeProbe& home, const std::vector<SchemaRow>& rows) {
  nlohmann::json out = BuildJson();
  nlohmann::json schemas = nlohmann::json::array();
  for (const SchemaRow& row : rows) {
    nlohmann::json entry = {{"file", row.info.file},
                            {"schema", row.info.schema},
                            {"key", row.info.key},
                            {"writes", row.info.writes}};
    if (row.read) {
      entry["found"] = row.found.has_value() ? nlohmann::json(*row.found) : nlohmann::json();
      if (!row.error.empty()) entry["error"] = row.error;
    }
    schemas.push_back(std::move(entry));
  }
  out["schemas"] = std::move(schemas);
  if (home.error.empty()) {
    out["home"] = home.path;
    out["home_exists"] = home.exists;
  } else {
    out["home_error"] = home.error;
  }
  return out;
}

std::string FoundText(const SchemaRow& row) {
  if (!row.read) return "-";
  if (!row.found.has_value()) return "unreadable";
  return *row.found == 0 ? "none" : std::to_string(*row.found);
}

void PrintVerboseText(CliContext& ctx, const HomeProbe& home, const std::vector<SchemaRow>& rows) {
  ctx.out << "\n";
  if (!home.error.empty()) {
    ctx.out << "home: not located (" << home.error << ")\n";
  } else {
    ctx.out << "home: " << home.path << (home.exists ? "" : " (does not exist; nothing read)")
            << "\n";
  }
  size_t file_width = 4, schema_width = 6, key_width = 3;
  for (const SchemaRow& row : rows) {
    file_width = std::max(file_width, row.info.file.size());
    schema_width = std::max(schema_width, row.info.schema.size());
    key_width = std::max(key_width, row.info.key.size());
  }
  auto cell = [&](std::string_view text, size_t width) {
    ctx.out << std::left << std::setw(static_cast<int>(width + 2)) << text;
  };
  auto line = [&](std::string_view file, std::string_view schema, std::string_view key,
                  std::string_view writes, std::string_view found) {
    cell(file, file_width);
    cell(schema, schema_width);
    cell(key, key_width);
    if (home.exists) {
      cell(writes, 6);
      ctx.out << found;
    } else {
      ctx.out << writes;
    }
    ctx.out << "\n";
  };
  line("FILE", "SCHEMA", "KEY", "WRITES", "FOUND");
  for (const SchemaRow& row : rows) {
    line(row.info.file, row.info.schema, row.info.key, std::to_string(row.info.writes),
         FoundText(row));
  }
  // A version that could not be read is worth its reason, but the listing itself succeeded.
  for (const SchemaRow& row : rows) {
    if (!row.error.empty()) {
      ctx.err << "mend: " << row.info.file << " " << row.info.schema << ": " << row.error << "\n";
    }
  }
}

Status PrintVersion(CliContext& ctx, bool verbose) {
  if (!verbose) {
    if (ctx.json) {
      ctx.out << DumpJson(BuildJson()) << "\n";
    } else {
      ctx.out << "mend " << VersionText() << "\n";
    }
    return OkStatus();
  }
  const HomeProbe home = ProbeHome(ctx);
  const std::vector<SchemaRow> rows = ReadSchemaRows(home);
  if (ctx.json) {
    ctx.out << DumpJson(VerboseJson(home, rows)) << "\n";
    return OkStatus();
  }
  ctx.out << "mend " << VersionText() << "\n";
  PrintVerboseText(ctx, home, rows);
  return OkStatus();
}

}  // namespace

void AddVersionCommand(CLI::App& app, CliContext& ctx) {
  auto flags = std::make_shared<VersionFlags>();
  app.add_flag("--version,-V", flags->version, "print the version and exit");
  app.add_flag("--verbose", flags->global_verbose,
               "with --version: also the schema versions this build writes and the home holds");
  CLI::App* version = app.add_subcommand("version", "print the version (as --version and -V)");
  version->group("Commands");
  version->add_flag("--verbose", flags->command_verbose,
                    "also the schema versions this build writes and the home holds");
  version->callback([flags] { flags->command = true; });
  // The top level's callback runs after the command's, so --version wins over a command given
  // beside it, as it did when it stopped the parse.
  app.callback([&ctx, flags] {
    const bool verbose = flags->global_verbose || flags->command_verbose;
    if (flags->version || flags->command) {
      ctx.action = [&ctx, verbose] { return PrintVersion(ctx, verbose); };
    } else if (flags->global_verbose) {
      ctx.action = [] { return UsageError("--verbose goes with --version or 'mend version'"); };
    }
  });
}

}  // namespace mend::cli
