// `mend pending`: every unfinished run with its step, attempts and last error. Reads the store
// only, so it needs no model configuration or API key.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"

namespace mend::cli {
namespace {

nlohmann::json ErrorJson(const std::optional<store::RunError>& error) {
  if (!error.has_value()) return nullptr;
  return {{"code", error->code},
          {"message", error->message},
          {"class", error->error_class},
          {"retryable", error->retryable}};
}

nlohmann::json PendingJson(const std::vector<store::RunRecord>& runs) {
  nlohmann::json list = nlohmann::json::array();
  for (const store::RunRecord& run : runs) {
    list.push_back(
        {{"id", run.id},
         {"agent", run.agent},
         {"status", std::string(store::RunStatusName(run.status))},
         {"step", run.step},
         {"attempts", run.attempts},
         {"quarantined", run.status == store::RunStatus::kQuarantined},
         {"next_attempt_at", run.next_attempt_at.has_value()
                                 ? nlohmann::json(FormatRfc3339(*run.next_attempt_at))
                                 : nlohmann::json(nullptr)},
         {"waiting", run.waiting.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.waiting)},
         {"last_error", ErrorJson(run.last_error)}});
  }
  return {{"runs", list}};
}

std::string StatusText(const store::RunRecord& run) {
  std::string text(store::RunStatusName(run.status));
  if (!run.waiting.empty()) text += " (" + run.waiting + ")";
  return text;
}

void PrintTable(const std::vector<store::RunRecord>& runs, std::ostream& out) {
  if (runs.empty()) {
    out << "no unfinished runs\n";
    return;
  }
  size_t id_width = 2, agent_width = 5, status_width = 6;
  for (const store::RunRecord& run : runs) {
    id_width = std::max(id_width, run.id.size());
    agent_width = std::max(agent_width, run.agent.size());
    status_width = std::max(status_width, StatusText(run).size());
  }
  auto row = [&](const std::string& id, const std::string& agent, const std::string& status,
                 const std::string& step, const std::string& attempts, const std::string& next,
                 const std::string& error) {
    out << std::left << std::setw(static_cast<int>(id_width + 2)) << id
        << std::setw(static_cast<int>(agent_width + 2)) << agent
        << std::setw(static_cast<int>(status_width + 2)) << status << std::setw(6) << step
        << std::setw(10) << attempts << std::setw(22) << next << error << "\n";
  };
  row("ID", "AGENT", "STATUS", "STEP", "ATTEMPTS", "NEXT ATTEMPT", "LAST ERROR");
  for (const store::RunRecord& run : runs) {
    const std::string error = run.last_error.has_value() ? run.last_error->message : "";
    // Quarantined runs are not tried again by recovery (`mend resume` still runs them).
    std::string next = "-";
    if (run.status == store::RunStatus::kQuarantined) {
      next = "never (quarantined)";
    } else if (run.next_attempt_at.has_value()) {
      next = FormatRfc3339Seconds(*run.next_attempt_at);
    }
    row(run.id, run.agent, StatusText(run), std::to_string(run.step), std::to_string(run.attempts),
        next, error);
  }
}

Status ShowPending(CliContext& ctx) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  return PrintPending(ctx, *runtime);
}

}  // namespace

Status PrintPending(CliContext& ctx, app::Runtime& runtime) {
  store::ListOptions options;
  options.unfinished_only = true;
  MEND_ASSIGN_OR_RETURN(std::vector<store::RunRecord> runs, runtime.store->ListRuns(options));
  if (ctx.json) {
    ctx.out << DumpJson(PendingJson(runs)) << "\n";
  } else {
    PrintTable(runs, ctx.out);
  }
  return OkStatus();
}

void AddPendingCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* pending = app.add_subcommand("pending", "unfinished runs");
  pending->group("Commands");
  pending->callback([&ctx] { ctx.action = [&ctx] { return ShowPending(ctx); }; });
}

}  // namespace mend::cli
