// Tab completion for chat lines: slash commands, their subcommands, and the live dead-letter ids
// after `/reflect retry` and `/reflect purge`.
#include "cli/chat_completion.h"

#include <string>
#include <vector>

#include "cli/reflect_cli.h"

namespace mend::cli {
namespace {

constexpr const char* kSlashCommands[] = {"/reflect", "/memory", "/config", "/pending",
                                          "/resume",  "/help",   "/quit"};
constexpr const char* kReflectSubcommands[] = {"list", "failed", "drain", "retry", "purge"};
constexpr const char* kMemorySubcommands[] = {"longterm"};
constexpr const char* kConfigSubcommands[] = {"quality"};

// The words before the one being typed, and that word (empty after a trailing space).
struct SplitLine {
  std::vector<std::string_view> done;
  std::string_view current;
};

SplitLine Split(std::string_view line) {
  SplitLine split;
  size_t start = 0;
  while (start < line.size()) {
    const size_t space = line.find(' ', start);
    if (space == std::string_view::npos) {
      split.current = line.substr(start);
      break;
    }
    if (space > start) split.done.push_back(line.substr(start, space - start));
    start = space + 1;
  }
  return split;
}

template <size_t N>
std::vector<Completion> Matching(const char* const (&words)[N], std::string_view prefix) {
  std::vector<Completion> out;
  for (const char* word : words) {
    const std::string_view candidate = word;
    if (candidate.starts_with(prefix)) out.push_back({std::string(word), std::string(word)});
  }
  return out;
}

std::vector<Completion> DeadLetterIds(const std::vector<lessonq::Job>& dead_letters,
                                      std::string_view prefix) {
  std::vector<Completion> out;
  for (const lessonq::Job& job : dead_letters) {
    if (!job.id.starts_with(prefix)) continue;
    out.push_back({job.id, job.id + "  " + reflect_cli::JobPreview(job)});
  }
  return out;
}

std::vector<Completion> CompleteReflect(const SplitLine& line,
                                        const std::vector<lessonq::Job>& dead_letters) {
  if (line.done.size() == 1) return Matching(kReflectSubcommands, line.current);
  const bool takes_id = line.done[1] == "retry" || line.done[1] == "purge";
  if (line.done.size() == 2 && takes_id) return DeadLetterIds(dead_letters, line.current);
  return {};
}

}  // namespace

std::vector<Completion> CompleteChatLine(std::string_view line_before_cursor,
                                         const std::vector<lessonq::Job>& dead_letters) {
  const SplitLine line = Split(line_before_cursor);
  if (line.done.empty()) {
    if (!line.current.starts_with("/")) return {};
    return Matching(kSlashCommands, line.current);
  }
  const std::string_view command = line.done[0];
  if (command == "/reflect") return CompleteReflect(line, dead_letters);
  if (line.done.size() != 1) return {};
  if (command == "/memory") return Matching(kMemorySubcommands, line.current);
  if (command == "/config") return Matching(kConfigSubcommands, line.current);
  return {};
}

}  // namespace mend::cli
