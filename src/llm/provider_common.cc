#include "llm/provider_common.h"

#include "llm/errors.h"

namespace mend::llm {

std::string EndpointUrl(std::string_view base_url, std::string_view path) {
  while (!base_url.empty() && base_url.back() == '/') base_url.remove_suffix(1);
  if (base_url.size() >= 3 && base_url.substr(base_url.size() - 3) == "/v1") {
    base_url.remove_suffix(3);
  }
  return std::string(base_url) + std::string(path);
}

Time NowOf(Clock* clock) {
  return clock != nullptr ? clock->Now() : std::chrono::system_clock::now();
}

Result<Json> ParseSuccessBody(std::string_view provider, const HttpResponse& response) {
  if (response.body.empty()) return BadResponseError(provider, response, "empty body");
  Result<Json> j = ParseJson(response.body);
  if (!j.ok()) {
    std::string what = "not JSON";
    if (!response.content_type.empty()) what += ", content type " + response.content_type;
    return BadResponseError(provider, response, ForMessage(what, 120));
  }
  if (!j->is_object()) return BadResponseError(provider, response, "not a JSON object");
  return j;
}

}  // namespace mend::llm
