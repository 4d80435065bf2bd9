// `mend runs` (alias `mend list`): every run of the store, completed ones included, newest first,
// a page at a time, with filters, as `mend pending` pages the unfinished ones (docs/runs.md).
// Reads the store only, so it needs no model configuration or API key.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
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

using nlohmann::json;

constexpr RunList kRuns = {"runs", "runs", store::RunScope::kAll,
                           "running, waiting, completed, failed or quarantined"};

using RunRow = ListedRow;

// One run: the fields of `mend pending --json` plus its times and progress (docs/runs.md).
json RunJson(const RunRow& row) {
  const store::RunRecord& run = row.run;
  const std::optional<app::RunProgress>& p = row.progress;
  json j = app::ListedRunJson(run, row.overview.origin, row.overview.interruption);
  j["agent_changed"] = app::NullIfEmpty(row.overview.AgentChangedText());
  j["created_at"] = FormatRfc3339(run.created_at);
  j["updated_at"] = FormatRfc3339(run.updated_at);
  j["steps"] = p ? json(p->steps) : json(nullptr);
  j["usage"] = p ? json{{"input_tokens", p->input_tokens}, {"output_tokens", p->output_tokens}}
                 : json(nullptr);
  j["cost_usd"] = p ? json(p->cost_usd) : json(nullptr);
  return j;
}

json PageJson(const std::vector<RunRow>& rows, const store::PendingPage& page) {
  json runs = json::array();
  for (const RunRow& row : rows) runs.push_back(RunJson(row));
  return app::RunPageJson(std::move(runs), page);
}

std::string Dollars(double usd) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "$%.4f", usd);
  return buf;
}

std::vector<std::string> Cells(const RunRow& row) {
  const store::RunRecord& run = row.run;
  std::string status(store::RunStatusName(run.status));
  if (!run.waiting.empty()) status += " (" + run.waiting + ")";
  // A `running` run whose process is gone is not running (docs/runs.md, "Interrupted runs").
  if (row.overview.interruption.has_value()) status = "interrupted";
  const bool changed = !row.overview.AgentChangedText().empty();
  return {run.id,
          run.agent + (changed ? " (agent changed)" : ""),
          status,
          row.progress ? std::to_string(row.progress->steps) : "?",
          row.progress ? Dollars(row.progress->cost_usd) : "?",
          FormatRfc3339Seconds(run.created_at),
          FormatRfc3339Seconds(run.updated_at),
          run.last_error.has_value() ? run.last_error->message : ""};
}

void PrintTable(const CliContext& ctx, const store::PendingQuery& query,
                const std::vector<RunRow>& rows, const store::PendingPage& page) {
  if (PrintEmptyPage(ctx, kRuns, query, page)) return;
  std::vector<std::vector<std::string>> table = {
      {"ID", "AGENT", "STATUS", "STEPS", "COST", "CREATED", "UPDATED", "LAST ERROR"}};
  for (const RunRow& row : rows) table.push_back(Cells(row));
  PrintColumns(table, ctx.out);
  PrintNextPage(ctx, kRuns, query, page);
}

Status ShowRuns(CliContext& ctx, const RunListArgs& args) {
  // Bad flags are usage errors before the store is opened.
  MEND_ASSIGN_OR_RETURN(store::PendingQuery query, RunListQuery(args, kRuns));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(store::PendingPage page, runtime->store->ListPending(query));
  MEND_ASSIGN_OR_RETURN(std::vector<RunRow> rows, ListedRows(*runtime, page));
  if (ctx.json) {
    ctx.out << DumpJson(PageJson(rows, page)) << "\n";
  } else {
    PrintTable(ctx, query, rows, page);
  }
  return OkStatus();
}

}  // namespace

void AddRunsCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<RunListArgs>();
  CLI::App* runs = app.add_subcommand(
      "runs", "every run, completed ones included, newest first, " +
                  std::to_string(kRunListDefaultLimit) +
                  " per page; the last line gives the command for the next page");
  runs->alias("list");
  runs->group("Commands");
  AddRunListFlags(*runs, *args, kRuns);
  runs->callback([&ctx, args] { ctx.action = [&ctx, args] { return ShowRuns(ctx, *args); }; });
}

}  // namespace mend::cli
