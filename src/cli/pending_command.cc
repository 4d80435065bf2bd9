// `mend pending`: unfinished runs, newest first, a page at a time, with their step, attempts and
// last error (docs/runs.md). Reads the store only, so it needs no model configuration or API key.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/run_list.h"
#include "cli/text_table.h"
#include "mend/app/run_inspector.h"
#include "mend/app/run_json.h"
#include "mend/app/run_progress.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"

namespace mend::cli {
namespace {

constexpr RunList kPending = {"pending", "unfinished runs", store::RunScope::kUnfinished,
                              "running, waiting, failed or quarantined"};

using PendingRow = ListedRow;

// One run in the `pending` JSON shape (docs/cli.md: add fields freely, never rename or remove).
nlohmann::json RunJson(const PendingRow& row) {
  nlohmann::json j = app::ListedRunJson(row.run, row.overview.origin, row.overview.interruption);
  j["steps"] =
      row.progress.has_value() ? nlohmann::json(row.progress->steps) : nlohmann::json(nullptr);
  j["agent_changed"] = app::NullIfEmpty(row.overview.AgentChangedText());
  return j;
}

nlohmann::json PageJson(const std::vector<PendingRow>& rows, const store::PendingPage& page) {
  nlohmann::json runs = nlohmann::json::array();
  for (const PendingRow& row : rows) runs.push_back(RunJson(row));
  return app::RunPageJson(std::move(runs), page);
}

// One column of the table: its header and a run's cell.
struct Column {
  std::string_view header;
  std::string (*cell)(const PendingRow& row);
};

const Column kColumns[] = {
    {"ID", [](const PendingRow& row) { return row.run.id; }},
    {"AGENT",
     [](const PendingRow& row) {
       // A resume picks up the changed folder; the person deciding whether to resume should know.
       const bool changed = !row.overview.AgentChangedText().empty();
       return row.run.agent + (changed ? " (agent changed)" : "");
     }},
    {"STATUS",
     [](const PendingRow& row) {
       // A `running` run whose process is gone is not running: say so (docs/runs.md).
       if (row.overview.interruption.has_value()) return std::string("interrupted");
       std::string text(store::RunStatusName(row.run.status));
       if (!row.run.waiting.empty()) text += " (" + row.run.waiting + ")";
       return text;
     }},
    {"STEPS",
     [](const PendingRow& row) {
       return row.progress.has_value() ? std::to_string(row.progress->steps) : std::string("?");
     }},
    {"ATTEMPTS", [](const PendingRow& row) { return std::to_string(row.run.attempts); }},
    // Quarantined runs are not tried again by recovery (`mend resume` still runs them).
    {"NEXT ATTEMPT",
     [](const PendingRow& row) -> std::string {
       if (row.run.status == store::RunStatus::kQuarantined) return "never (quarantined)";
       if (row.run.next_attempt_at.has_value()) {
         return FormatRfc3339Seconds(*row.run.next_attempt_at);
       }
       return "-";
     }},
    {"WORKSPACE",
     [](const PendingRow& row) -> std::string {
       const std::string& workspace = row.overview.origin.workspace;
       return workspace.empty() ? "-" : workspace;
     }},
    {"LAST ERROR",
     [](const PendingRow& row) {
       return row.run.last_error.has_value() ? row.run.last_error->message : std::string();
     }},
};

void PrintRows(const std::vector<PendingRow>& runs, std::ostream& out) {
  std::vector<std::vector<std::string>> rows(1);
  for (const Column& column : kColumns) rows[0].emplace_back(column.header);
  for (const PendingRow& run : runs) {
    std::vector<std::string>& row = rows.emplace_back();
    for (const Column& column : kColumns) row.push_back(column.cell(run));
  }
  PrintColumns(rows, out);
}

void PrintTable(const CliContext& ctx, const store::PendingQuery& query,
                const std::vector<PendingRow>& rows, const store::PendingPage& page) {
  if (PrintEmptyPage(ctx, kPending, query, page)) return;
  PrintRows(rows, ctx.out);
  PrintNextPage(ctx, kPending, query, page);
}

Status ShowPage(CliContext& ctx, app::Runtime& runtime, const RunListArgs& args) {
  MEND_ASSIGN_OR_RETURN(store::PendingQuery query, RunListQuery(args, kPending));
  MEND_ASSIGN_OR_RETURN(store::PendingPage page, runtime.store->ListPending(query));
  MEND_ASSIGN_OR_RETURN(std::vector<PendingRow> rows, ListedRows(runtime, page));
  if (ctx.json) {
    ctx.out << DumpJson(PageJson(rows, page)) << "\n";
  } else {
    PrintTable(ctx, query, rows, page);
  }
  return OkStatus();
}

Status ShowPending(CliContext& ctx, const RunListArgs& args) {
  // Bad flags are usage errors before the store is opened.
  MEND_RETURN_IF_ERROR(RunListQuery(args, kPending).status());
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  return ShowPage(ctx, *runtime, args);
}

}  // namespace

Status PrintPending(CliContext& ctx, app::Runtime& runtime) {
  return ShowPage(ctx, runtime, RunListArgs{});
}

void AddPendingCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<RunListArgs>();
  CLI::App* pending = app.add_subcommand(
      "pending", "unfinished runs, newest first, " + std::to_string(kRunListDefaultLimit) +
                     " per page; the last line gives the command for the next page");
  pending->group("Commands");
  AddRunListFlags(*pending, *args, kPending);
  pending->callback(
      [&ctx, args] { ctx.action = [&ctx, args] { return ShowPending(ctx, *args); }; });
}

}  // namespace mend::cli
