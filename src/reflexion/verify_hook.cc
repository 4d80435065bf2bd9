#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/utf8.h"
#include "mend/obs/trace.h"
#include "mend/reflexion/hooks.h"
#include "reflexion/quality_call.h"
#include "reflexion/quality_prompts.h"
#include "reflexion/tag_block.h"

namespace mend::reflexion {
namespace {

constexpr int kPlanMaxTokens = 400;
constexpr int kAnswerMaxTokens = 800;
constexpr size_t kMaxQuestionChars = 300;

// "1. Is X true?", "2) ...", "- ...", "* ...", "Q3: ..." → the question text.
std::string_view StripListMarker(std::string_view line) {
  line = Trim(line);
  while (!line.empty() && (line[0] == '-' || line[0] == '*' || line[0] == '#')) {
    line = Trim(line.substr(1));
  }
  if (line.starts_with("\u2022")) line = Trim(line.substr(3));  // a bullet sign
  size_t i = (!line.empty() && (line[0] == 'q' || line[0] == 'Q')) ? 1 : 0;
  size_t digits = i;
  while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
  if (digits > i && digits < line.size() &&
      (line[digits] == '.' || line[digits] == ')' || line[digits] == ':')) {
    line = Trim(line.substr(digits + 1));
  }
  return line;
}

std::vector<std::string> ParseQuestions(std::string_view text, size_t max_questions) {
  std::vector<std::string> questions;
  std::string clean = SanitizeUtf8(text);
  std::string_view rest = clean;
  while (!rest.empty() && questions.size() < max_questions) {
    size_t nl = rest.find('\n');
    std::string_view line = StripListMarker(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    // A line ending in ':' is a heading such as "Questions:", not a question.
    if (line.empty() || line.back() == ':') continue;
    questions.push_back(TruncateUtf8Chars(CollapseWhitespace(line), kMaxQuestionChars));
  }
  return questions;
}

std::string NumberedList(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    out += std::to_string(i + 1) + ". " + items[i] + "\n";
  }
  return out;
}

// Reads the judge's reply into `outcome`: the flag, and with `replace` the revised answer.
Status ApplyVerdict(std::string_view reply, bool replace, agent::RunOutcome& outcome) {
  std::string lowered = ToLowerAscii(reply);
  std::string verdict =
      ToLowerAscii(internal::OneLine(internal::FindTagBlock(reply, lowered, "verdict"), 40));
  if (verdict != "consistent" && verdict != "discrepancy") {
    return InvalidArgumentError(
        "verification reply has no <verdict>consistent</verdict> or "
        "<verdict>discrepancy</verdict> (reply: \"" +
        internal::ReplyExcerpt(reply) + "\")");
  }
  const bool discrepancy = verdict == "discrepancy";
  outcome.flags[std::string(kFlagVerifiedWithDiscrepancy)] = discrepancy;
  if (discrepancy && replace) {
    std::string revised = internal::Multiline(internal::FindTagBlock(reply, lowered, "revised"));
    if (!revised.empty()) outcome.output = std::move(revised);
  }
  return OkStatus();
}

}  // namespace

VerifyHook::VerifyHook(llm::LlmProvider& provider, VerifyOptions options)
    : provider_(provider), options_(std::move(options)) {}

Status VerifyHook::AfterRun(agent::RunOutcome& outcome) {
  if (!outcome.error.ok() || outcome.output.empty() || options_.max_questions <= 0) {
    return OkStatus();
  }
  obs::Span span = obs::StartSpan("mend.verify");
  obs::ActiveSpanScope scope(span);
  Status verified = Verify(outcome);
  auto flag = outcome.flags.find(std::string(kFlagVerifiedWithDiscrepancy));
  span.SetAttribute("mend.verify.flagged", flag != outcome.flags.end() && flag->second);
  if (!verified.ok()) {
    span.SetError(StatusCodeName(verified.code()), verified.message());
  } else {
    span.SetOk();
  }
  return verified;
}

Status VerifyHook::Verify(agent::RunOutcome& outcome) {
  const std::string task = outcome.run == nullptr ? "" : outcome.run->task;
  const std::string draft = TruncateUtf8Chars(outcome.output, internal::kMaxDraftChars);

  std::string plan_system(internal::kVerifyPlanSystem);
  plan_system.replace(plan_system.find("{N}"), 3, std::to_string(options_.max_questions));
  MEND_ASSIGN_OR_RETURN(
      llm::Completion plan,
      internal::AskModel(provider_, options_.model, std::move(plan_system),
                         "TASK:\n" + task + "\n\nDRAFT ANSWER:\n" + draft, kPlanMaxTokens));
  std::vector<std::string> questions =
      ParseQuestions(plan.text, static_cast<size_t>(options_.max_questions));
  if (questions.empty()) return OkStatus();
  const std::string numbered = NumberedList(questions);

  // The second call sees the task and the questions only: answers that never saw the draft
  // cannot inherit its mistakes.
  MEND_ASSIGN_OR_RETURN(
      llm::Completion answers,
      internal::AskModel(provider_, options_.model, std::string(internal::kVerifyAnswerSystem),
                         "TASK:\n" + task + "\n\nQUESTIONS:\n" + numbered, kAnswerMaxTokens));
  MEND_ASSIGN_OR_RETURN(
      llm::Completion judged,
      internal::AskModel(provider_, options_.model, std::string(internal::kVerifyJudgeSystem),
                         "TASK:\n" + task + "\n\nDRAFT ANSWER:\n" + draft +
                             "\n\nVERIFICATION QUESTIONS:\n" + numbered +
                             "\nINDEPENDENT ANSWERS:\n" + SanitizeUtf8(answers.text),
                         0));
  return ApplyVerdict(judged.text, options_.replace_answer, outcome);
}

}  // namespace mend::reflexion
