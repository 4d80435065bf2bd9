#include "llm/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "mend/base/utf8.h"

namespace mend::llm {
namespace {

// State of one transfer, shared with libcurl's callbacks.
struct Transfer {
  std::string body;
  std::string content_type;
  std::string retry_after;
  size_t max_bytes = 0;
  bool too_large = false;
  const std::atomic<bool>* cancel = nullptr;
};

// libcurl's progress callback: a non-zero return aborts the transfer.
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const Transfer* t = static_cast<const Transfer*>(user);
  return t->cancel != nullptr && t->cancel->load() ? 1 : 0;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->body.size() + n > t->max_bytes) {
    t->too_large = true;
    return 0;  // makes libcurl abort the transfer with CURLE_WRITE_ERROR
  }
  t->body.append(data, n);
  return n;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  std::string_view line(data, n);
  // A status line starts a new header block (after "100 Continue"); keep only the last one's.
  if (StartsWithNoCase(line, "HTTP/")) {
    t->content_type.clear();
    t->retry_after.clear();
  } else if (StartsWithNoCase(line, "content-type:")) {
    t->content_type = std::string(Trim(line.substr(13)));
  } else if (StartsWithNoCase(line, "retry-after:")) {
    t->retry_after = std::string(Trim(line.substr(12)));
  }
  return n;
}

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

Status TransportError(CURLcode code, const Transfer& t, const std::string& url,
                      const char* errbuf) {
  std::string detail = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(code);
  std::string where = "POST " + RedactUrl(url) + ": ";
  if (t.too_large) {
    // Retrying may get a normal-sized answer (a model that rambled, a proxy's oddity), so this is
    // transient rather than permanent; the detail code lets callers tell it apart.
    return UnavailableError(where + "response larger than the limit of " +
                            std::to_string(t.max_bytes) + " bytes")
        .WithDetailCode("response_too_large");
  }
  switch (code) {
    case CURLE_ABORTED_BY_CALLBACK:
      return CancelledError(where + "cancelled").WithDetailCode("cancelled");
    case CURLE_OPERATION_TIMEDOUT:
      return DeadlineExceededError(where + "timed out: " + detail).WithDetailCode("timeout");
    case CURLE_FILESIZE_EXCEEDED:
      return UnavailableError(where + "response larger than the limit of " +
                              std::to_string(t.max_bytes) + " bytes")
          .WithDetailCode("response_too_large");
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return InvalidArgumentError(where + "bad URL: " + detail).WithDetailCode("bad_url");
    case CURLE_PEER_FAILED_VERIFICATION:
      return FailedPreconditionError(where + "TLS verification failed: " + detail)
          .WithDetailCode("tls");
    default:
      // Refused, reset, DNS, receive errors, truncated bodies, empty replies: the next attempt
      // may well work.
      return UnavailableError(where + detail).WithDetailCode("transport");
  }
}

// Sets every option of one POST on a fresh or reset handle.
void Configure(CURL* curl, const HttpClientOptions& options, const std::string& url,
               const std::string& body, curl_slist* list, Transfer* transfer, char* errbuf) {
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: safe in threads
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(transfer->max_bytes));
  curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, options.reuse_connections ? 0L : 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, transfer);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  // gzip only: cheap to decode, and every provider offers it (brotli at the servers' default
  // quality costs more CPU than it saves on responses of a few kilobytes).
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "gzip");
  if (transfer->cancel != nullptr) {
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, transfer);
  }
}

}  // namespace

std::string RedactUrl(std::string_view url) {
  size_t scheme = url.find("://");
  size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string_view authority =
      url.substr(start, end == std::string_view::npos ? url.npos : end - start);
  size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, start)) + std::string(url.substr(start + at + 1));
}

HttpClient::HttpClient(HttpClientOptions options) : options_(options) { GlobalInitOnce(); }

HttpClient::~HttpClient() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* HttpClient::AcquireHandle() {
  if (options_.reuse_connections) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      // reset clears options but keeps the handle's live connections.
      curl_easy_reset(static_cast<CURL*>(h));
      return h;
    }
  }
  return curl_easy_init();
}

void HttpClient::ReleaseHandle(void* handle) {
  if (!options_.reuse_connections) {
    curl_easy_cleanup(static_cast<CURL*>(handle));
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(handle);
}

Result<HttpResponse> HttpClient::PostJson(const std::string& url,
                                          const std::vector<std::string>& headers,
                                          const std::string& body,
                                          const std::atomic<bool>* cancel) {
  if (cancel != nullptr && cancel->load()) {
    return CancelledError("POST " + RedactUrl(url) + ": cancelled").WithDetailCode("cancelled");
  }
  CURL* curl = static_cast<CURL*>(AcquireHandle());
  if (curl == nullptr) return InternalError("curl_easy_init failed");
  Transfer t;
  t.max_bytes = options_.max_response_bytes;
  t.cancel = cancel;
  char errbuf[CURL_ERROR_SIZE] = {0};

  curl_slist* list = nullptr;
  list = curl_slist_append(list, "Content-Type: application/json");
  list = curl_slist_append(list, "Accept: application/json");
  list = curl_slist_append(list, "Expect:");  // no 100-continue round trip for large bodies
  for (const std::string& h : headers) list = curl_slist_append(list, h.c_str());

  Configure(curl, options_, url, body, list, &t, errbuf);

  CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  // The handle must not keep pointers into this frame once it is back in the pool.
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  curl_slist_free_all(list);
  ReleaseHandle(curl);

  if (code != CURLE_OK) return TransportError(code, t, url, errbuf);
  HttpResponse response;
  response.status = static_cast<int>(status);
  response.body = std::move(t.body);
  response.content_type = std::move(t.content_type);
  response.retry_after = std::move(t.retry_after);
  return response;
}

}  // namespace mend::llm
