#include "reflexion/quality_call.h"

#include <utility>

#include "reflexion/quality_prompts.h"

namespace mend::reflexion::internal {

Result<llm::Completion> AskModel(llm::LlmProvider& provider, const std::string& model,
                                 std::string system, std::string user, int max_tokens) {
  llm::CompletionRequest call;
  call.model = model;
  call.messages.push_back(llm::Message::System(std::move(system)));
  call.messages.push_back(llm::Message::User(std::move(user)));
  call.temperature = kQualityTemperature;
  call.max_tokens = max_tokens;
  return provider.Complete(call);
}

}  // namespace mend::reflexion::internal
