// Routes of the lesson queue: status, pending jobs, dead letters and their retry and purge,
// manual lessons, enqueue and drain (docs/http_api.md, "Lessons"). Each mirrors a `mend reflect`
// subcommand and answers its JSON shape (app/lesson_admin.h).
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/app/lesson_admin.h"
#include "mend/app/lessons.h"
#include "mend/app/runtime.h"
#include "mend/base/utf8.h"
#include "server/api.h"
#include "server/serve_context.h"

namespace mend::server {
namespace {

Result<ApiResponse> QueueStatus(app::Runtime& runtime) {
  MEND_ASSIGN_OR_RETURN(lessonq::DurableLessonQueue * queue, app::LessonQueueOf(runtime));
  MEND_ASSIGN_OR_RETURN(lessonq::QueueStats stats, queue->Stats());
  return ApiResponse(app::QueueStatsJson(stats));
}

enum class Listing { kPending, kDeadLetters };

Result<ApiResponse> Jobs(app::Runtime& runtime, Listing listing) {
  MEND_ASSIGN_OR_RETURN(lessonq::DurableLessonQueue * queue, app::LessonQueueOf(runtime));
  std::vector<lessonq::Job> jobs;
  if (listing == Listing::kPending) {
    MEND_ASSIGN_OR_RETURN(jobs, queue->Pending());
  } else {
    MEND_ASSIGN_OR_RETURN(jobs, queue->DeadLetters());
  }
  const char* key = listing == Listing::kPending ? "pending" : "dlq";
  return ApiResponse(nlohmann::json{{key, app::LessonJobsJson(jobs, runtime.env.clock->Now())}});
}

Result<ApiResponse> AddLesson(app::Runtime& runtime, const ApiRequest& req) {
  MEND_ASSIGN_OR_RETURN(std::string text, req.BodyString("text"));
  if (Trim(text).empty()) return InvalidArgumentError("field \"text\" is empty");
  MEND_ASSIGN_OR_RETURN(std::string fact_id, app::AddManualLesson(runtime, Trim(text)));
  return ApiResponse(nlohmann::json{{"fact_id", fact_id}}, 201);
}

Result<ApiResponse> Enqueue(app::Runtime& runtime, const ApiRequest& req) {
  lessonq::LessonRequest request;
  MEND_ASSIGN_OR_RETURN(request.task, req.BodyString("task"));
  MEND_ASSIGN_OR_RETURN(request.trigger, req.BodyString("trigger"));
  MEND_ASSIGN_OR_RETURN(request.attempt, req.OptionalBodyString("attempt"));
  MEND_ASSIGN_OR_RETURN(request.outcome, req.OptionalBodyString("outcome"));
  MEND_ASSIGN_OR_RETURN(lessonq::EnqueueResult result, app::EnqueueLesson(runtime, request));
  // A second enqueue of a job still pending writes nothing: the job exists already.
  return ApiResponse(
      nlohmann::json{{"id", result.id},
                     {"created", result.created},
                     {"outcome", std::string(lessonq::EnqueueOutcomeName(result.outcome))}},
      result.created ? 201 : 200);
}

Result<ApiResponse> Drain(app::Runtime& runtime) {
  // A provider that cannot be built would fail every job permanently and fill the dead letter
  // queue, so it is reported before any job is touched (as `mend reflect drain` does).
  const Status provider =
      app::PrepareProvider(runtime, runtime.config.GetString("reflexion.model"));
  if (!provider.ok()) {
    return FailedPreconditionError("lessons cannot be written: " + std::string(provider.message()));
  }
  MEND_ASSIGN_OR_RETURN(lessonq::DrainReport report, app::DrainLessons(runtime));
  return ApiResponse(app::DrainReportJson(report));
}

}  // namespace

void AddLessonRoutes(ApiRoutes& routes, ServeContext& context) {
  app::Runtime& runtime = context.runtime();
  routes.Get("/api/v1/lessons", [&runtime](const ApiRequest&) { return QueueStatus(runtime); });
  routes.Get("/api/v1/lessons/pending",
             [&runtime](const ApiRequest&) { return Jobs(runtime, Listing::kPending); });
  routes.Get("/api/v1/lessons/dead",
             [&runtime](const ApiRequest&) { return Jobs(runtime, Listing::kDeadLetters); });
  // `.+` rather than `[^/]+`, so an id with a slash is refused as a bad id (400), not missed.
  routes.Post("/api/v1/lessons/dead/(.+)/retry",
              [&runtime](const ApiRequest& req) -> Result<ApiResponse> {
                MEND_RETURN_IF_ERROR(app::RetryDeadLetter(runtime, req.params[0]));
                return ApiResponse(nlohmann::json{{"id", req.params[0]}, {"retried", true}});
              });
  routes.Post("/api/v1/lessons/dead/(.+)/purge",
              [&runtime](const ApiRequest& req) -> Result<ApiResponse> {
                MEND_RETURN_IF_ERROR(app::PurgeDeadLetter(runtime, req.params[0]));
                return ApiResponse(nlohmann::json{{"id", req.params[0]}, {"purged", true}});
              });
  routes.Post("/api/v1/lessons",
              [&runtime](const ApiRequest& req) { return AddLesson(runtime, req); });
  routes.Post("/api/v1/lessons/enqueue",
              [&runtime](const ApiRequest& req) { return Enqueue(runtime, req); });
  // Two drains at once would race to become the workers' owner; one at a time is enough.
  auto drain_mu = std::make_shared<std::mutex>();
  routes.Post("/api/v1/lessons/drain",
              [&runtime, drain_mu](const ApiRequest&) -> Result<ApiResponse> {
                std::lock_guard<std::mutex> lock(*drain_mu);
                return Drain(runtime);
              });
}

}  // namespace mend::server
