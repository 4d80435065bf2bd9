#pragma once

// The lesson queue as an operator sees it, shared by `mend reflect`, chat's `/reflect` and
// `mend serve`'s /api/v1/lessons: the checks of operator input, the actions on the queue and the
// JSON shapes of docs/cli.md and docs/reflect_cli.md. Thread-safe as the runtime's queue is; the
// JSON builders are pure.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/lessonq/job.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/lessonq/postgres_queue.h"

namespace mend::app {

struct Runtime;

/// The runtime's lesson queue; Lessons::unavailable (why it could not be opened) when there is
/// none.
Result<lessonq::DurableLessonQueue*> LessonQueueOf(Runtime& runtime);

/// OK for the triggers an operator may enqueue by hand (error, hallucination, low_quality);
/// kInvalidArgument naming them otherwise. Manual lessons are not queued (AddManualLesson).
Status CheckEnqueueTrigger(std::string_view trigger);

/// OK for a lesson job id (16 lowercase hexadecimal characters); kInvalidArgument otherwise, so an
/// id never reaches a path unchecked.
Status CheckLessonJobId(std::string_view id);

/// `reflect enqueue`: writes the job's WAL record for the workers' owner (never processes it).
/// kInvalidArgument for an empty task or a trigger CheckEnqueueTrigger refuses; LessonQueueOf's
/// and the queue's errors otherwise.
Result<lessonq::EnqueueResult> EnqueueLesson(Runtime& runtime,
                                             const lessonq::LessonRequest& request);

///@{
/// Operator actions on one dead letter: kInvalidArgument for a malformed id, kNotFound
/// "no dead-lettered lesson job <id>" when there is none.
Status RetryDeadLetter(Runtime& runtime, const std::string& id);
Status PurgeDeadLetter(Runtime& runtime, const std::string& id);
///@}

/// Makes this process the owner of the lesson workers unless it is already (kUnavailable with an
/// explanation when another process owns them; the workers then keep running in this process),
/// and processes every due job within reflexion.queue.drain_timeout.
Result<lessonq::DrainReport> DrainLessons(Runtime& runtime);

/// `reflect migrate`: moves the WAL queue's jobs at reflexion.queue.base_dir into the PostgreSQL
/// queue (lessonq::MigrateWalToPostgres). kFailedPrecondition unless reflexion.queue.backend is
/// postgres; PostgresQueueOptions' and the migration's errors otherwise.
Result<lessonq::MigrateReport> MigrateLessonsToPostgres(Runtime& runtime);

/// {"moved","already_present","dead_letters","corrupt":["path",...]}
nlohmann::json MigrateReportJson(const lessonq::MigrateReport& report);

/// Whole seconds since the job was first enqueued (0 for a clock behind it).
int64_t LessonJobAgeSeconds(const lessonq::Job& job, Time now);

/// {"queue_depth","wal_records","dlq_size"}
nlohmann::json QueueStatsJson(const lessonq::QueueStats& stats);
///@{
/// JOB: {"id","trigger","attempts","age_seconds","task","last_error":null|"...",
/// "provider":null|{"name","base_url","model"}}, the age counted from the first enqueue to `now`;
/// `provider` is what the job recorded (null: nothing, any provider may generate it).
nlohmann::json LessonJobJson(const lessonq::Job& job, Time now);
nlohmann::json LessonJobsJson(const std::vector<lessonq::Job>& jobs, Time now);
///@}
/// Pending jobs: JOB plus "waits_for": null when this process's workers would take the job up,
/// else why they leave it (WhyLessonWaits: it recorded another provider).
nlohmann::json PendingLessonJobsJson(const Runtime& runtime, const std::vector<lessonq::Job>& jobs,
                                     Time now);
/// {"succeeded","skipped","retried","dead_lettered","remaining"}
nlohmann::json DrainReportJson(const lessonq::DrainReport& report);

}  // namespace mend::app
