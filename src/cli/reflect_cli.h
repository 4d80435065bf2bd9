#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "mend/base/status.h"
#include "mend/lessonq/job.h"
#include "mend/lessonq/lesson_queue.h"

namespace mend::app {
struct Runtime;
}  // namespace mend::app

// The lesson-queue operations behind both `mend reflect ...` and chat's `/reflect ...`: each one
// calls the runtime's queue (or the manual-lesson path) and prints its outcome on ctx.out, as JSON
// with --json (docs/reflect_cli.md shapes) or as text. Errors come back as Status for the caller to
// report; usage errors are marked with UsageError. Not thread-safe (they write to the context's
// streams).
namespace mend::cli::reflect_cli {

// Where an operation was invoked from; only the wording of hints differs.
enum class Surface { kCommandLine, kChat };

// "lesson queue: depth N, N pending in the WAL, N in the dead letter queue" ("in PostgreSQL" for
// the PostgreSQL backend).
std::string QueueSummary(const lessonq::QueueStats& stats, std::string_view backend);

// Queue depth, WAL records and DLQ size, then a one-line hint naming the subcommands.
Status PrintStatus(CliContext& ctx, app::Runtime& runtime, Surface surface);

// Stores `text` as a manual lesson (no model, no queue) and prints the fact id. Usage error for
// text that is empty after trimming.
Status AddLesson(CliContext& ctx, app::Runtime& runtime, std::string_view text);

enum class Listing {
  kPendingAndDeadLetters,  // `list`
  kDeadLettersOnly,        // `failed`
};
Status PrintJobs(CliContext& ctx, app::Runtime& runtime, Listing listing);

// Operator actions on one dead letter. A malformed id is a usage error; an id with no dead
// letter is kNotFound "no dead-lettered lesson job <id>".
Status RetryJob(CliContext& ctx, app::Runtime& runtime, const std::string& id);
Status PurgeJob(CliContext& ctx, app::Runtime& runtime, const std::string& id);

// Makes this process the owner of the lesson workers unless it is already (kUnavailable with an
// explanation when another process owns them), processes every due job within
// reflexion.queue.drain_timeout and prints the DrainReport. The workers keep running; the caller
// stops them when it should.
Status Drain(CliContext& ctx, app::Runtime& runtime);

// The first line of `text`, cut to `max_chars` code points, with "..." when anything was cut.
std::string FirstLine(std::string_view text, size_t max_chars);

// "<task preview> — <last error preview>" (or just the task when the job has no error): how a
// dead letter is described next to its id in listings and completions.
std::string JobPreview(const lessonq::Job& job);

}  // namespace mend::cli::reflect_cli
