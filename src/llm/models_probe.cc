// One GET of a provider's model list (`mend doctor`). It stands beside HttpClient rather than in
// it: the client is built for the providers' JSON POSTs, its pooled handles and keep-alive, while a
// probe is one request whose body nobody reads.
#include "mend/llm/models_probe.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "llm/errors.h"
#include "llm/http_client.h"
#include "llm/provider_common.h"

namespace mend::llm {
namespace {

constexpr char kOpenAiUrl[] = "https://api.openai.com";
constexpr char kAnthropicUrl[] = "https://api.anthropic.com";
// A list of models is a few kilobytes; a server that sends much more is not one to trust anyway.
constexpr curl_off_t kMaxBodyBytes = 4 << 20;

// The body is not needed: the status says what the probe wants to know.
size_t Discard(char*, size_t size, size_t count, void*) { return size * count; }

std::vector<std::string> Headers(const ProviderOptions& options) {
  std::vector<std::string> headers = {"Accept: application/json"};
  if (options.kind == "anthropic") {
    headers.push_back("anthropic-version: 2023-06-01");
    if (!options.api_key.empty()) headers.push_back("x-api-key: " + options.api_key);
  } else if (!options.api_key.empty()) {
    headers.push_back("Authorization: Bearer " + options.api_key);
  }
  return headers;
}

Status ProbeError(CURLcode code, const std::string& url, const char* errbuf) {
  const std::string detail = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(code);
  const std::string where = "GET " + RedactUrl(url) + ": ";
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return DeadlineExceededError(where + "timed out: " + detail).WithDetailCode("timeout");
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return InvalidArgumentError(where + "bad URL: " + detail).WithDetailCode("bad_url");
    case CURLE_PEER_FAILED_VERIFICATION:
      return FailedPreconditionError(where + "TLS verification failed: " + detail)
          .WithDetailCode("tls");
    default:
      return UnavailableError(where + detail).WithDetailCode("unreachable");
  }
}

}  // namespace

Result<ModelsProbe> ProbeModels(const ProviderOptions& options, std::chrono::milliseconds timeout) {
  if (options.kind != "openai" && options.kind != "anthropic") {
    return InvalidArgumentError("provider \"" + options.kind + "\" has no models endpoint");
  }
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  const std::string base = options.base_url.empty()
                               ? (options.kind == "anthropic" ? kAnthropicUrl : kOpenAiUrl)
                               : options.base_url;
  const std::string url = EndpointUrl(base, "/v1/models");
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  if (curl == nullptr) return InternalError("curl_easy_init failed");
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> list(nullptr, &curl_slist_free_all);
  for (const std::string& header : Headers(options)) {
    list.reset(curl_slist_append(list.release(), header.c_str()));
  }
  char errbuf[CURL_ERROR_SIZE] = {0};
  const auto connect = std::min(options.connect_timeout, timeout);
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, list.get());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, kMaxBodyBytes);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &Discard);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  const CURLcode code = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  // A body over the limit still came with a status, which is all a probe asks for.
  const bool answered = code == CURLE_FILESIZE_EXCEEDED && status > 0;
  if (code != CURLE_OK && !answered) {
    return RedactSecret(ProbeError(code, url, errbuf), options.api_key);
  }
  return ModelsProbe{RedactUrl(url), static_cast<int>(status)};
}

}  // namespace mend::llm
