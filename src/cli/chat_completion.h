#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mend/lessonq/job.h"

// Tab completion of `mend chat` input: which words can finish the line typed so far. Pure, so it
// is tested without a terminal; chat_line_reader.cc connects it to libedit.
namespace mend::cli {

struct Completion {
  // Replaces the word under the cursor (the text after the line's last space).
  std::string text;
  // How the candidate is listed: the word itself, or for a dead letter
  // "<id>  <task preview> — <last error preview>".
  std::string display;

  bool operator==(const Completion&) const = default;
};

// The candidates for the word being typed at the end of `line_before_cursor`:
//   "/re"                  → the slash commands starting with "/re" (/reflect, /resume)
//   "/reflect f"           → the /reflect subcommands starting with "f" (failed)
//   "/reflect retry 9e"    → the ids in `dead_letters` starting with "9e", with their preview
//   "/reflect purge "      → every dead letter
//   "/memory ", "/config " → longterm, quality
// Empty when nothing fits (ordinary text, a finished subcommand, an unknown command). Candidates
// keep the order of the tables and of `dead_letters`. Thread-safe.
std::vector<Completion> CompleteChatLine(std::string_view line_before_cursor,
                                         const std::vector<lessonq::Job>& dead_letters);

}  // namespace mend::cli
