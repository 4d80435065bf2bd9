#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "llm/errors.h"
#include "llm/http_client.h"
#include "llm/json_util.h"
#include "mend/base/clock.h"
#include "mend/llm/prices.h"

namespace mend::llm {

// What the HTTP providers (OpenAI-compatible, Anthropic, the embeddings client) are built from.
struct HttpProviderConfig {
  std::string model;
  std::string base_url;
  std::string api_key;  // secret: only ever placed in a request header
  HttpClientOptions http;
  std::shared_ptr<const PriceTable> prices;  // never null once built by the factory
  Clock* clock = nullptr;                    // for Retry-After dates; null: the system clock
};

// `base_url` + `path` (path starts with "/v1/"). A base URL already ending in "/v1" (as users of
// Ollama or vLLM often write it) or in '/' is accepted.
std::string EndpointUrl(std::string_view base_url, std::string_view path);

Time NowOf(Clock* clock);

// The JSON object of a 2xx response, or BadResponseError (kUnavailable) when the body is empty,
// not JSON, or not an object.
Result<Json> ParseSuccessBody(std::string_view provider, const HttpResponse& response);

// Runs `fn` (which builds and parses JSON) so that no exception escapes and no error message
// contains `secret`.
template <typename T, typename Fn>
Result<T> Guarded(std::string_view provider, std::string_view secret, Fn&& fn) {
  Result<T> r = InternalError("unreachable");
  try {
    r = fn();
  } catch (const std::exception& e) {
    r = InternalError(std::string(provider) + ": unexpected failure: " + e.what());
  }
  if (r.ok()) return r;
  return RedactSecret(r.status(), secret);
}

}  // namespace mend::llm
