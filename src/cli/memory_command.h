#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mend/base/clock.h"
#include "mend/base/status.h"
#include "mend/memory/backfill.h"

namespace mend::app {
struct Runtime;
}  // namespace mend::app

// The `mend memory` subcommands that read or move whole facts (list, show, export, import) and
// those about vectors (embed, stats, memory_embed_command.cc); the others live in
// memory_command.cc, which registers them all.
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

// What a command that wrote facts did about their vectors (memory_embed_command.cc).
struct EmbedSummary {
  bool attempted = false;    // an embedder is configured
  int64_t embedded = 0;      // facts of `ids` given a vector for every part
  int64_t not_embedded = 0;  // facts of `ids` still missing one
};

// With an embedder configured, embeds every missing part of the facts `ids` (the facts a command
// just wrote), in batches with retries (memory::EmbedMissing), showing progress when stderr is a
// terminal. When the endpoint or the store fails, the facts stay stored and one warning line on
// stderr says how many facts lack vectors, why, and that `mend memory embed` completes them.
EmbedSummary EmbedWritten(CliContext& ctx, app::Runtime& runtime,
                          const std::vector<std::string>& ids);

// `mend memory embed [--model M]`: every missing vector for M (default memory.embeddings.model).
Status EmbedFacts(CliContext& ctx, app::Runtime& runtime, const std::string& model);
// `mend memory stats`: facts by category and the coverage of each embedding model.
Status ShowStats(CliContext& ctx, app::Runtime& runtime);
// One warning line on stderr when the configured embedding model does not cover every fact.
void WarnIfUncovered(CliContext& ctx, app::Runtime& runtime);

// The progress line of embedding: "embedding: 640/3041 facts, 1204 texts/s".
std::string EmbedProgressText(const memory::EmbedProgress& progress, Duration elapsed);

}  // namespace mend::cli::memory_cli
