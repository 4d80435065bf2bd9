// `mend approve RUN_ID [--deny [--reason R]]`: answers a run waiting for approval of a tool call;
// the run then continues.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/command.h"
#include "mend/agent/agent.h"
#include "mend/app/runtime.h"

namespace mend::cli {
namespace {

constexpr char kDefaultDenyReason[] = "a person denied this tool call";

struct ApproveArgs {
  std::string run_id;
  bool deny = false;
  std::string reason;
};

Status ApproveRun(CliContext& ctx, const ApproveArgs& args) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgentForRun(*runtime, args.run_id));
  if (!args.deny) {
    MEND_ASSIGN_OR_RETURN(agent::RunResult result, agent->Approve(args.run_id));
    return ReportRun(ctx, result);
  }
  const std::string reason = args.reason.empty() ? kDefaultDenyReason : args.reason;
  MEND_ASSIGN_OR_RETURN(agent::RunResult result, agent->Deny(args.run_id, reason));
  return ReportRun(ctx, result);
}

}  // namespace

void AddApproveCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<ApproveArgs>();
  CLI::App* approve =
      app.add_subcommand("approve", "approve (or deny) a tool call waiting for approval");
  approve->group("Commands");
  approve->add_option("RUN_ID", args->run_id, "the waiting run")->required();
  CLI::Option* deny = approve->add_flag("--deny", args->deny, "refuse the tool call");
  approve->add_option("--reason", args->reason, "why, for the model (with --deny)")->needs(deny);
  AddProviderFlags(*approve, ctx);
  approve->callback([&ctx, args] { ctx.action = [&ctx, args] { return ApproveRun(ctx, *args); }; });
}

}  // namespace mend::cli
