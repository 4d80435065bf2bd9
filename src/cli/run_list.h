#pragma once

// What `mend pending` and `mend runs` share: the filter flags, the store query they make, a page's
// runs with what their metadata, agent folders and checkpoints say, and the lines around the
// table (docs/runs.md).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "mend/app/run_inspector.h"
#include "mend/app/run_progress.h"
#include "mend/store/run_page.h"

namespace CLI {
class App;
}  // namespace CLI

namespace mend::cli {

// One listing command.
struct RunList {
  std::string_view command;         // "pending", in the next-page command line
  std::string_view noun;            // "unfinished runs", in "no unfinished runs match ..."
  store::RunScope scope;            // kAll lists completed runs too
  std::string_view status_choices;  // for --help and the error of a bad --status
};

inline constexpr int64_t kRunListDefaultLimit = 20;

// The flags as given; RunListQuery checks them.
struct RunListArgs {
  int64_t limit = kRunListDefaultLimit;
  std::vector<std::string> statuses;  // repeated and/or comma-separated
  std::string agent;
  std::string before;  // a cursor from a previous page
};

// Adds --limit, --status, --agent and --before to `command`, stored in `args`.
void AddRunListFlags(CLI::App& command, RunListArgs& args, const RunList& list);

// The store query of `args`; a bad flag is a usage error. `completed` is a status only when the
// list's scope is kAll.
Result<store::PendingQuery> RunListQuery(const RunListArgs& args, const RunList& list);

// A run of the page with what its metadata and agent folder say about it.
struct ListedRow {
  const store::RunRecord& run;
  app::RunOverview overview;
  std::optional<app::RunProgress> progress;  // unset when the run's state cannot be read
};

// The page's runs with their agent folders' news and their progress, read from the newest
// checkpoints in one store query. A run without a checkpoint has made no progress; a state that
// cannot be read leaves the run's progress unknown and the rest of the page as it is.
Result<std::vector<ListedRow>> ListedRows(app::Runtime& runtime, const store::PendingPage& page);

// For an empty page: prints why it is empty ("no runs", "no runs match --status failed", "no runs
// after that cursor (7 in all)") and returns true. Otherwise prints nothing and returns false.
bool PrintEmptyPage(const CliContext& ctx, const RunList& list, const store::PendingQuery& query,
                    const store::PendingPage& page);

// After the table: when there is another page, "<more> more of <total>; next page: <command>".
void PrintNextPage(const CliContext& ctx, const RunList& list, const store::PendingQuery& query,
                   const store::PendingPage& page);

}  // namespace mend::cli
