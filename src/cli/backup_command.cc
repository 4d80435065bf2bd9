// `mend backup DEST_DIR`: an online copy of the home (app::BackupHome), safe while mend runs.
// Restoring is a copy the other way with mend stopped (docs/operations.md, "Backup and restore").
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "cli/version_info.h"
#include "mend/app/backup.h"
#include "mend/base/json.h"
#include "mend/store/postgres_store.h"

namespace mend::cli {
namespace {

struct BackupArgs {
  std::string dest;
};

nlohmann::json SummaryJson(const app::BackupManifest& manifest, const std::string& dest) {
  return {{"dest", dest},
          {"manifest", JoinPath(dest, app::kBackupManifestName)},
          {"home", manifest.home},
          {"created_at", manifest.created_at},
          {"mend_version", manifest.mend_version},
          {"files", manifest.files.size()},
          {"bytes", manifest.total_bytes()},
          {"notes", manifest.notes}};
}

Status Backup(CliContext& ctx, const BackupArgs& args) {
  MEND_ASSIGN_OR_RETURN(Config config, LoadCliConfig(ctx));
  app::BackupRequest request;
  request.home = config.GetString("home");
  request.queue_dir = config.GetString("reflexion.queue.base_dir");
  request.dest = args.dest;
  request.mend_version = VersionText();
  request.shared_state_on_postgres = store::IsPostgresUrl(config.GetString("store.url"));
  Env env = Env::Default();
  env.fs = &ctx.fs;
  Result<app::BackupManifest> manifest = app::BackupHome(request, env);
  if (!manifest.ok()) {
    // A missing home, a destination in use or inside the home: the user picks other folders.
    const StatusCode code = manifest.status().code();
    if (code == StatusCode::kFailedPrecondition || code == StatusCode::kInvalidArgument) {
      return UsageError(manifest.status());
    }
    return manifest.status().Annotate("backup into " + args.dest + " is incomplete (no " +
                                      app::kBackupManifestName + ")");
  }
  for (const std::string& note : manifest->notes) ctx.err << "mend: note: " << note << "\n";
  if (ctx.json) {
    ctx.out << DumpJson(SummaryJson(*manifest, args.dest)) << "\n";
    return OkStatus();
  }
  ctx.out << "backed up " << manifest->home << " to " << args.dest << ": " << manifest->files.size()
          << " files, " << manifest->total_bytes() << " bytes; " << app::kBackupManifestName
          << " lists each with its SHA-256\n";
  return OkStatus();
}

}  // namespace

void AddBackupCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<BackupArgs>();
  CLI::App* backup =
      app.add_subcommand("backup", "copy the home into a new folder, safely while mend runs");
  backup->group("Commands");
  backup->add_option("DEST_DIR", args->dest, "the backup folder: new, or empty")->required();
  backup->footer(
      "Copies mend.db and observe.db through SQLite's online backup, the lesson queue's records "
      "and dead letters, LESSONS.md, config.toml, the event logs and improve's audit folders, "
      "then writes MANIFEST.json with each file's size and SHA-256. To restore: stop mend, move "
      "the home aside and copy the backup folder in its place (docs/operations.md).");
  backup->callback([&ctx, args] { ctx.action = [&ctx, args] { return Backup(ctx, *args); }; });
}

}  // namespace mend::cli
