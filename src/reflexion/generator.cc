#include "mend/reflexion/generator.h"

#include <utility>
#include <vector>

#include "mend/base/utf8.h"
#include "reflexion/quality_call.h"
#include "reflexion/tag_block.h"

namespace mend::reflexion {
namespace {

// The rules are those of docs/reflexion.md: one general lesson or an explicit skip, one line per
// block, a few lowercase tags that a similar task would mention.
constexpr std::string_view kSystemPrompt =
    "You review an AI agent's run that went wrong and distil one lesson that will help the next "
    "time a similar task comes up.\n"
    "\n"
    "Rules:\n"
    "- Make the lesson GENERAL: it must still be useful for the next similar task. Do not "
    "retell this run step by step and do not give advice that only fits this exact case.\n"
    "- When there is genuinely nothing to learn (for example the task was trivial, or the failure "
    "was a passing network or provider hiccup), reply with exactly "
    "<skip>nothing actionable</skip> and nothing else.\n"
    "- Otherwise write ALL four blocks below, each on ONE line.\n"
    "- <tags> holds 2-5 short lowercase keywords separated by commas (join words with hyphens) "
    "that a future similar task is likely to contain.\n"
    "\n"
    "OUTPUT:\n"
    "<situation>when this lesson applies</situation>\n"
    "<mistake>what went wrong this time</mistake>\n"
    "<correction>what to do differently next time</correction>\n"
    "<tags>keyword-one, keyword-two, keyword-three</tags>\n";

// A field longer than this is not "one line"; the cut keeps a runaway reply from producing a fact
// the store would reject (kMaxFactBytes) and the queue would retry for nothing.
constexpr size_t kMaxFieldChars = 1000;
constexpr size_t kMaxTags = 8;
constexpr size_t kMaxTagChars = 40;
constexpr double kTemperature = 0.2;
constexpr int kMaxTokens = 400;

std::vector<std::string> ParseTags(const internal::TagBlock& block) {
  std::vector<std::string> tags;
  std::string text = internal::OneLine(block, kMaxFieldChars);
  std::string_view rest = text;
  while (!rest.empty() && tags.size() < kMaxTags) {
    size_t comma = rest.find(',');
    std::string_view piece = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    std::string tag = TruncateUtf8Chars(ToLowerAscii(Trim(piece)), kMaxTagChars);
    if (tag.empty()) continue;
    bool seen = false;
    for (const std::string& t : tags) seen = seen || t == tag;
    if (!seen) tags.push_back(std::move(tag));
  }
  return tags;
}

// Why a required block is unusable, e.g. "is missing <situation>".
std::string Problem(const internal::TagBlock& block, std::string_view name) {
  std::string tag = "<" + std::string(name) + ">";
  if (!block.found) return "is missing " + tag;
  if (!block.closed) return "has an unclosed " + tag;
  return "has an empty " + tag;
}

}  // namespace

std::string_view LessonSystemPrompt() { return kSystemPrompt; }

std::string LessonUserMessage(const lessonq::LessonRequest& request) {
  std::string out = "TASK:\n";
  out.append(request.task);
  out.append("\n\nATTEMPT:\n").append(TruncateUtf8Chars(request.attempt, kAttemptChars));
  out.append("\n\nOUTCOME (why we are reflecting):\n")
      .append(TruncateUtf8Chars(request.outcome, kOutcomeChars));
  out.append("\n\nTRIGGER: ").append(request.trigger);
  return out;
}

Result<std::optional<Lesson>> ParseLessonReply(std::string_view reply, std::string_view trigger,
                                               Time now) {
  std::string lowered = ToLowerAscii(reply);
  if (lowered.find("<skip>") != std::string::npos) return std::optional<Lesson>();
  internal::TagBlock situation = internal::FindTagBlock(reply, lowered, "situation");
  internal::TagBlock mistake = internal::FindTagBlock(reply, lowered, "mistake");
  internal::TagBlock correction = internal::FindTagBlock(reply, lowered, "correction");
  internal::TagBlock tags = internal::FindTagBlock(reply, lowered, "tags");
  std::string excerpt = " (reply: \"" + internal::ReplyExcerpt(reply) + "\")";
  if (!situation.found && !mistake.found && !correction.found && !tags.found) {
    return InvalidArgumentError(
        "lesson reply has no <situation>, <mistake>, <correction> or <tags> block and no <skip>" +
        excerpt);
  }
  Lesson lesson;
  lesson.situation = internal::OneLine(situation, kMaxFieldChars);
  lesson.mistake = internal::OneLine(mistake, kMaxFieldChars);
  lesson.correction = internal::OneLine(correction, kMaxFieldChars);
  std::string problems;
  if (lesson.situation.empty()) problems = Problem(situation, "situation");
  if (lesson.correction.empty()) {
    problems += (problems.empty() ? "" : " and ") + Problem(correction, "correction");
  }
  if (!problems.empty()) return InvalidArgumentError("lesson reply " + problems + excerpt);
  lesson.tags = ParseTags(tags);
  lesson.trigger = std::string(trigger);
  lesson.created_at = now;
  return std::optional<Lesson>(std::move(lesson));
}

LessonGenerator::LessonGenerator(llm::LlmProvider& provider, std::string model, Clock& clock)
    : provider_(provider), model_(std::move(model)), clock_(clock) {}

const std::string& LessonGenerator::ModelFor(const lessonq::LessonRequest& request) const {
  return model_.empty() ? request.model : model_;
}

Result<std::optional<Lesson>> LessonGenerator::Generate(const lessonq::LessonRequest& request,
                                                        const std::atomic<bool>* cancel) {
  llm::CompletionRequest call;
  call.cancel = cancel;
  call.model = ModelFor(request);
  call.messages.push_back(llm::Message::System(std::string(kSystemPrompt)));
  call.messages.push_back(llm::Message::User(LessonUserMessage(request)));
  call.temperature = kTemperature;
  call.max_tokens = kMaxTokens;
  MEND_ASSIGN_OR_RETURN(llm::Completion completion, internal::TracedComplete(provider_, call));
  return ParseLessonReply(completion.text, request.trigger, clock_.Now());
}

}  // namespace mend::reflexion
