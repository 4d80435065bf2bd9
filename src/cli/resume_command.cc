// `mend resume RUN_ID`: continues an interrupted or failed run from its newest checkpoint.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/command.h"
#include "mend/agent/agent.h"
#include "mend/app/runtime.h"

namespace mend::cli {
namespace {

Status ResumeRun(CliContext& ctx, const std::string& run_id) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgentForRun(*runtime, run_id));
  MEND_ASSIGN_OR_RETURN(agent::RunResult result, agent->Resume(run_id));
  return ReportRun(ctx, result);
}

}  // namespace

void AddResumeCommand(CLI::App& app, CliContext& ctx) {
  auto run_id = std::make_shared<std::string>();
  CLI::App* resume = app.add_subcommand("resume", "resume an interrupted or failed run");
  resume->group("Commands");
  resume->add_option("RUN_ID", *run_id, "the run")->required();
  AddProviderFlags(*resume, ctx);
  resume->callback(
      [&ctx, run_id] { ctx.action = [&ctx, run_id] { return ResumeRun(ctx, *run_id); }; });
}

}  // namespace mend::cli
