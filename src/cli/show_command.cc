// `mend show RUN_ID`: what a run did — status, agent, workspace, model, usage, last error, the
// transcript with hook replacements and denials, and the checkpoints it can be forked from.
// Reads the store only, so it needs no model configuration or API key.
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.h"
#include "cli/show_render.h"
#include "mend/agent/run_view.h"
#include "mend/app/run_inspector.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"

namespace mend::cli {
namespace {

struct ShowArgs {
  std::string run_id;
  bool full = false;
};

Status ShowRun(CliContext& ctx, const ShowArgs& args) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  Result<agent::RunView> view = agent::ReadRunView(*runtime->store, args.run_id);
  if (!view.ok() && view.status().code() == StatusCode::kNotFound) {
    return NotFoundError("no run named " + args.run_id);
  }
  MEND_RETURN_IF_ERROR(view.status());
  app::RunInspector inspector(*runtime);
  const app::RunOverview overview = inspector.Inspect(view->run);
  if (ctx.json) {
    ctx.out << DumpJson(show::RunViewJson(*view, overview)) << "\n";
  } else {
    show::PrintRunView(*view, overview, args.full ? show::Detail::kFull : show::Detail::kClipped,
                       ctx.out);
  }
  return OkStatus();
}

}  // namespace

void AddShowCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<ShowArgs>();
  CLI::App* show = app.add_subcommand(
      "show",
      "one run: status, agent, workspace, model, usage, last error, transcript and checkpoints");
  show->group("Commands");
  show->add_option("RUN_ID", args->run_id, "the run")->required();
  show->add_flag("--full", args->full,
                 "print every message in full (default: long messages are cut to " +
                     std::to_string(show::kClipBytes) + " bytes; --json always has everything)");
  show->callback([&ctx, args] { ctx.action = [&ctx, args] { return ShowRun(ctx, *args); }; });
}

}  // namespace mend::cli
