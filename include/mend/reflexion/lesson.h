#pragma once

// Lesson, what reflexion learns from a failure (docs/reflexion.md), and how it becomes a fact of
// long-term memory (LessonFact) or is typed by a person (ManualLesson).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/lessonq/job.h"
#include "mend/memory/fact_store.h"

namespace mend::reflexion {

/// A lesson distilled from a failure (docs/reflexion.md).
struct Lesson {
  std::string situation;          ///< when the lesson applies
  std::string mistake;            ///< what went wrong this time
  std::string correction;         ///< what to do differently next time
  std::vector<std::string> tags;  ///< 2-5 lowercase keywords from the model (or none)
  std::string trigger;            ///< "error", "hallucination", "low_quality", "manual"
  Time created_at{};              ///< when it was generated or typed
};

/// The mistake recorded for lessons a person typed (`mend reflect add`, `/reflect <text>`).
inline constexpr std::string_view kManualMistake =
    "(user-supplied lesson; no automatic mistake detection)";
/// The longest outcome excerpt kept in a lesson fact's provenance, in code points.
inline constexpr size_t kProvenanceOutcomeChars = 800;

/// "LESSON: <situation>\nMISTAKE: <mistake>\nCORRECTION: <correction>\nTRIGGER: <trigger>", each
/// field with its white space collapsed and "(unknown)" for an empty one.
std::string LessonFactContent(const Lesson& lesson);

/// The fact a lesson becomes: category "lesson", tags = the lesson's tags + "reflexion" +
/// "trigger:<trigger>" (deduplicated, in that order), source "reflexion", and as provenance the
/// request's task and an excerpt of its outcome (at most kProvenanceOutcomeChars code points).
memory::NewFact LessonFact(const Lesson& lesson, const lessonq::LessonRequest* provenance,
                           const std::string& workspace);

/// A lesson a person typed: situation and correction are the text, the mistake kManualMistake,
/// trigger "manual", tags "user-supplied" (LessonFact adds "reflexion" and "trigger:manual").
/// kInvalidArgument for empty text.
Result<Lesson> ManualLesson(std::string_view text, Time now);

}  // namespace mend::reflexion
