#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "llm/http_client.h"
#include "llm/provider_common.h"
#include "mend/llm/embedder.h"

namespace mend::llm {

// An OpenAI-compatible embeddings client: POST {base_url}/v1/embeddings {"model", "input": [...],
// "encoding_format": "base64"}. Vectors are returned in input order (by "index"), each as base64 of
// little-endian float32 (a quarter of the bytes of decimal numbers, and no number to parse) or as
// an array of numbers from an endpoint that ignores the format. An endpoint that refuses the
// request with 400 is asked again without the format, and then never with it. Every vector must
// have the same length; when `dimension` is given it must match, otherwise the first answer fixes
// it. A mismatch or a missing index is kUnavailable (a bad response). HTTP errors map as for
// providers. Thread-safe.
// Reads a 2xx embeddings response for `count` texts: one vector per text, in input order, each
// non-empty. kUnavailable (a bad response) otherwise; never throws.
Result<std::vector<std::vector<float>>> ParseEmbeddingsResponse(const HttpResponse& response,
                                                                size_t count);

class OpenAiEmbedder final : public Embedder {
 public:
  OpenAiEmbedder(HttpProviderConfig config, int dimension);

  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override;
  int dimension() const override { return dimension_.load(); }
  std::string model_id() const override { return "openai:" + config_.model; }

 private:
  Result<std::vector<std::vector<float>>> EmbedUnguarded(const std::vector<std::string>& texts);
  Result<HttpResponse> Post(const std::vector<std::string>& texts, bool base64);

  HttpProviderConfig config_;
  HttpClient http_;
  std::atomic<int> dimension_;
  std::atomic<bool> numbers_only_{false};  // the endpoint refused encoding_format once
};

}  // namespace mend::llm
