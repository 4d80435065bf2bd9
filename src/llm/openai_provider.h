#pragma once

#include <string_view>

#include "llm/http_client.h"
#include "llm/provider_common.h"
#include "mend/llm/provider.h"

namespace mend::llm {

// An OpenAI-compatible chat completions client: POST {base_url}/v1/chat/completions, as served by
// OpenAI, Ollama, vLLM, llama.cpp's server and OpenRouter. The API key, when not empty, is sent as
// a bearer token. Thread-safe.
class OpenAiProvider final : public LlmProvider {
 public:
  explicit OpenAiProvider(HttpProviderConfig config);

  Result<Completion> Complete(const CompletionRequest& request) override;
  std::string_view name() const override { return "openai"; }

 private:
  Result<Completion> CompleteUnguarded(const CompletionRequest& request);

  HttpProviderConfig config_;
  HttpClient http_;
};

// The completion in one response of the API, or the error it stands for: a non-2xx status as
// HttpErrorToStatus maps it, an unusable 2xx body as BadResponseError. `model` is the one asked for
// (used when the body names none), `now` resolves a Retry-After date. Called inside Guarded() by
// Complete(); kept apart so the response parsing can be tested and fuzzed without a server.
Result<Completion> ParseOpenAiResponse(const HttpResponse& response, const std::string& model,
                                       const PriceTable& prices, Time now);

}  // namespace mend::llm
