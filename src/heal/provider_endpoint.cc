#include "mend/heal/provider_endpoint.h"

#include <string_view>

namespace mend::heal {

ProviderEndpoint EndpointOf(const agent::RunModel& model) {
  ProviderEndpoint endpoint;
  endpoint.provider = model.provider;
  std::string_view url = model.base_url;
  // A query or fragment may carry a key (`?api-key=...`); it never names another endpoint.
  url = url.substr(0, url.find_first_of("?#"));
  const size_t scheme = url.find("://");
  const size_t host = scheme == std::string_view::npos ? 0 : scheme + 3;
  const size_t path = url.find('/', host);
  const size_t at =
      url.substr(host, path == std::string_view::npos ? url.npos : path - host).rfind('@');
  std::string cleaned(url.substr(0, host));
  cleaned += at == std::string_view::npos ? url.substr(host) : url.substr(host + at + 1);
  while (!cleaned.empty() && cleaned.back() == '/') cleaned.pop_back();
  endpoint.base_url = std::move(cleaned);
  return endpoint;
}

std::string DescribeEndpoint(const ProviderEndpoint& endpoint) {
  if (endpoint.provider.empty() && endpoint.base_url.empty()) return "(provider not recorded)";
  std::string text = endpoint.provider.empty() ? "(unknown provider)" : endpoint.provider;
  return text + (endpoint.base_url.empty() ? " (default URL)" : " at " + endpoint.base_url);
}

}  // namespace mend::heal
