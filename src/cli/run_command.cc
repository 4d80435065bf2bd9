// `mend run AGENT_DIR [TASK] [--id ID] [--shadow] [--traceparent TP]`: starts a durable run and
// drives it until it completes, fails or waits for a person.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <istream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "cli/command.h"
#include "mend/agent/agent.h"
#include "mend/app/runtime.h"
#include "mend/base/utf8.h"
#include "mend/obs/trace.h"

namespace mend::cli {
namespace {

struct RunArgs {
  std::string agent_dir;
  std::string task;
  std::string id;
  std::string record;
  std::string traceparent;
};

// The task from the command line, else from piped stdin (never from a terminal: a user who forgot
// the task should get an error, not a silent wait).
Result<std::string> TaskOf(const CliContext& ctx, const RunArgs& args) {
  std::string task = args.task;
  if (task.empty() && ctx.input.in != nullptr && !ctx.input.is_terminal) {
    task.assign(std::istreambuf_iterator<char>(*ctx.input.in), std::istreambuf_iterator<char>());
  }
  task = std::string(Trim(task));
  if (task.empty()) {
    return UsageError("a task is needed: mend run AGENT_DIR TASK, or the task on stdin");
  }
  return task;
}

// The caller's trace: --traceparent (a bad value is a usage error), else the TRACEPARENT
// environment variable (a bad value is ignored with a warning: a stray variable must not stop
// runs), else none.
Result<std::optional<obs::SpanContext>> CallerTrace(CliContext& ctx, const RunArgs& args) {
  if (!args.traceparent.empty()) {
    Result<obs::SpanContext> parsed = obs::ParseTraceparent(args.traceparent);
    if (!parsed.ok()) return UsageError("--traceparent: " + std::string(parsed.status().message()));
    return std::optional<obs::SpanContext>(*parsed);
  }
  auto env = ctx.env.find("TRACEPARENT");
  if (env == ctx.env.end() || env->second.empty()) return std::optional<obs::SpanContext>();
  Result<obs::SpanContext> parsed = obs::ParseTraceparent(env->second);
  if (!parsed.ok()) {
    ctx.err << "mend: ignoring TRACEPARENT: " << parsed.status().message() << "\n";
    return std::optional<obs::SpanContext>();
  }
  return std::optional<obs::SpanContext>(*parsed);
}

Status RunAgent(CliContext& ctx, const RunArgs& args) {
  MEND_ASSIGN_OR_RETURN(std::string task, TaskOf(ctx, args));
  MEND_ASSIGN_OR_RETURN(std::optional<obs::SpanContext> caller, CallerTrace(ctx, args));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  runtime->record_path = args.record;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        app::OpenAgent(*runtime, AbsoluteAgentDir(args.agent_dir)));
  // Only this run's own lessons: a leftover job of another run must not take the model's
  // attention (or, with a scripted server, its replies) while this run makes its calls.
  app::StartBackgroundWork(*runtime, lessonq::JobsTaken::kOwn);
  agent::SendOptions options;
  options.run_id = args.id;
  options.trace_parent = caller;
  MEND_ASSIGN_OR_RETURN(agent::RunResult result, agent->Send(task, options));
  const Status reported = ReportRun(ctx, result);
  if (const Status recorded = runtime->RecordingStatus(); !recorded.ok()) {
    // The run's outcome is already printed; the lost recording is this command's failure.
    ctx.err << "mend: the run ended but its responses were not recorded: " << recorded.message()
            << "\n";
    ctx.error_reported = true;
    return recorded;
  }
  return reported;
}

}  // namespace

std::string AbsoluteAgentDir(const std::string& dir) {
  // The folder is recorded with the run so that `mend resume` works from any directory.
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(dir, error);
  return error ? dir : absolute.lexically_normal().string();
}

void AddRunCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "run an agent on a task, durably");
  run->group("Commands");
  run->add_option("AGENT_DIR", args->agent_dir, "the agent folder")->required();
  run->add_option("TASK", args->task, "the task (default: read from stdin when it is not a TTY)");
  run->add_option("--id", args->id, "the run's id (default: a new unique id)");
  run->add_option("--record", args->record,
                  "write every model response of the run to FILE in the scripted provider's "
                  "format (a cassette to replay with --provider scripted --script-file FILE)")
      ->type_name("FILE");
  run->add_option(
         "--traceparent", args->traceparent,
         "make the run's trace a child of this W3C trace context "
         "(00-<trace id>-<span id>-<flags>; default: the TRACEPARENT environment variable)")
      ->type_name("TRACEPARENT");
  AddProviderFlags(*run, ctx);
  AddConfigFlags(*run, ctx, "heal.shadow");
  run->callback([&ctx, args] { ctx.action = [&ctx, args] { return RunAgent(ctx, *args); }; });
}

}  // namespace mend::cli
