#include "mend/lessonq/job.h"

#include <string>
#include <string_view>

#include "mend/base/hash.h"
#include "mend/base/utf8.h"

namespace mend::lessonq {

std::string NormalizeTask(std::string_view task) {
  return CollapseWhitespace(ToLowerUtf8(Trim(task)));
}

std::string JobIdFor(const LessonRequest& request) {
  std::string key = "task:" + NormalizeTask(request.task);
  key.push_back('\0');
  key += "trigger:" + ToLowerUtf8(Trim(request.trigger));
  key.push_back('\0');
  key += "attempt:";
  key += Trim(request.attempt);
  key.push_back('\0');
  key += "outcome:";
  key += Trim(request.outcome);
  const Sha256Digest digest = Sha256(key);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), 8));
}

LessonEndpoint EndpointOf(const LessonRequest& request) {
  return LessonEndpoint{request.provider, request.base_url};
}

std::string_view CanonicalBaseUrl(std::string_view base_url) {
  while (!base_url.empty() && base_url.back() == '/') base_url.remove_suffix(1);
  return base_url;
}

bool JobFitsEndpoint(const LessonRequest& request, const LessonEndpoint& endpoint) {
  // A job that recorded nothing predates the rule (or was typed by an operator): any process
  // with a provider may generate it, as before.
  if (request.provider.empty() || endpoint.empty()) return true;
  return request.provider == endpoint.provider &&
         CanonicalBaseUrl(request.base_url) == CanonicalBaseUrl(endpoint.base_url);
}

bool IsJobId(std::string_view id) {
  if (id.size() != 16) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace mend::lessonq
