// The libcurl OtlpTransport. One easy handle, reused so the connection stays open between
// batches; Cancel() shuts the open socket down so a hanging request ends at once.

#include <curl/curl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <mutex>

#include "mend/base/utf8.h"
#include "mend/obs/otlp_transport.h"

namespace mend::obs {
namespace {

constexpr size_t kMaxReplyBody = 4096;

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// "scheme://host/path" without "user:password@", for messages.
std::string WithoutUserInfo(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  const size_t end = url.find_first_of("/?#", start);
  const size_t at =
      url.substr(start, end == std::string_view::npos ? url.npos : end - start).rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, start)) + std::string(url.substr(start + at + 1));
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* reply = static_cast<HttpReply*>(user);
  const size_t n = size * count;
  const size_t room = kMaxReplyBody - std::min(kMaxReplyBody, reply->body.size());
  reply->body.append(data, std::min(n, room));
  return n;  // the rest of a long body is read and discarded
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* reply = static_cast<HttpReply*>(user);
  const std::string_view line(data, size * count);
  if (StartsWithNoCase(line, "http/")) {
    reply->retry_after.clear();  // a new header block (after 100 Continue)
  } else if (StartsWithNoCase(line, "retry-after:")) {
    reply->retry_after = std::string(Trim(line.substr(12)));
  }
  return size * count;
}

class CurlOtlpTransport final : public OtlpTransport {
 public:
  CurlOtlpTransport() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }
  ~CurlOtlpTransport() override {
    if (curl_ != nullptr) curl_easy_cleanup(curl_);
  }

  Result<HttpReply> Post(const std::string& url, const std::vector<HttpHeader>& headers,
                         const std::string& body, std::string_view content_type,
                         Duration timeout) override {
    const std::string where = "OTLP POST " + WithoutUserInfo(url) + ": ";
    if (cancelled_.load()) return CancelledError(where + "cancelled");
    if (curl_ == nullptr) curl_ = curl_easy_init();
    if (curl_ == nullptr) return InternalError(where + "curl_easy_init failed");
    curl_easy_reset(curl_);  // keeps the open connection

    curl_slist* list = nullptr;
    list = curl_slist_append(list, ("Content-Type: " + std::string(content_type)).c_str());
    list = curl_slist_append(list, "Expect:");
    for (const auto& [name, value] : headers) {
      list = curl_slist_append(list, (name + ": " + value).c_str());
    }
    HttpReply reply;
    char errbuf[CURL_ERROR_SIZE] = {0};
    const long timeout_ms = std::max<long>(
        1,
        static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()));
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_POST, 1L);
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &OnBody);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &reply);
    curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, &OnHeader);
    curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &reply);
    curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl_, CURLOPT_OPENSOCKETFUNCTION, &OnOpenSocket);
    curl_easy_setopt(curl_, CURLOPT_OPENSOCKETDATA, this);
    curl_easy_setopt(curl_, CURLOPT_CLOSESOCKETFUNCTION, &OnCloseSocket);
    curl_easy_setopt(curl_, CURLOPT_CLOSESOCKETDATA, this);
    curl_easy_setopt(curl_, CURLOPT_PROTOCOLS_STR, "http,https");

    const CURLcode code = curl_easy_perform(curl_);
    long status = 0;
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, nullptr);
    curl_slist_free_all(list);

    if (cancelled_.load() && code != CURLE_OK) return CancelledError(where + "cancelled");
    if (code != CURLE_OK) {
      const std::string detail = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(code);
      switch (code) {
        case CURLE_OPERATION_TIMEDOUT:
          return DeadlineExceededError(where + "timed out: " + detail);
        case CURLE_URL_MALFORMAT:
        case CURLE_UNSUPPORTED_PROTOCOL:
          return InvalidArgumentError(where + "bad URL: " + detail);
        default:
          return UnavailableError(where + detail);
      }
    }
    reply.status = static_cast<int>(status);
    return reply;
  }

  void Cancel() override {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_.store(true);
    // shutdown() rather than close(): the descriptor stays curl's to close, but every blocked
    // read or write on it returns at once.
    for (curl_socket_t fd : sockets_) ::shutdown(fd, SHUT_RDWR);
  }

 private:
  static curl_socket_t OnOpenSocket(void* user, curlsocktype, curl_sockaddr* address) {
    auto* self = static_cast<CurlOtlpTransport*>(user);
    std::lock_guard<std::mutex> lock(self->mu_);
    if (self->cancelled_.load()) return CURL_SOCKET_BAD;
    const curl_socket_t fd =
        ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd != CURL_SOCKET_BAD) self->sockets_.push_back(fd);
    return fd;
  }

  static int OnCloseSocket(void* user, curl_socket_t fd) {
    auto* self = static_cast<CurlOtlpTransport*>(user);
    std::lock_guard<std::mutex> lock(self->mu_);
    std::erase(self->sockets_, fd);
    return ::close(fd);
  }

  CURL* curl_ = nullptr;  // used by the Post thread only
  std::mutex mu_;         // guards sockets_ against Cancel()
  std::vector<curl_socket_t> sockets_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace

std::unique_ptr<OtlpTransport> NewCurlOtlpTransport() {
  return std::make_unique<CurlOtlpTransport>();
}

}  // namespace mend::obs
