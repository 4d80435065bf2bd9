#pragma once

// LessonGenerator, which asks a model for a lesson about a failure (docs/reflexion.md): the prompt,
// its limits and the parser of the reply's blocks. Thread-safe as its provider is.

#include <atomic>
#include <optional>
#include <string>
#include <string_view>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/lessonq/job.h"
#include "mend/llm/provider.h"
#include "mend/reflexion/lesson.h"

namespace mend::reflexion {

/// The lesson generator protocol of docs/reflexion.md.
inline constexpr size_t kAttemptChars = 1500;  ///< the attempt is cut to this many code points
inline constexpr size_t kOutcomeChars = 800;   ///< the outcome likewise

/// The system prompt: the seed's rules (general, not one-off; `<skip>` when nothing is actionable;
/// one line per block; 2-5 lowercase tags) and the output blocks `<situation>`, `<mistake>`,
/// `<correction>`, `<tags>`, or exactly `<skip>nothing actionable</skip>`.
std::string_view LessonSystemPrompt();

/// "TASK:\n<task>\n\nATTEMPT:\n<attempt>\n\nOUTCOME (why we are reflecting):\n<outcome>\n\n
/// TRIGGER: <trigger>" with the attempt and outcome cut UTF-8-safely.
std::string LessonUserMessage(const lessonq::LessonRequest& request);

/// Parses the model's reply. std::nullopt when it contains `<skip>` anywhere (nothing to store).
/// kInvalidArgument (a permanent error) when no block is present, or when `<situation>` or
/// `<correction>` is missing or empty. Tags are split on commas, trimmed, lower-cased, empties
/// dropped. Blocks may appear in any order and be surrounded by other text; the first of each
/// kind counts. `trigger` and `now` fill the lesson's trigger and created_at.
Result<std::optional<Lesson>> ParseLessonReply(std::string_view reply, std::string_view trigger,
                                               Time now);

/// Asks a model for a lesson. Thread-safe as the provider is.
class LessonGenerator {
 public:
  /// `provider` and `clock` must outlive the generator. `model`, the configured lesson model, may
  /// be empty: each request's recorded model (LessonRequest::model), else the provider's.
  LessonGenerator(llm::LlmProvider& provider, std::string model, Clock& clock);
  /// The model a request is generated with: the configured one, else the request's ("" means the
  /// provider's own).
  const std::string& ModelFor(const lessonq::LessonRequest& request) const;
  /// One completion on ModelFor(request). Provider errors come back as they are (their class
  /// decides retry vs DLQ); parse errors as ParseLessonReply's. `cancel` (may be null) abandons the
  /// model request when it becomes true (kCancelled): the queue sets it at the job's deadline and
  /// at shutdown.
  Result<std::optional<Lesson>> Generate(const lessonq::LessonRequest& request,
                                         const std::atomic<bool>* cancel = nullptr);

 private:
  llm::LlmProvider& provider_;
  std::string model_;
  Clock& clock_;
};

}  // namespace mend::reflexion
