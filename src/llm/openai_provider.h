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

}  // namespace mend::llm
