// The lesson queue as an operator sees it (lesson_admin.h).
#include "mend/app/lesson_admin.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "mend/app/lessons.h"
#include "mend/app/runtime.h"
#include "mend/base/utf8.h"

namespace mend::app {
namespace {

// The triggers an operator may enqueue by hand; "manual" lessons go through AddManualLesson.
constexpr std::string_view kTriggers[] = {"error", "hallucination", "low_quality"};

Status DeadLetterAction(const Status& status, const std::string& id) {
  if (status.code() == StatusCode::kNotFound) {
    return NotFoundError("no dead-lettered lesson job " + id);
  }
  return status;
}

}  // namespace

int64_t LessonJobAgeSeconds(const lessonq::Job& job, Time now) {
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - job.enqueued_at);
  return std::max<int64_t>(0, age.count());
}

Result<lessonq::DurableLessonQueue*> LessonQueueOf(Runtime& runtime) {
  if (runtime.lessons.queue == nullptr) return runtime.lessons.unavailable;
  return runtime.lessons.queue.get();
}

Status CheckEnqueueTrigger(std::string_view trigger) {
  if (std::find(std::begin(kTriggers), std::end(kTriggers), trigger) != std::end(kTriggers)) {
    return OkStatus();
  }
  return InvalidArgumentError("unknown trigger '" + std::string(trigger) +
                              "' (expected error, hallucination or low_quality)");
}

Status CheckLessonJobId(std::string_view id) {
  if (lessonq::IsJobId(id)) return OkStatus();
  return InvalidArgumentError("'" + std::string(id) +
                              "' is not a lesson job id (16 lowercase hexadecimal characters)");
}

Result<lessonq::EnqueueResult> EnqueueLesson(Runtime& runtime,
                                             const lessonq::LessonRequest& request) {
  if (Trim(request.task).empty()) return InvalidArgumentError("the task is empty");
  MEND_RETURN_IF_ERROR(CheckEnqueueTrigger(request.trigger));
  MEND_ASSIGN_OR_RETURN(lessonq::DurableLessonQueue * queue, LessonQueueOf(runtime));
  return queue->Enqueue(request);
}

Status RetryDeadLetter(Runtime& runtime, const std::string& id) {
  MEND_RETURN_IF_ERROR(CheckLessonJobId(id));
  MEND_ASSIGN_OR_RETURN(lessonq::DurableLessonQueue * queue, LessonQueueOf(runtime));
  return DeadLetterAction(queue->RetryDeadLetter(id), id);
}

Status PurgeDeadLetter(Runtime& runtime, const std::string& id) {
  MEND_RETURN_IF_ERROR(CheckLessonJobId(id));
  MEND_ASSIGN_OR_RETURN(lessonq::DurableLessonQueue * queue, LessonQueueOf(runtime));
  return DeadLetterAction(queue->PurgeDeadLetter(id), id);
}

Result<lessonq::DrainReport> DrainLessons(Runtime& runtime) {
  MEND_ASSIGN_OR_RETURN(lessonq::DurableLessonQueue * queue, LessonQueueOf(runtime));
  const Status started = StartLessonWorkers(runtime);
  if (started.code() == StatusCode::kUnavailable) {
    return UnavailableError("another mend process owns the lesson workers of " + queue->location() +
                            "; it processes the queue itself (drain again once it has exited)");
  }
  MEND_RETURN_IF_ERROR(started);
  return queue->DrainNow(runtime.config.GetDuration("reflexion.queue.drain_timeout"));
}

Result<lessonq::MigrateReport> MigrateLessonsToPostgres(Runtime& runtime) {
  const Config& config = runtime.config;
  if (config.GetString("reflexion.queue.backend") != "postgres") {
    return FailedPreconditionError(
        "reflect migrate moves the WAL queue's jobs into the PostgreSQL queue; set "
        "reflexion.queue.backend = postgres (MEND_QUALITY_REFLEXION_QUEUE_BACKEND) and store.url "
        "to a postgres:// URL first");
  }
  MEND_ASSIGN_OR_RETURN(lessonq::PgQueueOptions pg, PostgresQueueOptions(config));
  return lessonq::MigrateWalToPostgres(runtime.env, config.GetString("reflexion.queue.base_dir"),
                                       pg);
}

nlohmann::json MigrateReportJson(const lessonq::MigrateReport& report) {
  return {{"moved", report.moved},
          {"already_present", report.already_present},
          {"dead_letters", report.dead_letters},
          {"corrupt", report.corrupt}};
}

nlohmann::json QueueStatsJson(const lessonq::QueueStats& stats) {
  return {{"queue_depth", stats.queue_depth},
          {"wal_records", stats.wal_records},
          {"dlq_size", stats.dlq_size}};
}

nlohmann::json LessonJobJson(const lessonq::Job& job, Time now) {
  const lessonq::LessonRequest& r = job.request;
  return {{"id", job.id},
          {"trigger", r.trigger},
          {"attempts", job.attempts},
          {"age_seconds", LessonJobAgeSeconds(job, now)},
          {"task", r.task},
          {"last_error",
           job.last_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(job.last_error)},
          {"provider", r.provider.empty() ? nlohmann::json(nullptr)
                                          : nlohmann::json{{"name", r.provider},
                                                           {"base_url", r.base_url},
                                                           {"model", r.model}}}};
}

nlohmann::json LessonJobsJson(const std::vector<lessonq::Job>& jobs, Time now) {
  nlohmann::json list = nlohmann::json::array();
  for (const lessonq::Job& job : jobs) list.push_back(LessonJobJson(job, now));
  return list;
}

nlohmann::json PendingLessonJobsJson(const Runtime& runtime, const std::vector<lessonq::Job>& jobs,
                                     Time now) {
  nlohmann::json list = nlohmann::json::array();
  for (const lessonq::Job& job : jobs) {
    nlohmann::json entry = LessonJobJson(job, now);
    const std::string why = WhyLessonWaits(runtime, job);
    entry["waits_for"] = why.empty() ? nlohmann::json(nullptr) : nlohmann::json(why);
    list.push_back(std::move(entry));
  }
  return list;
}

nlohmann::json DrainReportJson(const lessonq::DrainReport& report) {
  return {{"succeeded", report.succeeded},
          {"skipped", report.skipped},
          {"retried", report.retried},
          {"dead_lettered", report.dead_lettered},
          {"remaining", report.remaining}};
}

}  // namespace mend::app
