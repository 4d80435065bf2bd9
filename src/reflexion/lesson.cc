#include "mend/reflexion/lesson.h"

#include <algorithm>
#include <utility>

#include "mend/base/utf8.h"

namespace mend::reflexion {
namespace {

constexpr std::string_view kUnknown = "(unknown)";

std::string FactField(std::string_view value) {
  std::string collapsed = CollapseWhitespace(value);
  return collapsed.empty() ? std::string(kUnknown) : collapsed;
}

void AppendTag(std::vector<std::string>& tags, std::string_view tag) {
  std::string t = ToLowerAscii(CollapseWhitespace(tag));
  if (t.empty() || std::find(tags.begin(), tags.end(), t) != tags.end()) return;
  tags.push_back(std::move(t));
}

}  // namespace

std::string LessonFactContent(const Lesson& lesson) {
  std::string out;
  out.append("LESSON: ").append(FactField(lesson.situation));
  out.append("\nMISTAKE: ").append(FactField(lesson.mistake));
  out.append("\nCORRECTION: ").append(FactField(lesson.correction));
  out.append("\nTRIGGER: ").append(FactField(lesson.trigger));
  return out;
}

memory::NewFact LessonFact(const Lesson& lesson, const lessonq::LessonRequest* provenance,
                           const std::string& workspace) {
  memory::NewFact fact;
  fact.content = LessonFactContent(lesson);
  fact.category = "lesson";
  for (const std::string& tag : lesson.tags) AppendTag(fact.tags, tag);
  AppendTag(fact.tags, "reflexion");
  // The trigger tag is built from the same field the content shows, so an empty trigger reads
  // "trigger:(unknown)" in both places.
  AppendTag(fact.tags, "trigger:" + FactField(lesson.trigger));
  fact.workspace = workspace;
  fact.source = "reflexion";
  // Every lesson comes from an observed failure (or a person), so it is stored with full
  // confidence; retrieval weighs it by reinforcement and helped/hurt counts instead.
  fact.confidence = 1.0;
  if (provenance != nullptr) {
    fact.episode = memory::Episode{
        .task = provenance->task,
        .outcome = TruncateUtf8Chars(provenance->outcome, kProvenanceOutcomeChars),
        .at = lesson.created_at,
        .run_id = provenance->run_id,
    };
  }
  return fact;
}

Result<Lesson> ManualLesson(std::string_view text, Time now) {
  std::string body = CollapseWhitespace(text);
  if (body.empty()) return InvalidArgumentError("a manual lesson needs some text");
  Lesson lesson;
  lesson.situation = body;
  lesson.mistake = std::string(kManualMistake);
  lesson.correction = std::move(body);
  lesson.tags = {"user-supplied"};
  lesson.trigger = "manual";
  lesson.created_at = now;
  return lesson;
}

}  // namespace mend::reflexion
