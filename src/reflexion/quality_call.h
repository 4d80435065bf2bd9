#pragma once

#include <string>

#include "mend/base/result.h"
#include "mend/llm/provider.h"

namespace mend::reflexion::internal {

// One completion for a quality hook: a system and a user message at kQualityTemperature.
// `max_tokens` 0 leaves the provider's default. Provider errors come back unchanged.
Result<llm::Completion> AskModel(llm::LlmProvider& provider, const std::string& model,
                                 std::string system, std::string user, int max_tokens);

// provider.Complete(request) as a `chat` span, child of the thread's active span (no span when
// none is active); the request carries the span as its traceparent.
Result<llm::Completion> TracedComplete(llm::LlmProvider& provider, llm::CompletionRequest request);

}  // namespace mend::reflexion::internal
