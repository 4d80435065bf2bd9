// The commands of the CLI surface (docs/cli.md) that this build does not implement yet. They are
// registered so that `mend --help` shows the whole surface honestly, marked as not implemented,
// and so that scripts get a clear error and a stable exit code (1) instead of a usage error.
#include <CLI/CLI.hpp>
#include <array>
#include <string>

#include "cli/command.h"

namespace mend::cli {
namespace {

struct Planned {
  const char* name;
  const char* description;
};

// Every command of docs/cli.md is implemented in this build; a command added to the surface
// before its code goes here.
constexpr std::array<Planned, 0> kPlanned = {};

}  // namespace

void AddPlannedCommands(CLI::App& app, CliContext& ctx) {
  for (const Planned& planned : kPlanned) {
    CLI::App* command = app.add_subcommand(planned.name, planned.description);
    command->group("Not yet implemented");
    command->footer("This command is not implemented yet in this build; running it exits 1.");
    // Whatever follows is left unparsed, so any arguments meant for the future command reach the
    // "not implemented" error rather than a usage error.
    // (--json there was already seen by RunCli's scan of the arguments.)
    command->fallthrough(false);
    command->prefix_command();
    const std::string name = planned.name;
    command->callback([&ctx, name] {
      ctx.action = [name] { return UnimplementedError(name + " is not implemented yet"); };
    });
  }
}

}  // namespace mend::cli
