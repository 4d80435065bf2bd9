#include "mend/llm/scripted_provider.h"

#include <utility>

#include "llm/script_format.h"

namespace mend::llm {
namespace {

// group_starts[p] is the index of the first step of turn group p: 0 for p = 0, otherwise the step
// after the (p-1)-th answer. The last entry (p = the number of answers) starts the trailing error
// steps, which answer a conversation that is past every answer of the script.
std::vector<size_t> GroupStarts(const std::vector<ScriptedStep>& steps) {
  std::vector<size_t> starts = {0};
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].error.ok()) starts.push_back(i + 1);
  }
  return starts;
}

}  // namespace

ScriptedProvider::ScriptedProvider(std::vector<ScriptedStep> steps,
                                   std::shared_ptr<const PriceTable> prices)
    : prices_(prices != nullptr ? std::move(prices) : std::make_shared<PriceTable>()),
      steps_(std::move(steps)),
      group_starts_(GroupStarts(steps_)) {}

Result<std::unique_ptr<ScriptedProvider>> ScriptedProvider::FromJson(
    std::string_view json_text, std::shared_ptr<const PriceTable> prices) {
  MEND_ASSIGN_OR_RETURN(std::vector<ScriptedStep> steps, ParseScript(json_text));
  return std::make_unique<ScriptedProvider>(std::move(steps), std::move(prices));
}

Result<std::unique_ptr<ScriptedProvider>> ScriptedProvider::FromFile(
    FileSystem& fs, const std::string& path, std::shared_ptr<const PriceTable> prices) {
  Result<std::string> text = ReadFileToString(fs, path);
  if (!text.ok()) return text.status().Annotate("script file " + path);
  Result<std::unique_ptr<ScriptedProvider>> p = FromJson(*text, std::move(prices));
  if (!p.ok()) return p.status().Annotate(path);
  return p;
}

Result<Completion> ScriptedProvider::Complete(const CompletionRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  requests_.push_back(request);
  // A conversation further along than the cursor was started elsewhere (another process, or a
  // provider that answered its earlier turns): it continues with its turn's answer. The error
  // steps before that answer were for attempts an earlier process made (a run that failed on them
  // and is now resumed), so they are not replayed; a turn past every answer gets the trailing
  // error steps.
  const size_t turn = ConversationTurn(request);
  const size_t start = turn < group_starts_.size() ? group_starts_[turn] : steps_.size();
  if (next_ < start) {
    next_ = turn + 1 < group_starts_.size() ? group_starts_[turn + 1] - 1 : start;
  }
  if (next_ >= steps_.size()) {
    std::string message = "script exhausted after " + std::to_string(steps_.size()) + " responses";
    const size_t answers = group_starts_.size() - 1;
    if (turn >= answers) {
      message += "; the conversation is at turn " + std::to_string(turn) + " and the script has " +
                 std::to_string(answers) + " answers";
    }
    return FailedPreconditionError(message);
  }
  const ScriptedStep& step = steps_[next_++];
  if (!step.error.ok()) return step.error;
  Completion c;
  c.id = "scripted-" + std::to_string(next_);
  c.model = request.model.empty() ? "scripted" : request.model;
  c.text = step.text;
  c.tool_calls = step.tool_calls;
  c.finish_reason = c.tool_calls.empty() ? FinishReason::kStop : FinishReason::kToolCalls;
  c.usage = {step.input_tokens, step.output_tokens};
  c.usage_reported = true;
  c.cost_usd = prices_->CostUsd(c.model, c.usage);
  return c;
}

std::vector<CompletionRequest> ScriptedProvider::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

size_t ScriptedProvider::remaining() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_.size() - next_;
}

}  // namespace mend::llm
