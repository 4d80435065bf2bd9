#include "mend/llm/recording_provider.h"

#include <algorithm>
#include <utility>

#include "llm/script_format.h"

namespace mend::llm {
namespace {

ScriptedStep StepOf(const Result<Completion>& result) {
  ScriptedStep step;
  if (!result.ok()) {
    step.error = result.status();
    return step;
  }
  step.text = result->text;
  step.tool_calls = result->tool_calls;
  step.input_tokens = result->usage.input_tokens;
  step.output_tokens = result->usage.output_tokens;
  return step;
}

}  // namespace

RecordingProvider::RecordingProvider(LlmProvider& inner, FileSystem& fs, std::string path)
    : inner_(inner), fs_(fs), path_(std::move(path)) {}

RecordingProvider::RecordingProvider(std::unique_ptr<LlmProvider> inner, FileSystem& fs,
                                     std::string path)
    : owned_(std::move(inner)), inner_(*owned_), fs_(fs), path_(std::move(path)) {}

Result<Completion> RecordingProvider::Complete(const CompletionRequest& request) {
  // The call runs outside the lock: concurrent requests must not wait for each other's model.
  Result<Completion> result = inner_.Complete(request);
  std::lock_guard<std::mutex> lock(mu_);
  AlignWithTurn(request);
  steps_.push_back(StepOf(result));
  if (result.ok()) ++answers_;
  // The whole cassette each time: after a failed write the next one still holds every step, and
  // a reader never needs more than the latest file.
  Status written = WriteFileAtomically(fs_, path_, SerializeScript(steps_));
  last_write_ = written.ok() ? OkStatus() : written.Annotate("recording " + path_);
  return result;
}

void RecordingProvider::AlignWithTurn(const CompletionRequest& request) {
  // A replay jumps to the request's turn group when it is behind it (scripted_provider.h); the
  // answers the conversation already had, taken from its history, fill the gap so that the group
  // begins exactly where this response is recorded.
  std::vector<const Message*> history;
  for (const Message& m : request.messages) {
    if (m.role == Role::kAssistant) history.push_back(&m);
  }
  for (size_t i = answers_; i < history.size(); ++i) {
    ScriptedStep step;
    step.text = history[i]->content;
    step.tool_calls = history[i]->tool_calls;
    steps_.push_back(std::move(step));
  }
  answers_ = std::max(answers_, history.size());
}

std::string_view RecordingProvider::name() const { return inner_.name(); }

Status RecordingProvider::last_write_status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_write_;
}

size_t RecordingProvider::steps_recorded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_.size();
}

}  // namespace mend::llm
