#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "llm/http_client.h"
#include "llm/provider_common.h"
#include "mend/llm/embedder.h"

namespace mend::llm {

// An OpenAI-compatible embeddings client: POST {base_url}/v1/embeddings {"model", "input": [...]}.
// Vectors are returned in input order (by "index"). Every vector must have the same length; when
// `dimension` is given it must match, otherwise the first answer fixes it. A mismatch or a missing
// index is kUnavailable (a bad response). HTTP errors map as for providers. Thread-safe.
class OpenAiEmbedder final : public Embedder {
 public:
  OpenAiEmbedder(HttpProviderConfig config, int dimension);

  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override;
  int dimension() const override { return dimension_.load(); }
  std::string model_id() const override { return "openai:" + config_.model; }

 private:
  Result<std::vector<std::vector<float>>> EmbedUnguarded(const std::vector<std::string>& texts);

  HttpProviderConfig config_;
  HttpClient http_;
  std::atomic<int> dimension_;
};

}  // namespace mend::llm
