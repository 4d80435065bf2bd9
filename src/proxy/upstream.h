#pragma once

// The proxy's HTTP client towards the upstream: one transfer at a time per call, driven by the
// thread that serves the client, so a streamed reply is relayed as it arrives and a client that
// goes away cancels the upstream request at once.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/result.h"

namespace mend::proxy {

struct UpstreamRequest {
  std::string method = "POST";
  std::string url;
  std::vector<std::string> headers;  // "Name: value" lines
  std::string body;
};

struct UpstreamTimeouts {
  std::chrono::milliseconds connect{10'000};
  std::chrono::milliseconds idle{300'000};  // the longest silence inside one reply
};

class UpstreamPool;

// One upstream transfer. Transport failures are a Status: kUnavailable (refused, reset, closed
// early), kDeadlineExceeded (connect or idle timeout), kInvalidArgument (a malformed URL).
// Not thread-safe: one thread drives it.
class UpstreamCall {
 public:
  ~UpstreamCall();  // cancels a transfer that did not finish
  UpstreamCall(const UpstreamCall&) = delete;
  UpstreamCall& operator=(const UpstreamCall&) = delete;

  // Drives the transfer until the reply's status line and headers are in.
  Status WaitForHeaders();
  int status() const { return status_; }
  // The reply's header (case-insensitive name); "" when absent.
  std::string Header(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }

  // Drives the transfer until body bytes are in or it ends, and moves them into `out` (cleared
  // first). OkStatus with an empty `out` and done() true: the reply ended normally.
  Status Read(std::string& out);
  bool done() const { return done_; }
  // Reads the rest of the body (at most `max_bytes`: kResourceExhausted beyond).
  Result<std::string> ReadAll(size_t max_bytes);

  // Aborts the transfer (the connection is closed); Read then says kCancelled.
  void Cancel();

 private:
  friend class UpstreamPool;
  struct Handles;
  UpstreamCall(UpstreamPool& pool, std::unique_ptr<Handles> handles, UpstreamTimeouts timeouts);
  Status Pump();  // one round of curl_multi_perform + poll
  Status Finish(int curl_code);

  static size_t OnHeader(char* data, size_t size, size_t count, void* self);
  static size_t OnBody(char* data, size_t size, size_t count, void* self);

  UpstreamPool& pool_;
  std::unique_ptr<Handles> handles_;
  UpstreamTimeouts timeouts_;
  std::string request_body_;
  void* header_list_ = nullptr;  // curl_slist*
  int status_ = 0;
  bool headers_done_ = false;
  bool done_ = false;
  bool cancelled_ = false;
  Status error_;
  std::string buffer_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::chrono::steady_clock::time_point last_progress_;
};

// Keeps libcurl handles (and so their open connections) for reuse across calls. Thread-safe.
class UpstreamPool {
 public:
  explicit UpstreamPool(UpstreamTimeouts timeouts);
  ~UpstreamPool();
  UpstreamPool(const UpstreamPool&) = delete;
  UpstreamPool& operator=(const UpstreamPool&) = delete;

  // Starts `request` (nothing is sent until the call is driven). kInvalidArgument for a URL
  // libcurl refuses.
  Result<std::unique_ptr<UpstreamCall>> Start(UpstreamRequest request);

 private:
  friend class UpstreamCall;
  void Release(std::unique_ptr<UpstreamCall::Handles> handles, bool reusable);

  UpstreamTimeouts timeouts_;
  std::mutex mu_;
  std::vector<std::unique_ptr<UpstreamCall::Handles>> idle_;
};

}  // namespace mend::proxy
