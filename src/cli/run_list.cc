#include "cli/run_list.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/text_table.h"
#include "mend/app/runtime.h"

namespace mend::cli {

void AddRunListFlags(CLI::App& command, RunListArgs& args, const RunList& list) {
  command
      .add_option("--limit", args.limit,
                  "runs per page, 1 to " + std::to_string(store::kMaxPendingPageSize) +
                      " (default: " + std::to_string(kRunListDefaultLimit) + ")")
      ->type_name("N");
  command
      .add_option("--status", args.statuses,
                  "only runs in this status: " + std::string(list.status_choices) +
                      "; repeat it or separate several by commas")
      ->delimiter(',')
      ->type_name("STATUS");
  command.add_option("--agent", args.agent, "only runs of the agent with this name")
      ->type_name("NAME");
  command
      .add_option("--before", args.before,
                  "the page after this cursor: what the previous page's last line (or the "
                  "\"next\" field of --json) gives")
      ->type_name("CURSOR");
}

Result<store::PendingQuery> RunListQuery(const RunListArgs& args, const RunList& list) {
  store::PendingQuery query;
  query.scope = list.scope;
  if (args.limit < 1 || args.limit > static_cast<int64_t>(store::kMaxPendingPageSize)) {
    return UsageError("--limit must be between 1 and " +
                      std::to_string(store::kMaxPendingPageSize) + ", not " +
                      std::to_string(args.limit));
  }
  query.limit = static_cast<size_t>(args.limit);
  for (const std::string& name : args.statuses) {
    Result<store::RunStatus> status = store::ParseRunStatus(name);
    if (!status.ok() ||
        (*status == store::RunStatus::kCompleted && list.scope != store::RunScope::kAll)) {
      return UsageError("--status takes " + std::string(list.status_choices) + ", not \"" + name +
                        "\"");
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

Result<std::vector<ListedRow>> ListedRows(app::Runtime& runtime, const store::PendingPage& page) {
  MEND_ASSIGN_OR_RETURN(auto progress, app::ProgressOf(runtime, page.runs));
  app::RunInspector inspector(runtime);
  std::vector<ListedRow> rows;
  rows.reserve(page.runs.size());
  for (const store::RunRecord& run : page.runs) {
    auto it = progress.find(run.id);
    rows.push_back({run, inspector.Inspect(run),
                    it == progress.end() ? std::optional<app::RunProgress>() : it->second});
  }
  return rows;
}

bool PrintEmptyPage(const CliContext& ctx, const RunList& list, const store::PendingQuery& query,
                    const store::PendingPage& page) {
  if (!page.runs.empty()) return false;
  if (page.total > 0) {
    ctx.out << "no " << list.noun << " after that cursor (" << page.total << " in all)\n";
  } else if (query.statuses.empty() && query.agent.empty()) {
    ctx.out << "no " << list.noun << "\n";
  } else {
    ctx.out << "no " << list.noun << " match" << RunFilterFlags(query, kRunListDefaultLimit)
            << "\n";
  }
  return true;
}

void PrintNextPage(const CliContext& ctx, const RunList& list, const store::PendingQuery& query,
                   const store::PendingPage& page) {
  if (!page.next.has_value()) return;
  std::string command = "mend";
  if (!ctx.home.empty()) command += " --home " + ShellWord(ctx.home);
  command += " " + std::string(list.command) + RunFilterFlags(query, kRunListDefaultLimit) +
             " --before " + store::FormatRunCursor(*page.next);
  ctx.out << page.more << " more of " << page.total << "; next page: " << command << "\n";
}

}  // namespace mend::cli
