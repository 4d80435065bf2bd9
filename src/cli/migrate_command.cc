// `mend migrate`: brings the schema of every store this configuration uses to this build's
// version (app/migrate.h). Opens the stores directly from the configuration: no model, no runtime.
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mend/app/migrate.h"
#include "mend/base/json.h"

namespace mend::cli {
namespace {

struct MigrateArgs {
  bool dry_run = false;
};

nlohmann::json VersionJson(const std::optional<int64_t>& version) {
  return version.has_value() ? nlohmann::json(*version) : nlohmann::json(nullptr);
}

std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

nlohmann::json ErrorJson(const Status& status) {
  return {{"code", status.detail_code().empty() ? std::string(StatusCodeName(status.code()))
                                                : std::string(status.detail_code())},
          {"message", OneLine(std::string(status.message()))},
          {"class", std::string(ErrorClassName(ClassOf(status)))},
          {"retryable", IsRetryable(status)}};
}

nlohmann::json ReportJson(const app::MigrateReport& report, const MigrateArgs& args) {
  nlohmann::json stores = nlohmann::json::array();
  for (const app::StoreMigration& s : report.stores) {
    nlohmann::json entry = {{"store", s.store},        {"backend", s.backend},
                            {"location", s.location},  {"from", VersionJson(s.from)},
                            {"to", VersionJson(s.to)}, {"migrated", s.migrated()}};
    if (!s.status.ok()) entry["error"] = OneLine(std::string(s.status.message()));
    stores.push_back(std::move(entry));
  }
  nlohmann::json out = {{"dry_run", args.dry_run}, {"stores", std::move(stores)}};
  if (!report.status.ok()) out["error"] = ErrorJson(report.status);
  return out;
}

std::string VersionText(const std::optional<int64_t>& version) {
  if (!version.has_value()) return "unreadable";
  return *version == 0 ? "none" : "version " + std::to_string(*version);
}

// "runs (sqlite, /home/u/.mend/mend.db): version 3 -> version 4, migrated"
std::string StoreLine(const app::StoreMigration& s, const MigrateArgs& args) {
  std::string line = s.store + " (" + s.backend + ", " + s.location + "): " + VersionText(s.from);
  if (!s.status.ok()) return line + ", not migrated";
  if (!s.migrated()) return line + ", up to date";
  line += " -> " + VersionText(s.to) + ", ";
  const bool created = s.from == 0;
  if (args.dry_run) return line + (created ? "would be created" : "would be migrated");
  return line + (created ? "created" : "migrated");
}

Status Migrate(CliContext& ctx, const MigrateArgs& args) {
  MEND_ASSIGN_OR_RETURN(Config config, LoadCliConfig(ctx));
  Env env = Env::Default();
  env.fs = &ctx.fs;
  Result<std::vector<app::SchemaStore>> stores = app::ConfiguredSchemaStores(config, env);
  if (!stores.ok()) return UsageError(stores.status());
  const app::MigrateReport report = app::MigrateStores(
      *stores, args.dry_run ? app::MigrateMode::kDryRun : app::MigrateMode::kApply);
  if (ctx.json) {
    ctx.out << DumpJson(ReportJson(report, args)) << "\n";
  } else {
    if (args.dry_run) ctx.out << "dry run: nothing changed\n";
    for (const app::StoreMigration& s : report.stores) ctx.out << StoreLine(s, args) << "\n";
  }
  if (report.status.ok()) return OkStatus();
  ctx.err << "mend: " << OneLine(std::string(report.status.message())) << "\n";
  ctx.error_reported = true;
  return report.status;
}

}  // namespace

void AddMigrateCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<MigrateArgs>();
  CLI::App* migrate =
      app.add_subcommand("migrate", "bring every store's schema to this version (idempotent)");
  migrate->group("Commands");
  migrate->add_flag("--dry-run", args->dry_run, "report what would change and change nothing");
  migrate->footer(
      "The stores are those this configuration uses: runs (mend.db or store.url), long-term "
      "memory (mend.db, or PostgreSQL when store.url is postgres:// and memory.local is false), "
      "the lesson queue (when reflexion.queue.backend is postgres), improve's attempts and "
      "proposals (when store.url is postgres://) and traces (observe.db). "
      "Every version is read first; when a store was written by a newer "
      "mend, nothing is migrated and the command exits 1. Stores already at this version are not "
      "touched, so running it again changes nothing. docs/operations.md explains upgrades.");
  migrate->callback([&ctx, args] { ctx.action = [&ctx, args] { return Migrate(ctx, *args); }; });
}

}  // namespace mend::cli
