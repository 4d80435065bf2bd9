#include <cctype>
#include <optional>
#include <string>
#include <utility>

#include "mend/base/utf8.h"
#include "mend/obs/trace.h"
#include "mend/reflexion/hooks.h"
#include "reflexion/quality_call.h"
#include "reflexion/quality_prompts.h"
#include "reflexion/tag_block.h"

namespace mend::reflexion {
namespace {

constexpr int kCritiqueMaxTokens = 600;

// "7", " 7 ", "7/10" → 7. Anything else, or a number outside 1..10, → nullopt.
std::optional<int> ParseScore(std::string_view text) {
  text = Trim(text);
  size_t digits = 0;
  while (digits < text.size() && digits < 3 &&
         std::isdigit(static_cast<unsigned char>(text[digits]))) {
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  std::string_view rest = Trim(text.substr(digits));
  if (!rest.empty() && rest != "/10") return std::nullopt;
  int score = std::stoi(std::string(text.substr(0, digits)));
  if (score < 1 || score > 10) return std::nullopt;
  return score;
}

}  // namespace

RefineHook::RefineHook(llm::LlmProvider& provider, RefineOptions options)
    : provider_(provider), options_(std::move(options)) {}

Status RefineHook::AfterRun(agent::RunOutcome& outcome) {
  if (!outcome.error.ok() || outcome.output.empty()) return OkStatus();
  obs::Span span = obs::StartSpan("mend.refine");
  obs::ActiveSpanScope scope(span);
  const std::string before = outcome.output;
  Status refined = Refine(outcome);
  auto flag = outcome.flags.find(std::string(kFlagRefineLowQuality));
  span.SetAttribute("mend.refine.low_quality", flag != outcome.flags.end() && flag->second)
      .SetAttribute("mend.refine.replaced", outcome.output != before);
  if (!refined.ok()) {
    span.SetError(StatusCodeName(refined.code()), refined.message());
  } else {
    span.SetOk();
  }
  return refined;
}

Status RefineHook::Refine(agent::RunOutcome& outcome) {
  const std::string task = outcome.run == nullptr ? "" : outcome.run->task;
  const std::string draft = TruncateUtf8Chars(outcome.output, internal::kMaxDraftChars);
  const std::string task_and_draft = "TASK:\n" + task + "\n\nDRAFT ANSWER:\n" + draft;

  MEND_ASSIGN_OR_RETURN(
      llm::Completion review,
      internal::AskModel(provider_, options_.model, std::string(internal::kRefineCritiqueSystem),
                         task_and_draft, kCritiqueMaxTokens));
  std::string lowered = ToLowerAscii(review.text);
  internal::TagBlock score_block = internal::FindTagBlock(review.text, lowered, "score");
  std::optional<int> score =
      score_block.closed ? ParseScore(score_block.content) : std::optional<int>();
  if (!score) {
    return InvalidArgumentError("critique reply has no <score> from 1 to 10 (reply: \"" +
                                internal::ReplyExcerpt(review.text) + "\")");
  }
  // Only a low score sets the flag; a good draft leaves the flags as earlier hooks left them.
  if (*score >= options_.low_quality_below) return OkStatus();
  outcome.flags[std::string(kFlagRefineLowQuality)] = true;
  if (!options_.replace_answer) return OkStatus();

  std::string critique =
      internal::Multiline(internal::FindTagBlock(review.text, lowered, "critique"));
  if (critique.empty()) critique = "(the reviewer gave no details)";
  MEND_ASSIGN_OR_RETURN(
      llm::Completion revision,
      internal::AskModel(
          provider_, options_.model, std::string(internal::kRefineReviseSystem),
          task_and_draft + "\n\nCRITIQUE (score " + std::to_string(*score) + "/10):\n" + critique,
          0));
  std::string revised = internal::Multiline(
      internal::FindTagBlock(revision.text, ToLowerAscii(revision.text), "revised"));
  if (!revised.empty()) outcome.output = std::move(revised);
  return OkStatus();
}

}  // namespace mend::reflexion
