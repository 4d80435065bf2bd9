#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "mend/agent/agent.h"
#include "mend/base/clock.h"
#include "mend/base/config.h"
#include "mend/base/result.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/lessonq/postgres_queue.h"
#include "mend/reflexion/generator.h"
#include "mend/reflexion/hooks.h"
#include "mend/reflexion/lesson_sink.h"

namespace mend::app {

struct Runtime;

// Reflexion's parts in a runtime (DESIGN.md §8), built by OpenRuntime from the reflexion.* keys.
struct Lessons {
  // Open so every command can enqueue and inspect: the WAL queue (<reflexion.queue.base_dir>/wal
  // and dlq) or, with reflexion.queue.backend = postgres, the PostgreSQL queue at store.url. Only
  // a process that called StartLessonWorkers processes jobs. Null when the queue cannot be
  // opened: `unavailable` then says why, reflexion's hook is not registered, and the rest of mend
  // works on.
  std::unique_ptr<lessonq::DurableLessonQueue> queue;
  Status unavailable;
  std::unique_ptr<reflexion::LessonGenerator> generator;  // on the runtime's provider
  std::unique_ptr<reflexion::LessonSink> sink;            // fact store + reflexion/LESSONS.md
  // Legacy mode (reflexion.queue.enabled = false): the hook hands requests to this instead.
  std::unique_ptr<lessonq::DetachedLessonRunner> detached;
  // Where the reflexion hook sends requests: `queue` or `detached`.
  lessonq::LessonEnqueuer* enqueuer = nullptr;
  reflexion::TriggerOptions triggers;
};

// The PostgreSQL queue's options from the configuration: store.url, which must be a postgres://
// URL (kInvalidArgument saying so otherwise). Used with reflexion.queue.backend = postgres and by
// `mend reflect migrate`.
Result<lessonq::PgQueueOptions> PostgresQueueOptions(const Config& config);

// The processor lesson workers run: generate with the runtime's provider, persist through the sink.
lessonq::Processor LessonProcessor(Runtime& runtime);

// Makes this process the owner of the lesson workers and starts them (replaying the WAL).
// kUnavailable when another process owns them (that process picks up this one's records).
// Long-lived commands call it through StartBackgroundWork; `mend reflect drain` directly.
Status StartLessonWorkers(Runtime& runtime);

// Stops the lesson workers, waiting up to `timeout` (30 s by default at exit) for jobs in flight;
// unfinished jobs stay in the WAL. No-op when this process does not own them.
Status StopLessonWorkers(Runtime& runtime, Duration timeout);

// `mend reflect add` / `/reflect <text>`: stores a manual lesson directly (no model, no queue).
// The fact id. kInvalidArgument for empty text.
Result<std::string> AddManualLesson(Runtime& runtime, std::string_view text);

// Registers the post-run hooks in DESIGN.md order — verify → refine → reflexion — as the
// quality.* and reflexion.* keys enable them (OpenAgent calls it).
void AddQualityHooks(Runtime& runtime, agent::Agent& agent);

}  // namespace mend::app
