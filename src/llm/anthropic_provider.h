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

// The completion in one response of the API, or the error it stands for: a non-2xx status as
// HttpErrorToStatus maps it, an unusable 2xx body as BadResponseError. `model` is the one asked for
// (used when the body names none), `now` resolves a Retry-After date. Called inside Guarded() by
// Complete(); kept apart so the response parsing can be tested and fuzzed without a server.
Result<Completion> ParseAnthropicResponse(const HttpResponse& response, const std::string& model,
                                          const PriceTable& prices, Time now);

}  // namespace mend::llm
