#include <utility>

#include "mend/base/config.h"
#include "mend/base/utf8.h"
#include "mend/obs/trace.h"
#include "mend/reflexion/generator.h"
#include "mend/reflexion/hooks.h"

namespace mend::reflexion {
namespace {

// RunOutcome::Flag builds a std::string key; the trigger check runs after every run and must not
// allocate, so the (small, usually empty) map is scanned with allocation-free comparisons.
bool FlagSet(const std::map<std::string, bool>& flags, std::string_view name) {
  if (flags.empty()) return false;
  for (const auto& [key, value] : flags) {
    if (key == name) return value;
  }
  return false;
}

std::string ErrorText(const Status& error) {
  std::string text(StatusCodeName(error.code()));
  text.append(": ").append(error.message());
  if (!error.detail_code().empty())
    text.append(" (detail ").append(error.detail_code()).append(")");
  return text;
}

std::string OutputExcerpt(const agent::RunOutcome& outcome) {
  if (outcome.output.empty()) return "(no output)";
  return TruncateUtf8Chars(outcome.output, kOutcomeChars);
}

// Permanent provider errors that say nothing about the task: the account ran out of credit, or
// the configuration names a model or an endpoint that does not exist.
constexpr std::string_view kNotTaskDetails[] = {"insufficient_quota", "http_404",
                                                kConfigInvalidDetail};

}  // namespace

bool IsTaskFailure(const Status& error) {
  if (error.ok() || ClassOf(error) != ErrorClass::kPermanent) return false;
  const std::string_view detail = error.detail_code();
  for (std::string_view infrastructure : kNotTaskDetails) {
    if (detail == infrastructure) return false;
  }
  return true;
}

std::optional<std::string_view> TriggerFor(const agent::RunOutcome& outcome,
                                           const TriggerOptions& options) {
  if (!options.enabled) return std::nullopt;
  if (FlagSet(outcome.flags, kFlagForceReflexion)) return "manual";
  if (options.on_error && IsTaskFailure(outcome.error)) return "error";
  if (options.on_hallucination && FlagSet(outcome.flags, kFlagVerifiedWithDiscrepancy)) {
    return "hallucination";
  }
  if (options.on_low_quality && FlagSet(outcome.flags, kFlagRefineLowQuality)) {
    return "low_quality";
  }
  return std::nullopt;
}

std::string OutcomeText(const agent::RunOutcome& outcome, std::string_view trigger) {
  if (trigger == "error") return ErrorText(outcome.error);
  if (trigger == "hallucination") {
    return "verification found a discrepancy in the answer:\n" + OutputExcerpt(outcome);
  }
  if (trigger == "low_quality") {
    return "the draft answer was judged low quality:\n" + OutputExcerpt(outcome);
  }
  std::string ending = outcome.error.ok() ? OutputExcerpt(outcome) : ErrorText(outcome.error);
  return "reflection requested on a run that ended: " + ending;
}

ReflexionHook::ReflexionHook(TriggerOptions options, lessonq::LessonEnqueuer& enqueuer,
                             LessonProvider provider)
    : options_(options), enqueuer_(enqueuer), provider_(std::move(provider)) {}

Status ReflexionHook::AfterRun(agent::RunOutcome& outcome) {
  std::optional<std::string_view> trigger = TriggerFor(outcome, options_);
  if (!trigger) return OkStatus();
  lessonq::LessonRequest request;
  request.task = outcome.run == nullptr ? "" : outcome.run->task;
  request.attempt = outcome.attempt;
  request.outcome = OutcomeText(outcome, *trigger);
  request.trigger = std::string(*trigger);
  request.run_id = outcome.run == nullptr ? "" : outcome.run->run_id;
  request.provider = provider_.provider;
  request.base_url = provider_.base_url;
  request.model = provider_.model;
  obs::Span span = obs::StartSpan("mend.reflexion.enqueue", obs::SpanKind::kProducer);
  span.SetAttribute("mend.lesson.trigger", request.trigger);
  if (span.recording()) request.traceparent = obs::FormatTraceparent(span.context());
  Result<lessonq::EnqueueResult> enqueued = enqueuer_.Enqueue(request);
  if (!enqueued.ok()) {
    span.SetError(StatusCodeName(enqueued.status().code()), enqueued.status().message());
    return enqueued.status();
  }
  span.SetAttribute("mend.lesson.job_id", enqueued->id)
      .SetAttribute("mend.lesson.enqueue",
                    std::string(lessonq::EnqueueOutcomeName(enqueued->outcome)))
      .SetOk();
  return OkStatus();
}

}  // namespace mend::reflexion
