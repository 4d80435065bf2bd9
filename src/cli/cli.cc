// The command table of `mend`: global options, the registered commands, parsing, and the single
// place where the outcome becomes an exit code.
#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <exception>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"

namespace mend::cli {
namespace {

constexpr char kDescription[] = "mend: a self-healing runtime for LLM agents";
constexpr char kFooter[] =
    "Exit codes: 0 success, 1 runtime failure, 2 usage error. Errors are one line on stderr;\n"
    "with --json the error is also printed on stdout as {\"error\":{...}}.";

// --json decides the error format, so it must be known even when parsing fails.
bool WantsJson(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--json") return true;
  }
  return false;
}

void ConfigureApp(CLI::App& app, CliContext& ctx) {
  app.add_option("--home", ctx.home, "state directory (default $MEND_HOME, else ~/.mend)");
  app.add_flag("--json", ctx.json, "machine-readable output on stdout");
  app.footer(kFooter);
  // Global options are accepted after the command name too: `mend config show --json`.
  app.fallthrough();
  // One command per invocation. Besides, CLI11 reads a word as a command of an enclosing level
  // until that level has all the commands it allows, so without this bound a task or query
  // containing a command's name (`mend memory search deploy run`) would start that command.
  app.require_subcommand(0, 1);
  AddConfigCommand(app, ctx);
  AddDemoCommand(app, ctx);
  AddInitCommand(app, ctx);
  AddDoctorCommand(app, ctx);
  AddRunCommand(app, ctx);
  AddChatCommand(app, ctx);
  AddPendingCommand(app, ctx);
  AddRunsCommand(app, ctx);
  AddShowCommand(app, ctx);
  AddResumeCommand(app, ctx);
  AddRecoverCommand(app, ctx);
  AddServeCommand(app, ctx);
  AddProxyCommand(app, ctx);
  AddMcpCommand(app, ctx);
  AddPruneCommand(app, ctx);
  AddImproveCommand(app, ctx);
  AddForkCommand(app, ctx);
  AddApproveCommand(app, ctx);
  AddAnswerCommand(app, ctx);
  AddMemoryCommand(app, ctx);
  AddReflectCommand(app, ctx);
  AddTracesCommand(app, ctx);
  AddMigrateCommand(app, ctx);
  AddBackupCommand(app, ctx);
  AddVersionCommand(app, ctx);
  AddToolReferenceCommand(app, ctx);
  AddCompletionCommands(app, ctx);
  AddPlannedCommands(app, ctx);
}

// Rewrites CLI11's parse errors into our one-line usage errors.
Status ParseErrorToStatus(const CLI::App& app, const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && app.get_subcommands().empty()) {
    const std::vector<std::string> extras = app.remaining();
    if (!extras.empty() && !extras.front().starts_with("-")) {
      return UsageError("unknown command '" + extras.front() + "'");
    }
  }
  // CLI11's messages start with a capital ("Option ... is required"); ours start in lower case,
  // except where the first word is a placeholder such as AGENT_DIR or RUN_ID.
  std::string message = e.what();
  if (message.size() > 1 && std::isupper(static_cast<unsigned char>(message[0])) &&
      std::islower(static_cast<unsigned char>(message[1]))) {
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  }
  return UsageError(message);
}

// The deepest selected command, for messages about a missing subcommand.
std::string SelectedCommandPath(CLI::App& app) {
  std::string path = "mend";
  CLI::App* current = &app;
  while (!current->get_subcommands().empty()) {
    current = current->get_subcommands().front();
    path += " " + current->get_name();
  }
  return path;
}

int Run(int argc, char** argv, CliContext& ctx) {
  ctx.json = WantsJson(argc, argv);
  std::unique_ptr<CLI::App> command_line = MakeCliApp(ctx);
  CLI::App& app = *command_line;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, ctx.out, ctx.err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, ctx.out, ctx.err);
  } catch (const CLI::ParseError& e) {
    // CLI11 records the commands it entered before the error, so the hint names the help of the
    // command whose arguments were wrong.
    ctx.command_path = SelectedCommandPath(app);
    return ReportError(ctx, ParseErrorToStatus(app, e));
  }
  ctx.command_path = SelectedCommandPath(app);
  if (!ctx.action) {
    if (app.get_subcommands().empty()) return ReportError(ctx, UsageError("no command given"));
    return ReportError(ctx, UsageError("'" + SelectedCommandPath(app) + "' needs a subcommand"));
  }
  const Status status = ctx.action();
  if (status.ok()) return 0;
  return ctx.error_reported ? ExitCodeFor(status) : ReportError(ctx, status);
}

}  // namespace

std::unique_ptr<CLI::App> MakeCliApp(CliContext& ctx) {
  auto app = std::make_unique<CLI::App>(kDescription, "mend");
  ConfigureApp(*app, ctx);
  return app;
}

int RunCli(int argc, char** argv, const std::map<std::string, std::string>& env, CliInput input,
           std::ostream& out, std::ostream& err, FileSystem& fs) {
  CliContext ctx{env, out, err, fs, input};
  // CLI11 and the standard library may throw (e.g. std::bad_alloc); nothing escapes the CLI.
  try {
    return Run(argc, argv, ctx);
  } catch (const std::exception& e) {
    return ReportError(ctx, InternalError(std::string("unexpected error: ") + e.what()));
  }
}

int RunCli(int argc, char** argv, const std::map<std::string, std::string>& env, std::ostream& out,
           std::ostream& err, FileSystem& fs) {
  return RunCli(argc, argv, env, CliInput{}, out, err, fs);
}

int RunCli(int argc, char** argv, const std::map<std::string, std::string>& env, std::ostream& out,
           std::ostream& err) {
  return RunCli(argc, argv, env, CliInput{}, out, err, *PosixFileSystem::Default());
}

int RunCli(int argc, char** argv, const std::map<std::string, std::string>& env, CliInput input,
           std::ostream& out, std::ostream& err) {
  return RunCli(argc, argv, env, input, out, err, *PosixFileSystem::Default());
}

}  // namespace mend::cli
