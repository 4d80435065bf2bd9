#pragma once

// Reflexion in a runtime (docs/reflexion.md): Lessons, the queue, generator and sink OpenRuntime
// builds; the lesson workers, their processor and the provider a run's lessons are generated with;
// the quality hooks (AddQualityHooks) and manual lessons.

#include <memory>
#include <string>
#include <string_view>

#include "mend/agent/agent.h"
#include "mend/agent/run_origin.h"
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

/// Reflexion's parts in a runtime (docs/reflexion.md), built by OpenRuntime from the
/// reflexion.* keys.
struct Lessons {
  /// Open so every command can enqueue and inspect: the WAL queue (<reflexion.queue.base_dir>/wal
  /// and dlq) or, with reflexion.queue.backend = postgres, the PostgreSQL queue at store.url. Only
  /// a process that called StartLessonWorkers processes jobs. Null when the queue cannot be
  /// opened: `unavailable` then says why, reflexion's hook is not registered, and the rest of mend
  /// works on.
  std::unique_ptr<lessonq::DurableLessonQueue> queue;
  Status unavailable;                                     ///< why `queue` is null
  std::unique_ptr<reflexion::LessonGenerator> generator;  ///< on the runtime's provider
  std::unique_ptr<reflexion::LessonSink> sink;            ///< fact store + reflexion/LESSONS.md
  /// Legacy mode (reflexion.queue.enabled = false): the hook hands requests to this instead.
  std::unique_ptr<lessonq::DetachedLessonRunner> detached;
  /// Where the reflexion hook sends requests: `queue` or `detached`.
  lessonq::LessonEnqueuer* enqueuer = nullptr;
  reflexion::TriggerOptions triggers;  ///< when the reflexion hook reflects
};

/// The PostgreSQL queue's options from the configuration: store.url, which must be a postgres://
/// URL (kInvalidArgument saying so otherwise). Used with reflexion.queue.backend = postgres and by
/// `mend reflect migrate`.
Result<lessonq::PgQueueOptions> PostgresQueueOptions(const Config& config);

/// The endpoint this process generates lessons on: the configured provider (provider.name, or the
/// injected provider's name, and provider.base_url), the one the configured API key belongs to.
lessonq::LessonEndpoint LessonEndpointOf(const Runtime& runtime);

/// What the jobs of runs on `model` record as their provider: its kind and base URL, and
/// reflexion.model when that is set, else the run's model.
reflexion::LessonProvider LessonProviderFor(const Runtime& runtime, const agent::RunModel& model);

/// Why this process's workers leave `job` pending ("" when they would take it up): it recorded a
/// provider kind or base URL other than LessonEndpointOf's. For `mend reflect list`.
std::string WhyLessonWaits(const Runtime& runtime, const lessonq::Job& job);

/// The processor lesson workers run: generate with the runtime's provider on the job's recorded
/// model (or reflexion.model), persist through the sink. A job whose recorded provider is not
/// this process's (JobFitsEndpoint) fails with kFailedPrecondition and reaches no model; the
/// queue's workers never hand it one (their scope leaves it pending).
lessonq::Processor LessonProcessor(Runtime& runtime);

/// Makes this process the owner of the lesson workers and starts them (replaying the WAL) on the
/// jobs LessonEndpointOf can generate: all of them (`jobs` kAll), or with kOwn only those this
/// process's runs enqueue. kUnavailable when another process owns them (that process picks up
/// this one's records). Long-lived commands call it through StartBackgroundWork; `mend reflect
/// drain` directly.
Status StartLessonWorkers(Runtime& runtime, lessonq::JobsTaken jobs = lessonq::JobsTaken::kAll);

/// Stops the lesson workers, waiting up to `timeout` (30 s by default at exit) for jobs in flight;
/// unfinished jobs stay in the WAL. No-op when this process does not own them.
Status StopLessonWorkers(Runtime& runtime, Duration timeout);

/// `mend reflect add` / `/reflect <text>`: stores a manual lesson directly (no model, no queue).
/// The fact id. kInvalidArgument for empty text.
Result<std::string> AddManualLesson(Runtime& runtime, std::string_view text);

/// Registers the post-run hooks in docs/hooks.md's order — verify → refine → reflexion — as the
/// quality.* and reflexion.* keys enable them (OpenAgent calls it). The lesson jobs of the agent's
/// runs record `model`'s provider (LessonProviderFor).
void AddQualityHooks(Runtime& runtime, agent::Agent& agent, const agent::RunModel& model);

}  // namespace mend::app
