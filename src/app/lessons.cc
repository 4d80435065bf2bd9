// Reflexion's wiring: the lesson queue, the generator and the sink built from the reflexion.* and
// quality.* keys, and the post-run hooks that feed them.
#include "mend/app/lessons.h"

#include <memory>
#include <string>
#include <utility>

#include "app/lessons_internal.h"
#include "app/runtime_parts.h"
#include "mend/app/run_model.h"
#include "mend/app/runtime.h"
#include "mend/base/home_layout.h"
#include "mend/lessonq/postgres_queue.h"
#include "mend/obs/events.h"
#include "mend/obs/trace.h"
#include "mend/store/postgres_store.h"

namespace mend::app {
namespace {

lessonq::QueueOptions QueueOptionsFromConfig(const Config& config) {
  lessonq::QueueOptions options;
  options.base_dir = config.GetString("reflexion.queue.base_dir");
  options.workers = static_cast<int>(config.GetInt("reflexion.queue.workers"));
  options.capacity = static_cast<size_t>(config.GetInt("reflexion.queue.capacity"));
  options.drop_oldest = config.GetBool("reflexion.queue.drop_oldest");
  options.block_timeout = config.GetDuration("reflexion.queue.block_timeout");
  options.max_attempts = static_cast<int>(config.GetInt("reflexion.queue.max_attempts"));
  options.initial_delay = config.GetDuration("reflexion.queue.initial_delay");
  options.max_delay = config.GetDuration("reflexion.queue.max_delay");
  options.jitter = config.GetDouble("reflexion.queue.jitter");
  options.job_timeout = config.GetDuration("reflexion.queue.job_timeout");
  options.stale_after = config.GetDuration("reflexion.queue.stale_after");
  options.chatcli_safe = config.GetBool("reflexion.queue.chatcli_safe");
  return options;
}

// The queue reflexion.queue.backend selects. A postgres backend without a postgres:// store.url
// is a mistake in the configuration (kInvalidArgument); a queue that cannot be opened is not.
Result<std::unique_ptr<lessonq::DurableLessonQueue>> OpenQueue(Runtime& runtime,
                                                               lessonq::QueueOptions options) {
  const Config& config = runtime.config;
  if (config.GetString("reflexion.queue.backend") != "postgres") {
    MEND_ASSIGN_OR_RETURN(
        std::unique_ptr<lessonq::LessonQueue> queue,
        lessonq::LessonQueue::Open(runtime.env, std::move(options), runtime.metrics.get()));
    return std::unique_ptr<lessonq::DurableLessonQueue>(std::move(queue));
  }
  MEND_ASSIGN_OR_RETURN(lessonq::PgQueueOptions pg, PostgresQueueOptions(config));
  pg.connections = internal::PartsOf(runtime).postgres_connections;
  return lessonq::OpenPostgresLessonQueue(runtime.env, std::move(options), std::move(pg),
                                          runtime.metrics.get());
}

reflexion::TriggerOptions TriggerOptionsFromConfig(const Config& config) {
  reflexion::TriggerOptions options;
  options.enabled = config.GetBool("reflexion.enabled");
  options.on_error = config.GetBool("reflexion.on_error");
  options.on_hallucination = config.GetBool("reflexion.on_hallucination");
  options.on_low_quality = config.GetBool("reflexion.on_low_quality");
  return options;
}

}  // namespace

Result<lessonq::PgQueueOptions> PostgresQueueOptions(const Config& config) {
  const std::string& url = config.GetString("store.url");
  if (!store::IsPostgresUrl(url)) {
    return InvalidArgumentError(
        "reflexion.queue.backend = postgres keeps the lesson queue in the database of store.url "
        "(MEND_STORE), which must then be a postgres:// URL; it is " +
        (url.empty() ? std::string("empty (SQLite in the home directory)")
                     : "not one (" + store::MaskPostgresUrl(url) + ")"));
  }
  lessonq::PgQueueOptions options;
  options.url = url;
  options.claim_margin = config.GetDuration("reflexion.queue.claim_margin");
  options.claim_commit = config.GetString("reflexion.queue.claim_commit") == "sync"
                             ? lessonq::ClaimCommit::kSynchronous
                             : lessonq::ClaimCommit::kAsynchronous;
  return options;
}

namespace internal {

Status OpenLessons(Runtime& runtime) {
  const Config& config = runtime.config;
  Lessons& lessons = runtime.lessons;
  lessons.triggers = TriggerOptionsFromConfig(config);
  lessonq::QueueOptions queue_options = QueueOptionsFromConfig(config);
  // What became of each job this process's workers attempted, for live views (docs/lesson_queue.md,
  // "Events"): reflexion.job_stored, _skipped, _retrying or _dead_lettered.
  queue_options.on_job = [events = runtime.events.get()](const lessonq::Job& job,
                                                         lessonq::JobFate fate) {
    obs::Event e("reflexion.job_" + std::string(lessonq::JobFateName(fate)));
    e.AddString("job", job.id).AddInt("attempts", job.attempts);
    if (fate == lessonq::JobFate::kRetrying || fate == lessonq::JobFate::kDeadLettered) {
      e.AddString("error", job.last_error);
    }
    events->Publish(std::move(e));
  };
  reflexion::LessonSinkOptions sink_options;
  sink_options.persist = config.GetBool("reflexion.persist");
  sink_options.lessons_file = home::LessonsFile(queue_options.base_dir);
  // A lesson (from reflexion, the proxy or MCP's add_lesson) gets its vector now, as a fact
  // written through `mend memory add` or the API does.
  if (runtime.backfill != nullptr) {
    sink_options.on_stored = [backfill = runtime.backfill.get()] { backfill->Notify(); };
  }
  const std::string base_dir = queue_options.base_dir;
  Result<std::unique_ptr<lessonq::DurableLessonQueue>> queue =
      OpenQueue(runtime, std::move(queue_options));
  if (queue.status().code() == StatusCode::kInvalidArgument &&
      config.GetString("reflexion.queue.backend") == "postgres") {
    return queue.status();
  }
  if (queue.ok()) {
    lessons.queue = std::move(queue).value();
  } else {
    // A lesson queue that cannot be used disables durable reflexion, not mend.
    const std::string where = config.GetString("reflexion.queue.backend") == "postgres"
                                  ? "in PostgreSQL"
                                  : "at " + base_dir;
    lessons.unavailable = queue.status().Annotate("the lesson queue " + where + " is unavailable");
    obs::Event e("reflexion.unavailable");
    e.AddString("error", std::string(lessons.unavailable.message()));
    runtime.events->Publish(std::move(e));
  }
  lessons.generator = std::make_unique<reflexion::LessonGenerator>(
      *runtime.provider, config.GetString("reflexion.model"), *runtime.env.clock);
  lessons.sink = std::make_unique<reflexion::LessonSink>(runtime.facts.get(), runtime.env,
                                                         runtime.events.get(), sink_options);
  if (config.GetBool("reflexion.queue.enabled")) {
    lessons.enqueuer = lessons.queue.get();  // null without a queue: no reflexion hook
  } else {
    lessons.detached = std::make_unique<lessonq::DetachedLessonRunner>(
        runtime.env, LessonProcessor(runtime), config.GetDuration("reflexion.queue.job_timeout"));
    lessons.enqueuer = lessons.detached.get();
  }
  return OkStatus();
}

}  // namespace internal

lessonq::LessonEndpoint LessonEndpointOf(const Runtime& runtime) {
  const agent::RunModel configured = NewRunModel(runtime, agent::AgentSpec{});
  return lessonq::LessonEndpoint{configured.provider, configured.base_url};
}

reflexion::LessonProvider LessonProviderFor(const Runtime& runtime, const agent::RunModel& model) {
  const std::string& lesson_model = runtime.config.GetString("reflexion.model");
  return reflexion::LessonProvider{model.provider, model.base_url,
                                   lesson_model.empty() ? model.model : lesson_model};
}

namespace {

std::string DescribeEndpoint(std::string_view provider, std::string_view base_url) {
  return std::string(provider) + " at " +
         (base_url.empty() ? std::string("its default URL") : std::string(base_url));
}

// The job goes only to the provider it recorded: the run's data never reaches another one.
lessonq::Processor OnRecordedProvider(Runtime& runtime, lessonq::Processor process) {
  return [&runtime, process = std::move(process)](
             const lessonq::Job& job,
             const lessonq::JobContext& context) -> Result<lessonq::ProcessResult> {
    if (std::string why = WhyLessonWaits(runtime, job); !why.empty()) {
      return FailedPreconditionError("lesson job " + job.id + " " + why);
    }
    // A provider built on demand gets the job's model as its default: a configuration that
    // names no model (agents name theirs) can still generate the lessons of their runs.
    MEND_RETURN_IF_ERROR(
        PrepareProvider(runtime, runtime.lessons.generator->ModelFor(job.request)));
    return process(job, context);
  };
}

}  // namespace

std::string WhyLessonWaits(const Runtime& runtime, const lessonq::Job& job) {
  const lessonq::LessonEndpoint here = LessonEndpointOf(runtime);
  if (lessonq::JobFitsEndpoint(job.request, here)) return "";
  return "waits for a process with provider " +
         DescribeEndpoint(job.request.provider, job.request.base_url) + " (this one has " +
         DescribeEndpoint(here.provider, here.base_url) + ")";
}

lessonq::Processor LessonProcessor(Runtime& runtime) {
  obs::Counter* failures = &runtime.metrics->counter("mend_lessonq_persist_failures_total",
                                                     "lessons the fact store failed to take");
  lessonq::Processor process = OnRecordedProvider(
      runtime, reflexion::MakeLessonProcessor(*runtime.lessons.generator, *runtime.lessons.sink,
                                              [failures] { failures->Inc(); }));
  obs::Tracer* tracer = runtime.tracer.get();
  if (tracer == nullptr) return process;
  // Each processing attempt is a span of the trace of the run that asked for the lesson (a root
  // span linked to the enqueue span), or of a trace of its own for jobs without one.
  return [tracer, process = std::move(process)](
             const lessonq::Job& job,
             const lessonq::JobContext& context) -> Result<lessonq::ProcessResult> {
    obs::SpanStart start;
    start.kind = obs::SpanKind::kConsumer;
    start.run_id = job.request.run_id;
    if (Result<obs::SpanContext> enqueued = obs::ParseTraceparent(job.request.traceparent);
        enqueued.ok()) {
      start.trace_id = enqueued->trace_id;
      start.links.push_back(obs::SpanLink{*enqueued, {{"mend.link", std::string("enqueued_by")}}});
    }
    obs::Span span = tracer->StartSpan("mend.lesson.job", std::move(start));
    span.SetAttribute("mend.lesson.job_id", job.id)
        .SetAttribute("mend.lesson.trigger", job.request.trigger)
        .SetAttribute("mend.lesson.attempt", job.attempts + 1);
    obs::ActiveSpanScope scope(span);
    Result<lessonq::ProcessResult> result = process(job, context);
    if (!result.ok()) {
      span.SetError(StatusCodeName(result.status().code()), result.status().message());
    } else {
      span.SetAttribute("mend.lesson.outcome",
                        *result == lessonq::ProcessResult::kSuccess ? "stored" : "skipped");
      span.SetOk();
    }
    return result;
  };
}

Status StartLessonWorkers(Runtime& runtime, lessonq::JobsTaken jobs) {
  if (runtime.lessons.queue == nullptr) return runtime.lessons.unavailable;
  if (runtime.lessons.queue->owner()) return OkStatus();
  return runtime.lessons.queue->Start(LessonProcessor(runtime),
                                      lessonq::WorkerScope{LessonEndpointOf(runtime), jobs});
}

Status StopLessonWorkers(Runtime& runtime, Duration timeout) {
  if (runtime.lessons.queue == nullptr || !runtime.lessons.queue->owner()) return OkStatus();
  return runtime.lessons.queue->Shutdown(timeout);
}

Result<std::string> AddManualLesson(Runtime& runtime, std::string_view text) {
  MEND_ASSIGN_OR_RETURN(reflexion::Lesson lesson,
                        reflexion::ManualLesson(text, runtime.env.clock->Now()));
  return runtime.lessons.sink->Persist(lesson, nullptr);
}

void AddQualityHooks(Runtime& runtime, agent::Agent& agent, const agent::RunModel& model) {
  const Config& config = runtime.config;
  if (config.GetBool("quality.verify.enabled")) {
    reflexion::VerifyOptions options;
    options.max_questions = static_cast<int>(config.GetInt("quality.verify.max_questions"));
    options.replace_answer = config.GetBool("quality.verify.replace_answer");
    agent.AddPostRunHook(std::make_shared<reflexion::VerifyHook>(*runtime.provider, options));
  }
  if (config.GetBool("quality.refine.enabled")) {
    reflexion::RefineOptions options;
    options.low_quality_below = static_cast<int>(config.GetInt("quality.refine.threshold"));
    options.replace_answer = config.GetBool("quality.refine.replace_answer");
    agent.AddPostRunHook(std::make_shared<reflexion::RefineHook>(*runtime.provider, options));
  }
  if (runtime.lessons.triggers.enabled && runtime.lessons.enqueuer != nullptr) {
    agent.AddPostRunHook(std::make_shared<reflexion::ReflexionHook>(
        runtime.lessons.triggers, *runtime.lessons.enqueuer, LessonProviderFor(runtime, model)));
  }
}

}  // namespace mend::app
