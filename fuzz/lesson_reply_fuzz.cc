// The lesson parser (src/reflexion/generator.cc, ParseLessonReply): the reflection model's reply
// is untrusted text, and what it yields becomes a stored fact. Also ManualLesson (text a person
// typed). Invariants: a parsed lesson has a situation and a correction, every field is valid
// UTF-8 on one line within its bound, tags are few, short, lower-case and distinct; its fact
// content is valid UTF-8 (for a typed lesson: when the text was).
#include <string>

#include "fuzz/fuzz_util.h"
#include "mend/base/utf8.h"
#include "mend/reflexion/generator.h"
#include "mend/reflexion/lesson.h"

namespace mend::reflexion {
namespace {

constexpr size_t kMaxFieldChars = 1000;  // generator.cc
constexpr size_t kMaxTags = 8;
constexpr size_t kMaxTagChars = 40;

void CheckOneLine(const std::string& field, const char* name) {
  FUZZ_CHECK(IsValidUtf8(field), std::string(name) + " is not valid UTF-8");
  FUZZ_CHECK(field.find('\n') == std::string::npos, std::string(name) + " spans lines");
  FUZZ_CHECK(CountUtf8Chars(field) <= kMaxFieldChars, std::string(name) + " is too long");
}

void CheckLesson(const Lesson& lesson) {
  FUZZ_CHECK(!lesson.situation.empty() && !lesson.correction.empty(), "an empty required field");
  CheckOneLine(lesson.situation, "situation");
  CheckOneLine(lesson.mistake, "mistake");
  CheckOneLine(lesson.correction, "correction");
  FUZZ_CHECK(lesson.tags.size() <= kMaxTags, "too many tags");
  for (size_t i = 0; i < lesson.tags.size(); ++i) {
    const std::string& tag = lesson.tags[i];
    FUZZ_CHECK(!tag.empty() && IsValidUtf8(tag) && CountUtf8Chars(tag) <= kMaxTagChars, "bad tag");
    FUZZ_CHECK(ToLowerAscii(tag) == tag, "a tag with upper-case ASCII");
    for (size_t j = 0; j < i; ++j) FUZZ_CHECK(lesson.tags[j] != tag, "a duplicate tag");
  }
  const std::string content = LessonFactContent(lesson);
  FUZZ_CHECK(IsValidUtf8(content), "the fact content is not valid UTF-8");
  memory::NewFact fact = LessonFact(lesson, nullptr, "/workspace");
  FUZZ_CHECK(IsValidUtf8(fact.content), "the fact is not valid UTF-8");
}

}  // namespace
}  // namespace mend::reflexion

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend::reflexion;
  const std::string_view input = mend::fuzz::AsText(data, size);
  const mend::Time now{std::chrono::seconds(1'700'000'000)};

  mend::Result<std::optional<Lesson>> reply = ParseLessonReply(input, "error", now);
  if (reply.ok()) {
    if (reply->has_value()) CheckLesson(**reply);
  } else {
    FUZZ_CHECK(reply.status().code() == mend::StatusCode::kInvalidArgument,
               reply.status().ToString());
    FUZZ_CHECK(mend::IsValidUtf8(reply.status().message()), "the error quotes invalid UTF-8");
  }

  // A typed lesson keeps the person's bytes; invalid UTF-8 is refused later by the fact store
  // ("a fact must be valid UTF-8"), so only valid text must stay valid.
  mend::Result<Lesson> manual = ManualLesson(input, now);
  if (manual.ok() && mend::IsValidUtf8(input)) {
    const std::string content = LessonFactContent(*manual);
    FUZZ_CHECK(mend::IsValidUtf8(content), "a manual lesson's fact is not valid UTF-8");
  }
  return 0;
}
