#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mend/base/result.h"

namespace mend::testing {

// One scripted answer of the fake server. By default a 200 with `text` (or `tool_calls`) and
// `usage`, rendered in the shape of the endpoint that was called (OpenAI chat completions,
// Anthropic messages or OpenAI embeddings).
struct FakeResponse {
  struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;  // JSON text
  };
  enum class Fault {
    kNone,
    kMalformedJson,    // 200 with a body that is not JSON
    kTruncatedBody,    // 200 whose body stops halfway (Content-Length promises more)
    kHtmlErrorPage,    // `status` with a proxy's HTML page instead of JSON
    kDropConnection,   // close the connection without answering
    kEmptyBody,        // 200 with an empty body
    kNonUtf8,          // 200 whose text contains invalid UTF-8 bytes
    kOversizedBody,    // 200 with a body of `oversize_bytes` bytes of valid JSON
  };

  int status = 200;
  std::string text;
  std::vector<ToolCall> tool_calls;
  int64_t input_tokens = 10;
  int64_t output_tokens = 5;
  bool omit_usage = false;
  std::string finish_reason;  // empty: "stop" or "tool_calls" as fits
  std::chrono::milliseconds latency{0};
  std::optional<int> retry_after_seconds;  // sets the Retry-After header
  std::string error_message = "scripted error";  // for status >= 400, in the provider's error shape
  std::string error_type;                        // e.g. "context_length_exceeded"
  std::string raw_body;  // when not empty, sent verbatim (Content-Type application/json)
  Fault fault = Fault::kNone;
  size_t oversize_bytes = 64 << 20;
  std::vector<std::vector<float>> embeddings;  // for /v1/embeddings; empty: derived from input
};

// A request the server received, in arrival order.
struct RecordedRequest {
  std::string method;
  std::string path;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  int connection_id = 0;  // distinct per TCP connection: shows keep-alive reuse
  std::string Header(const std::string& name) const;  // case-insensitive; "" when absent
};

// An OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1 with an ephemeral port, for tests
// and benchmarks (DESIGN.md §5). Endpoints: POST /v1/chat/completions, POST /v1/messages,
// POST /v1/embeddings, GET /v1/models. Answers come from the script in order; when the script is
// empty, the default response (a 200 "ok") is used. Thread-safe.
class FakeLlmServer {
 public:
  // Starts listening; the server stops when the object is destroyed.
  static Result<std::unique_ptr<FakeLlmServer>> Start();
  ~FakeLlmServer();

  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:<port>"

  void Enqueue(FakeResponse response);
  void SetDefault(FakeResponse response);
  // Requests must carry this bearer token / x-api-key, otherwise 401. Empty: no check.
  void RequireApiKey(std::string key);

  std::vector<RecordedRequest> requests() const;
  size_t request_count() const;
  int connection_count() const;  // distinct TCP connections accepted so far
  void ClearRequests();

 private:
  class Impl;
  explicit FakeLlmServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mend::testing
