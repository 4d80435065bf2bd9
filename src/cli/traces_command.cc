// `mend traces [RUN_ID]`: the runs recorded in observe.db, newest first, or the span tree of one
// run's trace (docs/traces_cli.md). Reads observe.db only, read-only, so it runs beside a live
// process.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cli/command.h"
#include "cli/traces_render.h"
#include "mend/base/home_layout.h"
#include "mend/base/json.h"
#include "mend/obs/span_store.h"

namespace mend::cli {
namespace {

constexpr int64_t kDefaultLimit = 20;

struct TracesArgs {
  std::string run_id;
  int64_t limit = kDefaultLimit;
  std::string before;
};

Result<obs::RunTraceQuery> QueryOf(const TracesArgs& args) {
  if (args.limit < 1 || args.limit > static_cast<int64_t>(obs::kMaxRunTracePageSize)) {
    return UsageError("--limit must be between 1 and " + std::to_string(obs::kMaxRunTracePageSize) +
                      ", not " + std::to_string(args.limit));
  }
  obs::RunTraceQuery query{.limit = static_cast<size_t>(args.limit)};
  if (!args.before.empty()) {
    Result<obs::RunTraceCursor> cursor = obs::ParseRunTraceCursor(args.before);
    if (!cursor.ok()) return UsageError("--before: " + std::string(cursor.status().message()));
    query.before = *std::move(cursor);
  }
  return query;
}

// Colour only for a terminal, and never when NO_COLOR is set (https://no-color.org).
traces::Color ColorFor(const CliContext& ctx) {
  const bool terminal = ctx.out.rdbuf() == std::cout.rdbuf() && isatty(STDOUT_FILENO) == 1;
  return terminal && !ctx.env.contains("NO_COLOR") ? traces::Color::kAnsi : traces::Color::kNone;
}

Status ListRuns(CliContext& ctx, obs::SpanStore* store, const obs::RunTraceQuery& query,
                const std::string& path) {
  obs::RunTracePage page;
  int64_t dropped = 0;
  if (store != nullptr) {
    MEND_ASSIGN_OR_RETURN(page, store->ListRuns(query));
    MEND_ASSIGN_OR_RETURN(dropped, store->dropped_spans());
  }
  if (ctx.json) {
    ctx.out << DumpJson(traces::RunListJson(page, dropped)) << "\n";
    return OkStatus();
  }
  if (store == nullptr) {
    ctx.out << "no traces yet: " << path << " does not exist (runs record their traces there)\n";
    return OkStatus();
  }
  if (page.runs.empty()) {
    ctx.out << (query.before.has_value() ? "no runs after that cursor\n" : "no traces yet\n");
  } else {
    traces::PrintRunList(page, dropped, ColorFor(ctx), ctx.out);
  }
  if (page.next.has_value()) {
    ctx.out << "next page: mend traces";
    if (query.limit != static_cast<size_t>(kDefaultLimit)) ctx.out << " --limit " << query.limit;
    ctx.out << " --before " << obs::FormatRunTraceCursor(*page.next) << "\n";
  }
  return OkStatus();
}

Status ShowTrace(CliContext& ctx, obs::SpanStore* store, const std::string& run_id) {
  const Status unknown = NotFoundError("no trace of run " + run_id + " in observe.db");
  if (store == nullptr) return unknown;
  Result<obs::RunTraceSummary> run = store->RunSummary(run_id);
  if (!run.ok() && run.status().code() == StatusCode::kNotFound) return unknown;
  MEND_RETURN_IF_ERROR(run.status());
  MEND_ASSIGN_OR_RETURN(std::vector<obs::SpanData> spans, store->SpansOfTrace(run->trace_id));
  MEND_ASSIGN_OR_RETURN(int64_t dropped, store->dropped_spans());
  if (ctx.json) {
    ctx.out << DumpJson(traces::TraceJson(*run, spans, dropped)) << "\n";
  } else {
    traces::PrintTrace(*run, spans, dropped, ColorFor(ctx), ctx.out);
  }
  return OkStatus();
}

Status RunTraces(CliContext& ctx, const TracesArgs& args) {
  MEND_ASSIGN_OR_RETURN(obs::RunTraceQuery query, QueryOf(args));
  MEND_ASSIGN_OR_RETURN(Config config, LoadCliConfig(ctx));
  const std::string path = home::ObserveFile(config.GetString("home"));
  Result<std::unique_ptr<obs::SpanStore>> store = obs::SpanStore::OpenReadOnly(path);
  if (!store.ok() && store.status().code() != StatusCode::kNotFound) return store.status();
  obs::SpanStore* opened = store.ok() ? store->get() : nullptr;
  if (!args.run_id.empty()) return ShowTrace(ctx, opened, args.run_id);
  return ListRuns(ctx, opened, query, path);
}

}  // namespace

Status PrintRunTrace(CliContext& ctx, const std::string& home, const std::string& run_id) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<obs::SpanStore> store,
                        obs::SpanStore::OpenReadOnly(home::ObserveFile(home)));
  const bool json = std::exchange(ctx.json, false);
  Status shown = ShowTrace(ctx, store.get(), run_id);
  ctx.json = json;
  return shown;
}

void AddTracesCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<TracesArgs>();
  CLI::App* traces = app.add_subcommand(
      "traces",
      "recorded runs from observe.db, newest first (model turns, tool calls, heal actions, cost); "
      "with RUN_ID, the span tree of that run's trace");
  traces->group("Commands");
  traces->add_option("RUN_ID", args->run_id, "show the spans of this run's trace");
  traces->add_option("--limit", args->limit,
                     "runs per page, 1 to " + std::to_string(obs::kMaxRunTracePageSize) +
                         " (default: " + std::to_string(kDefaultLimit) + ")");
  traces->add_option("--before", args->before,
                     "the page after this cursor: what the previous page's last line (or the "
                     "\"next\" field of --json) gives");
  traces->callback([&ctx, args] { ctx.action = [&ctx, args] { return RunTraces(ctx, *args); }; });
}

}  // namespace mend::cli
