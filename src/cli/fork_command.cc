// `mend fork RUN_ID [--from-checkpoint N]`: a new run from a checkpoint of an existing one. The
// fork is not driven; `mend resume` continues it. No model is called, so no API key is needed.
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/command.h"
#include "mend/agent/agent.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"

namespace mend::cli {
namespace {

struct ForkArgs {
  std::string run_id;
  std::optional<int64_t> from_checkpoint;
};

Status ForkRun(CliContext& ctx, const ForkArgs& args) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgentForRun(*runtime, args.run_id, app::ProviderUse::kNoModel));
  MEND_ASSIGN_OR_RETURN(std::string fork_id, agent->Fork(args.run_id, args.from_checkpoint));
  MEND_ASSIGN_OR_RETURN(store::RunRecord fork, app::FindRun(*runtime, fork_id));
  if (ctx.json) {
    ctx.out << DumpJson({{"run_id", fork.id},
                         {"parent_id", fork.parent_id},
                         {"from_checkpoint", fork.parent_step},
                         {"from_step", fork.parent_step},  // the old name of from_checkpoint
                         {"status", std::string(store::RunStatusName(fork.status))}})
            << "\n";
    return OkStatus();
  }
  ctx.out << "forked " << args.run_id << " at checkpoint " << fork.parent_step << " as " << fork.id
          << "\ncontinue with: mend resume " << fork.id << "\n";
  return OkStatus();
}

}  // namespace

void AddForkCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<ForkArgs>();
  CLI::App* fork = app.add_subcommand("fork", "fork a run from one of its checkpoints");
  fork->group("Commands");
  fork->add_option("RUN_ID", args->run_id, "the run to fork")->required();
  fork->add_option("--from-checkpoint", args->from_checkpoint,
                   "the checkpoint, as mend show numbers them (default: the newest)")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  // The flag's old name, kept for scripts; hidden from --help (a step is a model turn).
  fork->add_option("--from-step", args->from_checkpoint)->check(CLI::PositiveNumber)->group("");
  fork->callback([&ctx, args] { ctx.action = [&ctx, args] { return ForkRun(ctx, *args); }; });
}

}  // namespace mend::cli
