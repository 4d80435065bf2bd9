// Request bodies of `mend proxy` (src/proxy/request_view.cc, json_edit.cc, failure_rules.cc,
// conversation.cc): what any client sends to /v1/chat/completions, /v1/messages or /v1/responses.
//
// Input: the first byte picks the API (its value mod 3: chat, messages, responses); the rest is
// the body. Invariants: reading never crashes; when the body is a JSON object the edit that adds
// the memory section gives a JSON object again, whose system prompt ends with the section, and
// which reads as a request exactly when the original does; the failures of its history become
// lessons with valid UTF-8 text, each failure once.
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz/fuzz_util.h"
#include "mend/base/json.h"
#include "mend/base/utf8.h"
#include "proxy/conversation.h"
#include "proxy/json_edit.h"

namespace mend::proxy {
namespace {

constexpr char kSection[] = "## Long-term Memory\n- a \"fact\" \\ with escapes";

void CheckEdit(ApiShape shape, std::string_view body, bool reads) {
  Result<std::string> edited = AppendToSystemPrompt(body, shape, kSection);
  if (!edited.ok()) {
    // Only a request the API would refuse may fail the edit.
    FUZZ_CHECK(!reads || edited.status().code() == StatusCode::kInvalidArgument,
               edited.status().ToString());
    return;
  }
  Result<nlohmann::json> parsed = ParseJson(*edited);
  FUZZ_CHECK(parsed.ok() && parsed->is_object(), "the edited body is not a JSON object");
  Result<RequestView> again = ReadRequest(shape, *parsed);
  FUZZ_CHECK(again.ok() == reads, "the edit changed whether the request reads");
  if (again.ok()) {
    FUZZ_CHECK(again->system_text.ends_with(kSection) ||
                   again->system_text.find(kSection) != std::string::npos,
               "the section is not in the system prompt: " + again->system_text);
  }
}

void CheckLessons(const RequestView& view) {
  static const FailureRules rules = *FailureRules::Create({"HTTP 5\\d\\d"});
  Conversation conversation;
  conversation.id = "c";
  conversation.task = view.first_user_text;
  const Time now = Time(std::chrono::hours(500000));
  ObserveRequest(conversation, view, rules, now);
  ObserveReply(conversation, "done", false);
  std::vector<lessonq::LessonRequest> lessons =
      TakeDueLessons(conversation, now, std::chrono::minutes(10));
  FUZZ_CHECK(lessons.size() == conversation.failures.size(), "a failure without its lesson");
  FUZZ_CHECK(TakeDueLessons(conversation, now, std::chrono::minutes(10)).empty(),
             "a lesson taken twice");
}

}  // namespace
}  // namespace mend::proxy

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend::proxy;
  if (size < 1) return 0;
  const ApiShape shape = static_cast<ApiShape>(data[0] % 3);
  const std::string_view body = mend::fuzz::AsText(data + 1, size - 1);
  mend::Result<nlohmann::json> parsed = mend::ParseJson(body);
  if (!parsed.ok() || !parsed->is_object()) {
    // Not a JSON object: the edit must refuse it, never produce a body.
    mend::Result<std::string> edited = AppendToSystemPrompt(body, shape, "x");
    if (edited.ok()) {
      FUZZ_CHECK(mend::ParseJson(*edited).ok() == parsed.ok(), "an edit made bad JSON good");
    }
    return 0;
  }
  mend::Result<RequestView> view = ReadRequest(shape, *parsed);
  CheckEdit(shape, body, view.ok());
  if (view.ok()) CheckLessons(*view);
  return 0;
}
