#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.h"
#include "mend/base/config.h"
#include "mend/base/file_system.h"
#include "mend/base/result.h"

namespace mend::agent {
struct RunResult;
}  // namespace mend::agent
namespace mend::app {
struct Runtime;
}  // namespace mend::app

namespace CLI {
class App;
}  // namespace CLI

namespace mend::cli {

// What every command sees: the streams, the environment, the filesystem and the global options.
// Commands register themselves on the CLI11 application and, when selected, store the action to
// run in `action`; RunCli runs it after parsing and maps its Status to the exit code.
struct CliContext {
  const std::map<std::string, std::string>& env;
  std::ostream& out;
  std::ostream& err;
  FileSystem& fs;
  CliInput input;

  std::string home;   // --home; empty when not given
  bool json = false;  // --json
  // Configuration flags given on the command line, by configuration key ("provider.model").
  std::map<std::string, std::string> config_flags;
  std::function<Status()> action;
  // Set by a command that already reported its failure (e.g. a failed run's JSON and its one
  // line on stderr): RunCli then only maps the Status to the exit code.
  bool error_reported = false;
  // The command line's deepest selected command ("mend memory search"), set by RunCli once the
  // arguments are parsed (or failed to parse): a usage error points to its --help.
  std::string command_path = "mend";
};

// The `mend` command line as RunCli parses it: the global options and every command registered on
// one CLI11 application, whose callbacks store their action in `ctx`. Nothing runs until the
// application parses arguments; tests walk it to compare docs/cli.md with the real flags.
std::unique_ptr<CLI::App> MakeCliApp(CliContext& ctx);

// Adds the flags of every configuration key under "provider." that has a flag (--provider,
// --model, --base-url, --timeout, ...) to `command`, storing given values in ctx.config_flags.
// For commands that talk to a model, and for `config show`.
void AddProviderFlags(CLI::App& command, CliContext& ctx);
// The same for every configuration key whose name starts with `prefix` and that has a flag
// ("recover." gives --interval, --max-attempts, --retry-with-diagnosis). Bool keys are switches.
void AddConfigFlags(CLI::App& command, CliContext& ctx, std::string_view prefix);

// The effective configuration for this invocation: flags (including --home), the environment and
// $MEND_HOME/config.toml. An invalid configuration is a usage error (see UsageError).
Result<Config> LoadCliConfig(const CliContext& ctx);

// The runtime for commands that run agents or read runs: the configuration (LoadCliConfig), the
// process's clock and randomness, and ctx.fs. `holder_prefix` starts this process's lease holder id
// (`mend recover --replica ID` names the replica).
Result<std::unique_ptr<app::Runtime>> OpenCliRuntime(const CliContext& ctx,
                                                     const std::string& holder_prefix = "mend");

// An action (for ctx.action) that opens the runtime with OpenCliRuntime and calls fn(runtime).
// Instantiate it where app::Runtime is a complete type (mend/app/runtime.h).
template <typename Fn>
std::function<Status()> WithRuntime(CliContext& ctx, Fn fn) {
  return [&ctx, fn] {
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
    return fn(*runtime);
  };
}

// Prints the outcome of a run: with --json the `run` shape of docs/cli.md (plus "waiting" and
// "question"); otherwise the output on stdout and a summary on stderr, or what the run waits for
// and how to continue. A failed run is reported here (JSON on stdout, one line on stderr) and
// returned as an error with ctx.error_reported set, so the exit code is 1.
Status ReportRun(CliContext& ctx, const agent::RunResult& result);

// The unfinished runs of `runtime`'s store: the `pending` shape with --json, else a table.
Status PrintPending(CliContext& ctx, app::Runtime& runtime);

// `dir` made absolute (against the current directory) and normal, as runs record it.
std::string AbsoluteAgentDir(const std::string& dir);

// Adds --override-recorded to a long-lived command (`mend recover`, `mend serve`); `*override`
// becomes true when it is given.
void AddOverrideRecordedFlag(CLI::App& command, bool* override);
// The runtime of a long-lived command: its provider flags are defaults for new runs, and switch
// the runs it continues only with --override-recorded (docs/heal.md).
void SetProviderFlagScope(app::Runtime& runtime, bool override_recorded);

// Marks `status` as a usage error: exit code 2 instead of 1.
Status UsageError(const Status& status);
Status UsageError(std::string_view message);

// 0 for OK, 2 for input the user must fix (a usage error, invalid configuration, an invalid agent
// folder), 1 otherwise. The one place that maps Status to an exit code.
int ExitCodeFor(const Status& status);

// Writes "mend: <message>" to ctx.err (a usage error with a hint to run '<command> --help', the
// command being ctx.command_path) and, with --json, {"error":{"code","message","class",
// "retryable"}} to ctx.out. Returns the exit code.
int ReportError(const CliContext& ctx, const Status& status);

// The commands; each adds its subcommand(s) to `app`.
void AddConfigCommand(CLI::App& app, CliContext& ctx);
void AddDemoCommand(CLI::App& app, CliContext& ctx);
void AddDoctorCommand(CLI::App& app, CliContext& ctx);
void AddInitCommand(CLI::App& app, CliContext& ctx);
// The commands of docs/cli.md not built yet: listed in --help under "Not yet implemented";
// running one fails with kUnimplemented (exit 1).
void AddPlannedCommands(CLI::App& app, CliContext& ctx);
void AddRunCommand(CLI::App& app, CliContext& ctx);
void AddPendingCommand(CLI::App& app, CliContext& ctx);
void AddRunsCommand(CLI::App& app, CliContext& ctx);
void AddShowCommand(CLI::App& app, CliContext& ctx);
void AddRecoverCommand(CLI::App& app, CliContext& ctx);
void AddServeCommand(CLI::App& app, CliContext& ctx);
void AddProxyCommand(CLI::App& app, CliContext& ctx);
void AddMcpCommand(CLI::App& app, CliContext& ctx);
void AddPruneCommand(CLI::App& app, CliContext& ctx);
void AddImproveCommand(CLI::App& app, CliContext& ctx);
void AddResumeCommand(CLI::App& app, CliContext& ctx);
void AddForkCommand(CLI::App& app, CliContext& ctx);
void AddApproveCommand(CLI::App& app, CliContext& ctx);
void AddAnswerCommand(CLI::App& app, CliContext& ctx);
void AddChatCommand(CLI::App& app, CliContext& ctx);
void AddMemoryCommand(CLI::App& app, CliContext& ctx);
void AddMigrateCommand(CLI::App& app, CliContext& ctx);
void AddReflectCommand(CLI::App& app, CliContext& ctx);
void AddTracesCommand(CLI::App& app, CliContext& ctx);
// `mend version` and the top level's --version, -V and --verbose (version_command.cc).
void AddVersionCommand(CLI::App& app, CliContext& ctx);
// `mend backup DEST_DIR` (backup_command.cc).
void AddBackupCommand(CLI::App& app, CliContext& ctx);
// `mend completion bash|zsh` and `mend manpages DIR`, generated from `app`'s own commands and
// flags (completion_command.cc).
void AddCompletionCommands(CLI::App& app, CliContext& ctx);
// The completion script for `shell` ("bash" or "zsh") of the command line `root`.
std::string CompletionScript(const CLI::App& root, const std::string& shell);
// `mend tool-reference`, left out of --help: prints docs/tools.md (tool_reference.h).
void AddToolReferenceCommand(CLI::App& app, CliContext& ctx);
// Prints the span tree of `run_id`'s trace from <home>/observe.db as `mend traces RUN_ID` does
// (text, colour on a terminal). kNotFound when there is no observe.db or no trace of the run.
Status PrintRunTrace(CliContext& ctx, const std::string& home, const std::string& run_id);

// The configuration as a KEY / VALUE / SOURCE table (secrets masked), keeping only the keys that
// start with one of `prefixes` (every key when `prefixes` is empty). `mend config show` and chat's
// `/config quality` print it.
void PrintConfigTable(const Config& config, const std::vector<std::string_view>& prefixes,
                      std::ostream& out);

}  // namespace mend::cli
