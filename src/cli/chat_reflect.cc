// Chat's `/reflect` and `/config quality`: a thin parser over the operations `mend reflect` uses.
#include "cli/chat_reflect.h"

#include <ostream>
#include <string>
#include <vector>

#include "cli/reflect_cli.h"
#include "mend/app/runtime.h"
#include "mend/lessonq/lesson_queue.h"

namespace mend::cli {
namespace {

using reflect_cli::Listing;

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (true) {
    start = text.find_first_not_of(" \t", start);
    if (start == std::string_view::npos) break;
    size_t end = text.find_first_of(" \t", start);
    if (end == std::string_view::npos) end = text.size();
    words.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return words;
}

// A subcommand word alone on the line.
Status RunSingleWord(CliContext& ctx, app::Runtime& runtime, const std::string& word) {
  if (word == "list") return reflect_cli::PrintJobs(ctx, runtime, Listing::kPendingAndDeadLetters);
  if (word == "failed") return reflect_cli::PrintJobs(ctx, runtime, Listing::kDeadLettersOnly);
  if (word == "drain") return reflect_cli::Drain(ctx, runtime);
  if (word == "retry" || word == "purge") return UsageError("usage: /reflect " + word + " <id>");
  return UsageError("unknown /reflect subcommand '" + word +
                    "' (list, failed, drain, retry <id>, purge <id>; a lesson needs at least two "
                    "words)");
}

}  // namespace

Status RunReflectSlashCommand(CliContext& ctx, app::Runtime& runtime, std::string_view args) {
  const std::vector<std::string> words = Words(args);
  if (words.empty()) {
    return reflect_cli::PrintStatus(ctx, runtime, reflect_cli::Surface::kChat);
  }
  if (words.size() == 1) return RunSingleWord(ctx, runtime, words[0]);
  if (words.size() == 2 && words[0] == "retry") {
    return reflect_cli::RetryJob(ctx, runtime, words[1]);
  }
  if (words.size() == 2 && words[0] == "purge") {
    return reflect_cli::PurgeJob(ctx, runtime, words[1]);
  }
  return reflect_cli::AddLesson(ctx, runtime, args);
}

Status ShowQualityConfig(CliContext& ctx, app::Runtime& runtime) {
  if (runtime.lessons.queue == nullptr) {
    return runtime.lessons.unavailable;
  }
  MEND_ASSIGN_OR_RETURN(lessonq::QueueStats stats, runtime.lessons.queue->Stats());
  PrintConfigTable(runtime.config, {"reflexion.", "quality."}, ctx.out);
  ctx.out << reflect_cli::QueueSummary(stats, runtime.lessons.queue->backend()) << "\n";
  return OkStatus();
}

}  // namespace mend::cli
