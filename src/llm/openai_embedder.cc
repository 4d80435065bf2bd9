#include "llm/openai_embedder.h"

#include <utility>

namespace mend::llm {
namespace {

constexpr std::string_view kProvider = "openai embeddings";

Result<std::vector<float>> ParseVector(const Json& item) {
  const Json* e = Member(item, "embedding");
  if (e == nullptr || !e->is_array() || e->empty()) {
    return InvalidArgumentError("an item without an embedding array");
  }
  std::vector<float> v;
  v.reserve(e->size());
  for (const Json& x : *e) {
    if (!x.is_number()) return InvalidArgumentError("a non-numeric embedding value");
    v.push_back(x.get<float>());
  }
  return v;
}

}  // namespace

OpenAiEmbedder::OpenAiEmbedder(HttpProviderConfig config, int dimension)
    : config_(std::move(config)), http_(config_.http), dimension_(dimension > 0 ? dimension : 0) {}

Result<std::vector<std::vector<float>>> OpenAiEmbedder::Embed(
    const std::vector<std::string>& texts) {
  if (texts.empty()) return std::vector<std::vector<float>>{};
  return Guarded<std::vector<std::vector<float>>>(kProvider, config_.api_key,
                                                  [&] { return EmbedUnguarded(texts); });
}

Result<std::vector<std::vector<float>>> OpenAiEmbedder::EmbedUnguarded(
    const std::vector<std::string>& texts) {
  Json request = {{"model", config_.model}, {"input", texts}};
  std::vector<std::string> headers;
  if (!config_.api_key.empty()) headers.push_back("Authorization: Bearer " + config_.api_key);
  MEND_ASSIGN_OR_RETURN(
      HttpResponse response,
      http_.PostJson(EndpointUrl(config_.base_url, "/v1/embeddings"), headers, DumpJson(request)));
  if (response.status < 200 || response.status >= 300) {
    return HttpErrorToStatus(kProvider, response, NowOf(config_.clock));
  }
  MEND_ASSIGN_OR_RETURN(Json j, ParseSuccessBody(kProvider, response));
  const Json* data = Member(j, "data");
  if (data == nullptr || !data->is_array() || data->size() != texts.size()) {
    return BadResponseError(kProvider, response,
                            "expected " + std::to_string(texts.size()) + " items in \"data\"");
  }
  std::vector<std::vector<float>> out(texts.size());
  for (size_t i = 0; i < data->size(); ++i) {
    const Json& item = (*data)[i];
    int64_t index = IntMember(item, "index").value_or(static_cast<int64_t>(i));
    if (index < 0 || static_cast<size_t>(index) >= out.size() || !out[index].empty()) {
      return BadResponseError(kProvider, response,
                              "bad or repeated index " + std::to_string(index));
    }
    Result<std::vector<float>> v = ParseVector(item);
    if (!v.ok()) return BadResponseError(kProvider, response, v.status().message());
    out[index] = std::move(v).value();
  }
  int expected = dimension_.load();
  for (const auto& v : out) {
    if (expected == 0) {
      // First answer: fix the dimension (a concurrent first call may race; both saw a valid one).
      dimension_.compare_exchange_strong(expected, static_cast<int>(v.size()));
      expected = dimension_.load();
    }
    if (static_cast<int>(v.size()) != expected) {
      return BadResponseError(kProvider, response,
                              "vector of dimension " + std::to_string(v.size()) + ", expected " +
                                  std::to_string(expected));
    }
  }
  return out;
}

}  // namespace mend::llm
