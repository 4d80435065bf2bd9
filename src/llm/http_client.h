#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mend/base/result.h"

namespace mend::llm {

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds timeout{120'000};  // the whole request, connect included
  size_t max_response_bytes = 32u << 20;
  // Keep-alive: reuse TCP connections across requests. Off opens a new connection per request
  // (for comparison benchmarks and for servers that mishandle keep-alive).
  bool reuse_connections = true;
};

// An HTTP response of any status: non-2xx statuses are not errors at this layer.
struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;  // "" when absent
  std::string retry_after;   // the raw Retry-After header value, "" when absent
};

// A small HTTP client over libcurl for JSON POSTs. Thread-safe: concurrent Post() calls each take
// their own easy handle from a pool; a handle returned to the pool keeps its open connections, so
// sequential requests to the same host reuse one TCP connection.
//
// Transport failures become a Status (never an exception):
//   connection refused / reset / receive error / truncated body / empty reply  kUnavailable
//   timeout (connect or total)                                                 kDeadlineExceeded
//   a body larger than max_response_bytes                                      kUnavailable,
//       detail "response_too_large"
//   a malformed URL or unsupported scheme                                      kInvalidArgument
//   cancelled through `cancel`                                                 kCancelled
// Messages name the URL (without user info) and never contain request headers, so secrets in
// headers do not leak into errors.
class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // POSTs `body` with Content-Type application/json. `headers` are "Name: value" lines. When
  // `cancel` is set, the transfer is aborted soon after *cancel becomes true (libcurl's progress
  // callback runs about once a second even while idle): kCancelled.
  Result<HttpResponse> PostJson(const std::string& url, const std::vector<std::string>& headers,
                                const std::string& body, const std::atomic<bool>* cancel = nullptr);

 private:
  void* AcquireHandle();
  void ReleaseHandle(void* handle);

  HttpClientOptions options_;
  std::mutex mu_;
  std::vector<void*> idle_;  // CURL* easy handles, owned
};

// `url` without "user:password@" so it can appear in messages.
std::string RedactUrl(std::string_view url);

}  // namespace mend::llm
