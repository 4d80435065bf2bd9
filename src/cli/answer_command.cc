// `mend answer RUN_ID TEXT`: answers the question a run asked (ask_human); the run continues.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/command.h"
#include "mend/agent/agent.h"
#include "mend/app/runtime.h"

namespace mend::cli {
namespace {

struct AnswerArgs {
  std::string run_id;
  std::string text;
};

Status AnswerRun(CliContext& ctx, const AnswerArgs& args) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgentForRun(*runtime, args.run_id));
  MEND_ASSIGN_OR_RETURN(agent::RunResult result, agent->Answer(args.run_id, args.text));
  return ReportRun(ctx, result);
}

}  // namespace

void AddAnswerCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<AnswerArgs>();
  CLI::App* answer = app.add_subcommand("answer", "answer a question asked by a run");
  answer->group("Commands");
  answer->add_option("RUN_ID", args->run_id, "the waiting run")->required();
  answer->add_option("TEXT", args->text, "the answer")->required();
  AddProviderFlags(*answer, ctx);
  answer->callback([&ctx, args] { ctx.action = [&ctx, args] { return AnswerRun(ctx, *args); }; });
}

}  // namespace mend::cli
