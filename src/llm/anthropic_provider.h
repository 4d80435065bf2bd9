#pragma once

#include <string_view>

#include "llm/http_client.h"
#include "llm/provider_common.h"
#include "mend/llm/provider.h"

namespace mend::llm {

// The Anthropic Messages API: POST {base_url}/v1/messages with x-api-key and anthropic-version
// 2023-06-01. System messages become the top-level "system"; tool results become tool_result
// blocks of a user message; consecutive messages of one role are merged, as the API requires
// alternating roles. max_tokens defaults to 4096 (the API requires it). Thread-safe.
class AnthropicProvider final : public LlmProvider {
 public:
  explicit AnthropicProvider(HttpProviderConfig config);

  Result<Completion> Complete(const CompletionRequest& request) override;
  std::string_view name() const override { return "anthropic"; }

 private:
  Result<Completion> CompleteUnguarded(const CompletionRequest& request);

  HttpProviderConfig config_;
  HttpClient http_;
};

}  // namespace mend::llm
