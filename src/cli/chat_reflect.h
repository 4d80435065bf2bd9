#pragma once

#include <string_view>

#include "cli/command.h"
#include "mend/base/status.h"

namespace mend::app {
struct Runtime;
}  // namespace mend::app

// Chat's `/reflect ...` and `/config quality` slash commands. They print on ctx.out and return
// errors for the chat loop to show; a usage error (bad id, unknown subcommand) is marked with
// UsageError.
namespace mend::cli {

// `args` is what follows "/reflect": empty → status; "list", "failed", "drain" alone → that
// subcommand; "retry <id>" / "purge <id>" → that action; any other text of two or more words →
// a manual lesson. A single word that is no subcommand is refused as a likely typo.
Status RunReflectSlashCommand(CliContext& ctx, app::Runtime& runtime, std::string_view args);

// `/config quality`: the effective reflexion.* and quality.* keys with their values and origins,
// then the lesson queue's depth, WAL records and dead letter queue size.
Status ShowQualityConfig(CliContext& ctx, app::Runtime& runtime);

}  // namespace mend::cli
