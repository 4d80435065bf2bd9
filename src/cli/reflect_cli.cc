// The lesson-queue operations shared by `mend reflect` and chat's `/reflect`: one implementation
// of each action and of its text and JSON output, so both surfaces always agree.
#include "cli/reflect_cli.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "mend/app/lesson_admin.h"
#include "mend/app/lessons.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/base/utf8.h"
#include "mend/lessonq/lesson_queue.h"

namespace mend::cli::reflect_cli {
namespace {

constexpr size_t kTaskPreviewChars = 100;
constexpr size_t kErrorPreviewChars = 100;
constexpr size_t kCompletionPreviewChars = 50;

constexpr char kCommandHint[] =
    "subcommands: mend reflect add TEXT | enqueue --task T --trigger TRIGGER | list | failed | "
    "retry ID | purge ID | drain";
constexpr char kChatHint[] =
    "subcommands: /reflect <lesson text> | list | failed | retry <id> | purge <id> | drain";

// The seed's layout: a header with the count, then two or three indented lines per job.
// `runtime` (null for dead letters) says why a pending job waits when this process would not
// take it up.
void PrintSection(std::ostream& out, std::string_view title, const std::vector<lessonq::Job>& jobs,
                  Time now, const app::Runtime* runtime) {
  out << title << " (" << jobs.size() << "):\n";
  for (const lessonq::Job& job : jobs) {
    out << "  " << job.id << " [trigger=" << job.request.trigger << " attempts=" << job.attempts
        << " age=" << app::LessonJobAgeSeconds(job, now) << "s]\n"
        << "    task: " << FirstLine(job.request.task, kTaskPreviewChars) << "\n";
    if (!job.last_error.empty()) {
      out << "    last error: " << FirstLine(job.last_error, kErrorPreviewChars) << "\n";
    }
    const std::string why = runtime == nullptr ? "" : app::WhyLessonWaits(*runtime, job);
    if (!why.empty()) out << "    " << why << "\n";
  }
}

// A dead-letter id must name a WAL file, so anything else is refused before it reaches a path.
Status CheckJobId(const std::string& id) {
  const Status valid = app::CheckLessonJobId(id);
  return valid.ok() ? valid : UsageError(valid);
}

}  // namespace

std::string FirstLine(std::string_view text, size_t max_chars) {
  const std::string_view line = Trim(text.substr(0, text.find('\n')));
  std::string cut = TruncateUtf8Chars(line, max_chars);
  if (cut.size() < Trim(text).size()) cut += "...";
  return cut;
}

std::string JobPreview(const lessonq::Job& job) {
  std::string preview = FirstLine(job.request.task, kCompletionPreviewChars);
  if (!job.last_error.empty()) {
    preview += " \u2014 " + FirstLine(job.last_error, kCompletionPreviewChars);
  }
  return preview;
}

std::string QueueSummary(const lessonq::QueueStats& stats, std::string_view backend) {
  return "lesson queue: depth " + std::to_string(stats.queue_depth) + ", " +
         std::to_string(stats.wal_records) +
         (backend == "postgres" ? " pending in PostgreSQL, " : " pending in the WAL, ") +
         std::to_string(stats.dlq_size) + " in the dead letter queue";
}

Status PrintStatus(CliContext& ctx, app::Runtime& runtime, Surface surface) {
  MEND_ASSIGN_OR_RETURN(lessonq::DurableLessonQueue * queue, app::LessonQueueOf(runtime));
  MEND_ASSIGN_OR_RETURN(lessonq::QueueStats stats, queue->Stats());
  if (ctx.json) {
    ctx.out << DumpJson(app::QueueStatsJson(stats)) << "\n";
    return OkStatus();
  }
  ctx.out << QueueSummary(stats, queue->backend()) << "\n"
          << (surface == Surface::kChat ? kChatHint : kCommandHint) << "\n";
  return OkStatus();
}

Status AddLesson(CliContext& ctx, app::Runtime& runtime, std::string_view text) {
  const std::string_view lesson = Trim(text);
  if (lesson.empty()) return UsageError("the lesson's text is empty");
  MEND_ASSIGN_OR_RETURN(std::string fact_id, app::AddManualLesson(runtime, lesson));
  if (ctx.json) {
    ctx.out << DumpJson({{"fact_id", fact_id}}) << "\n";
  } else {
    ctx.out << "stored lesson " << fact_id << "\n";
  }
  return OkStatus();
}

Status PrintJobs(CliContext& ctx, app::Runtime& runtime, Listing listing) {
  MEND_ASSIGN_OR_RETURN(lessonq::DurableLessonQueue * queue, app::LessonQueueOf(runtime));
  const bool with_pending = listing == Listing::kPendingAndDeadLetters;
  std::vector<lessonq::Job> pending;
  if (with_pending) {
    MEND_ASSIGN_OR_RETURN(pending, queue->Pending());
  }
  MEND_ASSIGN_OR_RETURN(std::vector<lessonq::Job> dead, queue->DeadLetters());
  const Time now = runtime.env.clock->Now();
  if (ctx.json) {
    nlohmann::json doc = {{"dlq", app::LessonJobsJson(dead, now)}};
    if (with_pending) doc["pending"] = app::PendingLessonJobsJson(runtime, pending, now);
    ctx.out << DumpJson(doc) << "\n";
    return OkStatus();
  }
  if (with_pending) PrintSection(ctx.out, "pending", pending, now, &runtime);
  PrintSection(ctx.out, "dead letter queue", dead, now, nullptr);
  return OkStatus();
}

Status RetryJob(CliContext& ctx, app::Runtime& runtime, const std::string& id) {
  MEND_RETURN_IF_ERROR(CheckJobId(id));
  MEND_RETURN_IF_ERROR(app::RetryDeadLetter(runtime, id));
  if (ctx.json) {
    ctx.out << DumpJson({{"id", id}, {"retried", true}}) << "\n";
  } else {
    ctx.out << "moved " << id << " back to the queue (attempts reset)\n";
  }
  return OkStatus();
}

Status PurgeJob(CliContext& ctx, app::Runtime& runtime, const std::string& id) {
  MEND_RETURN_IF_ERROR(CheckJobId(id));
  MEND_RETURN_IF_ERROR(app::PurgeDeadLetter(runtime, id));
  if (ctx.json) {
    ctx.out << DumpJson({{"id", id}, {"purged", true}}) << "\n";
  } else {
    ctx.out << "purged " << id << " from the dead letter queue\n";
  }
  return OkStatus();
}

Status Drain(CliContext& ctx, app::Runtime& runtime) {
  MEND_ASSIGN_OR_RETURN(lessonq::DrainReport report, app::DrainLessons(runtime));
  if (ctx.json) {
    ctx.out << DumpJson(app::DrainReportJson(report)) << "\n";
    return OkStatus();
  }
  ctx.out << "drained: " << report.succeeded << " stored, " << report.skipped << " skipped, "
          << report.retried << " to retry, " << report.dead_lettered << " dead-lettered, "
          << report.remaining << " still pending\n";
  return OkStatus();
}

}  // namespace mend::cli::reflect_cli
