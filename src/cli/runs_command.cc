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

constexpr int64_t kDefaultLimit = 20;
constexpr char kStatusChoices[] = "running, waiting, completed, failed or quarantined";

struct RunsArgs {
  int64_t limit = kDefaultLimit;
  std::vector<std::string> statuses;  // repeated and/or comma-separated
  std::string agent;
  std::string before;  // a cursor from a previous page
};

Result<store::PendingQuery> QueryOf(const RunsArgs& args) {
  store::PendingQuery query;
  query.scope = store::RunScope::kAll;
  if (args.limit < 1 || args.limit > static_cast<int64_t>(store::kMaxPendingPageSize)) {
    return UsageError("--limit must be between 1 and " +
                      std::to_string(store::kMaxPendingPageSize) + ", not " +
                      std::to_string(args.limit));
  }
  query.limit = static_cast<size_t>(args.limit);
  for (const std::string& name : args.statuses) {
    Result<store::RunStatus> status = store::ParseRunStatus(name);
    if (!status.ok()) {
      return UsageError("--status takes " + std::string(kStatusChoices) + ", not \"" + name + "\"");
    }
    query.statuses.push_back(*status);
  }
  query.agent = args.agent;
  if (!args.before.empty()) {
    Result<store::RunCursor> cursor = store::ParseRunCursor(args.before);
    if (!cursor.ok()) return UsageError("--before: " + std::string(cursor.status().message()));
    query.before = *std::move(cursor);
  }
  return query;
}

struct RunRow {
  const store::RunRecord& run;
  app::RunOverview overview;
  std::optional<app::RunProgress> progress;
};

// The page's runs with their agent folders' news and their progress, read from the newest
// checkpoints in one store query. A run without a checkpoint has made no progress; a state that
// cannot be read leaves the run's progress unknown and the rest of the page as it is.
Result<std::vector<RunRow>> RowsOf(app::Runtime& runtime, const store::PendingPage& page) {
  MEND_ASSIGN_OR_RETURN(auto progress, app::ProgressOf(runtime, page.runs));
  app::RunInspector inspector(runtime);
  std::vector<RunRow> rows;
  rows.reserve(page.runs.size());
  for (const store::RunRecord& run : page.runs) {
    auto it = progress.find(run.id);
    rows.push_back({run, inspector.Inspect(run),
                    it == progress.end() ? std::optional<app::RunProgress>() : it->second});
  }
  return rows;
}

// One run: the fields of `mend pending --json` plus its times and progress (docs/runs.md).
json RunJson(const RunRow& row) {
  const store::RunRecord& run = row.run;
  const agent::RunModel& model = row.overview.origin.model;
  const std::optional<app::RunProgress>& p = row.progress;
  json j = {
      {"id", run.id},
      {"agent", run.agent},
      {"status", std::string(store::RunStatusName(run.status))},
      {"step", run.step},  // the old name of "checkpoint"
      {"checkpoint", run.step},
      {"attempts", run.attempts},
      {"quarantined", run.status == store::RunStatus::kQuarantined},
      {"next_attempt_at",
       run.next_attempt_at.has_value() ? json(FormatRfc3339(*run.next_attempt_at)) : json(nullptr)},
      {"waiting", app::NullIfEmpty(run.waiting)},
      {"last_error", app::RunErrorJson(run.last_error)},
      {"workspace", app::NullIfEmpty(row.overview.origin.workspace)},
      {"model", model.empty() ? json(nullptr)
                              : json{{"provider", model.provider},
                                     {"base_url", model.base_url},
                                     {"model", model.model}}},
      {"agent_changed", app::NullIfEmpty(row.overview.AgentChangedText())},
      {"created_at", FormatRfc3339(run.created_at)},
      {"updated_at", FormatRfc3339(run.updated_at)},
      {"steps", p ? json(p->steps) : json(nullptr)},
      {"usage", p ? json{{"input_tokens", p->input_tokens}, {"output_tokens", p->output_tokens}}
                  : json(nullptr)},
      {"cost_usd", p ? json(p->cost_usd) : json(nullptr)}};
  app::AddInterruptionJson(row.overview.interruption, j);
  return j;
}

json PageJson(const std::vector<RunRow>& rows, const store::PendingPage& page) {
  json runs = json::array();
  for (const RunRow& row : rows) runs.push_back(RunJson(row));
  return {
      {"runs", std::move(runs)},
      {"total", page.total},
      {"more", page.more},
      {"next", page.next.has_value() ? json(store::FormatRunCursor(*page.next)) : json(nullptr)}};
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
  const std::string filters = RunFilterFlags(query, kDefaultLimit);
  if (page.runs.empty()) {
    if (page.total > 0) {
      ctx.out << "no runs after that cursor (" << page.total << " in all)\n";
    } else if (query.statuses.empty() && query.agent.empty()) {
      ctx.out << "no runs\n";
    } else {
      ctx.out << "no runs match" << filters << "\n";
    }
    return;
  }
  std::vector<std::vector<std::string>> table = {
      {"ID", "AGENT", "STATUS", "STEPS", "COST", "CREATED", "UPDATED", "LAST ERROR"}};
  for (const RunRow& row : rows) table.push_back(Cells(row));
  PrintColumns(table, ctx.out);
  if (!page.next.has_value()) return;
  std::string command = "mend";
  if (!ctx.home.empty()) command += " --home " + ShellWord(ctx.home);
  command += " runs" + filters + " --before " + store::FormatRunCursor(*page.next);
  ctx.out << page.more << " more of " << page.total << "; next page: " << command << "\n";
}

Status ShowRuns(CliContext& ctx, const RunsArgs& args) {
  // Bad flags are usage errors before the store is opened.
  MEND_ASSIGN_OR_RETURN(store::PendingQuery query, QueryOf(args));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(store::PendingPage page, runtime->store->ListPending(query));
  MEND_ASSIGN_OR_RETURN(std::vector<RunRow> rows, RowsOf(*runtime, page));
  if (ctx.json) {
    ctx.out << DumpJson(PageJson(rows, page)) << "\n";
  } else {
    PrintTable(ctx, query, rows, page);
  }
  return OkStatus();
}

}  // namespace

void AddRunsCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<RunsArgs>();
  CLI::App* runs = app.add_subcommand(
      "runs", "every run, completed ones included, newest first, " + std::to_string(kDefaultLimit) +
                  " per page; the last line gives the command for the next page");
  runs->alias("list");
  runs->group("Commands");
  runs->add_option("--limit", args->limit,
                   "runs per page, 1 to " + std::to_string(store::kMaxPendingPageSize) +
                       " (default: " + std::to_string(kDefaultLimit) + ")")
      ->type_name("N");
  runs->add_option("--status", args->statuses,
                   "only runs in this status: " + std::string(kStatusChoices) +
                       "; repeat it or separate several by commas")
      ->delimiter(',')
      ->type_name("STATUS");
  runs->add_option("--agent", args->agent, "only runs of the agent with this name")
      ->type_name("NAME");
  runs->add_option("--before", args->before,
                   "the page after this cursor: what the previous page's last line (or the "
                   "\"next\" field of --json) gives")
      ->type_name("CURSOR");
  runs->callback([&ctx, args] { ctx.action = [&ctx, args] { return ShowRuns(ctx, *args); }; });
}

}  // namespace mend::cli
