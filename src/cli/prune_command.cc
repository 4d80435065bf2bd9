// `mend prune`: retention (docs/cli.md, docs/observe.md "Retention"). Removes the checkpoint
// history (or, with --runs, the whole record) of finished runs older than the limit, the rotated
// event logs and the spans older than it. Reads and writes the stores only: no model needed.
#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.h"
#include "mend/app/retention.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"

namespace mend::cli {
namespace {

constexpr char kDefaultOlderThan[] = "30d";

struct PruneArgs {
  std::string older_than = kDefaultOlderThan;
  bool dry_run = false;
  bool runs = false;
};

nlohmann::json ReportJson(const PruneArgs& args, const app::RetentionReport& r) {
  return {{"older_than", args.older_than},
          {"cutoff", FormatRfc3339Seconds(r.cutoff)},
          {"dry_run", args.dry_run},
          {"runs", r.store.runs},
          {"checkpoints", r.store.checkpoints},
          {"runs_deleted", r.store.runs_deleted},
          {"event_logs", r.event_logs},
          {"spans", r.spans},
          {"bytes_reclaimed", r.bytes_reclaimed()}};
}

void PrintReport(const PruneArgs& args, const app::RetentionReport& r, std::ostream& out) {
  const char* verb = args.dry_run ? "would remove" : "removed";
  out << (args.dry_run ? "dry run: nothing changed; " : "") << "older than " << args.older_than
      << " (last updated before " << FormatRfc3339Seconds(r.cutoff) << ")\n";
  out << "runs pruned: " << r.store.runs << "\n";
  out << "checkpoints " << verb << ": " << r.store.checkpoints << "\n";
  out << "runs deleted: " << r.store.runs_deleted << (args.runs ? "" : " (--runs deletes them)")
      << "\n";
  out << "event logs " << verb << ": " << r.event_logs << "\n";
  out << "spans " << verb << ": " << r.spans << "\n";
  out << "bytes reclaimed: " << r.bytes_reclaimed() << "\n";
}

Status Prune(CliContext& ctx, const PruneArgs& args) {
  Result<std::chrono::milliseconds> older_than = ParseDuration(args.older_than);
  if (!older_than.ok()) {
    return UsageError("--older-than: " + std::string(older_than.status().message()));
  }
  if (*older_than <= std::chrono::milliseconds::zero()) {
    return UsageError("--older-than must be positive, e.g. 30d or 12h");
  }
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  app::RetentionOptions options;
  options.older_than = *older_than;
  options.scope = args.runs ? store::PruneScope::kWholeRuns : store::PruneScope::kHistory;
  options.mode = args.dry_run ? store::PruneMode::kDryRun : store::PruneMode::kApply;
  MEND_ASSIGN_OR_RETURN(app::RetentionReport report, app::PruneOlderThan(*runtime, options));
  if (ctx.json) {
    ctx.out << DumpJson(ReportJson(args, report)) << "\n";
  } else {
    PrintReport(args, report, ctx.out);
  }
  return OkStatus();
}

}  // namespace

void AddPruneCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<PruneArgs>();
  CLI::App* prune = app.add_subcommand(
      "prune",
      "retention: old finished runs' checkpoint history (or the runs), rotated event logs, spans");
  prune->group("Commands");
  prune->add_option("--older-than", args->older_than,
                    "what was last updated before now minus this goes, e.g. 30d, 12h, 90m "
                    "(default: " +
                        std::string(kDefaultOlderThan) + ")");
  prune->add_flag("--dry-run", args->dry_run, "report what would go and change nothing");
  prune->add_flag("--runs", args->runs,
                  "delete the old finished runs themselves, not only their checkpoint history");
  prune->footer(
      "Only completed and failed runs are pruned; running, waiting and quarantined runs, and runs "
      "a live process holds, are never touched. Without --runs each run keeps its final "
      "checkpoint and whole conversation, so mend show prints the same final state and "
      "transcript (only its list of checkpoints shrinks). The live events.jsonl is never "
      "removed. docs/observe.md explains retention.");
  prune->callback([&ctx, args] { ctx.action = [&ctx, args] { return Prune(ctx, *args); }; });
}

}  // namespace mend::cli
