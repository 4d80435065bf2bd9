#pragma once

#include <cstdint>
#include <string>

#include "cli/command.h"
#include "mend/base/status.h"

namespace mend::app {
struct Runtime;
}  // namespace mend::app

// The `mend memory` subcommands that read or move whole facts (list, show, export, import); the
// others live in memory_command.cc, which registers them all.
namespace mend::cli::memory_cli {

struct ListArgs {
  bool all = false;
  std::string category;
  int64_t limit = 0;  // 0 = all
};

Status ListFacts(CliContext& ctx, app::Runtime& runtime, const ListArgs& args);
Status ShowFact(CliContext& ctx, app::Runtime& runtime, const std::string& id);
// FILE "-" = stdout.
Status ExportFacts(CliContext& ctx, app::Runtime& runtime, const std::string& file);
// FILE "-" = stdin.
Status ImportFacts(CliContext& ctx, app::Runtime& runtime, const std::string& file);

// Embeds facts that have no vector yet when an embeddings endpoint is configured, so commands that
// write facts leave them searchable by meaning. A failure only warns: the next long-lived command
// catches up.
void EmbedNewFacts(CliContext& ctx, app::Runtime& runtime);

}  // namespace mend::cli::memory_cli
