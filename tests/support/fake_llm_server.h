#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mend/base/result.h"

namespace mend::testing {

// One scripted answer of the fake server. By default a 200 with `text` (or `tool_calls`) and
// `usage`, rendered in the shape of the endpoint that was called (OpenAI chat completions,
// OpenAI responses, Anthropic messages or OpenAI embeddings).
struct FakeResponse {
  struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;  // JSON text
  };
  enum class Fault {
    kNone,
    kMalformedJson,   // 200 with a body that is not JSON
    kTruncatedBody,   // 200 whose body stops halfway (Content-Length promises more)
    kHtmlErrorPage,   // `status` (502 when below 400) with a proxy's HTML page, text/html
    kDropConnection,  // close the connection without answering
    kEmptyBody,       // 200 with an empty body
    kNonUtf8,         // 200 whose text is `text` followed by invalid UTF-8 bytes
    kOversizedBody,   // 200 with a body of `oversize_bytes` bytes of valid JSON
    // A streamed request gets the first half of its events (rounded down, at least one), then
    // the connection closes without the chunked terminator; otherwise as kTruncatedBody.
    kStreamCut,
  };

  int status = 200;
  std::string text;
  std::vector<ToolCall> tool_calls;
  int64_t input_tokens = 10;
  int64_t output_tokens = 5;
  bool omit_usage = false;
  // Empty: "stop"/"end_turn" or "tool_calls"/"tool_use" as fits. Either API's vocabulary is
  // accepted and translated ("length" <-> "max_tokens").
  std::string finish_reason;
  std::chrono::milliseconds latency{0};          // waited before answering; cut short when stopping
  std::optional<int> retry_after_seconds;        // sets the Retry-After header
  std::string error_message = "scripted error";  // for status >= 400, in the provider's error shape
  // Overrides the default error kind: OpenAI's "code" (e.g. "context_length_exceeded") or
  // Anthropic's error "type" (e.g. "overloaded_error"). Empty: derived from `status`.
  std::string error_type;
  std::string raw_body;  // when not empty, sent verbatim (Content-Type application/json)
  Fault fault = Fault::kNone;
  size_t oversize_bytes = 64 << 20;
  // For /v1/embeddings, used in turn for the inputs; empty: 8 floats derived from each input.
  std::vector<std::vector<float>> embeddings;
  // For streams (stream_cut too): after writing this many events the stream waits for
  // FakeLlmServer::ResumeStreams() before writing the rest; stopping the server ends it instead.
  // Negative: never. Equal to the number of events: after the last event, holding back the end of
  // the chunked body; more: never.
  int pause_after_events = -1;
  // A second pause, after this many events in all (counted like pause_after_events; at or before
  // the first pause: never). Lets a test act between two resumes, e.g. while a client that went
  // away is noticed. Negative: never.
  int pause_again_after_events = -1;
  // For streams: each tool call's arguments go out as this many consecutive delta events, split
  // as evenly in bytes as UTF-8 allows (a piece may be empty when the arguments are shorter than
  // the count or hold multi-byte characters). Values below 1 count as 1.
  int argument_pieces = 1;
};

// A canned model keyed on what a request says, e.g. on its system prompt. A request matches when
// every string of `contains` occurs inside one of the request's decoded texts (different strings
// may occur in different texts): the `system` prompt (a string or text blocks), the top-level
// `instructions` (a string, as the Responses API sends), each message's `content` (a string, or the
// `text` of each part or block, recursing into the `content` of tool_result blocks), and the
// `input` of embeddings and responses (a string, or items whose `content` is read like a message's,
// plus the string `output` of function_call_output items). Texts are compared after JSON decoding,
// so quotes, backslashes and newlines match as written; comparison is byte-exact and
// case-sensitive. Roles, model, tool names and tool-call arguments are not matched. An empty
// `contains` matches every request.
struct FakeRoute {
  // What follows the last response: the first again, or the last again and again.
  enum class AfterLast { kCycle, kRepeatLast };

  std::string name;  // counts hits (FakeLlmServer::RouteHits); may be empty or shared
  std::vector<std::string> contains;
  // Answered in turn. Empty: every matching request gets the server's default response, which
  // keeps those requests from using up the script.
  std::vector<FakeResponse> responses;
  AfterLast after_last = AfterLast::kCycle;
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

// Parses a script: a JSON array of response objects whose keys are the FakeResponse field names in
// snake_case ("status", "text", "tool_calls" [{"id","name","arguments"}], "input_tokens",
// "output_tokens", "omit_usage", "finish_reason", "latency_ms", "retry_after_seconds",
// "error_message", "error_type", "raw_body", "fault", "oversize_bytes", "embeddings",
// "pause_after_events" and "pause_again_after_events" (integers >= -1), "argument_pieces" (an
// integer >= 1)). "fault" is one of "none", "malformed_json", "truncated_body", "html_error_page",
// "drop_connection", "empty_body", "non_utf8", "oversized_body", "stream_cut"; a tool call's
// "arguments" may be a JSON string or an object. Unknown keys and wrong types are kInvalidArgument,
// naming the element and key.
Result<std::vector<FakeResponse>> ParseFakeScript(std::string_view json);
// The same for a single response object (e.g. the --default file of the executable).
Result<FakeResponse> ParseFakeResponse(std::string_view json);

// Parses a routes file: a JSON array of route objects with the keys "name" (string), "contains" (a
// string or an array of strings; absent: matches everything), "responses" (an array of response
// objects as in ParseFakeScript; absent or empty: the default response) and "cycle" (true:
// AfterLast::kCycle, the default; false: kRepeatLast). Unknown keys and wrong types are
// kInvalidArgument, naming the element and key ("route 1, key contains: ...", "route 0, response 2,
// key status: ...").
Result<std::vector<FakeRoute>> ParseFakeRoutes(std::string_view json);

// One JSON object on one line (no trailing newline) describing `request`: method, path, body,
// connection_id and headers, with the values of Authorization and x-api-key redacted.
std::string RecordedRequestToJsonLine(const RecordedRequest& request);

struct FakeLlmServerOptions {
  int port = 0;             // 0: an ephemeral port
  int worker_threads = 32;  // connections served at the same time (each keep-alive one holds one)
};

// An OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1 with an ephemeral port, for tests
// and benchmarks (docs/fake_llm_server.md). Endpoints: POST /v1/chat/completions,
// POST /v1/responses, POST /v1/messages, POST /v1/embeddings, GET /v1/models. Each POST with a JSON
// object body is answered by the first route it matches (in the order routes were added); failing
// that, by the next scripted response in order; when the script is empty, by the default response
// (a 200 "ok"). Bodies that are not a JSON object get a 400 and GET /v1/models a fixed list,
// neither using the script. With "stream": true, chat completions, responses and messages answer
// 200s as server-sent events (chunks ending in "data: [DONE]", usage only with
// stream_options.include_usage; response.created ... response.completed; or Anthropic's
// message_start ... message_stop events). Unknown paths get a 404 in OpenAI's error shape.
// Connections are kept alive; every request is recorded with the id of its TCP connection.
// Thread-safe.
class FakeLlmServer {
 public:
  // Starts listening and returns once connections are accepted; the server stops when the object
  // is destroyed (open connections are closed, scripted latencies are cut short).
  // kUnavailable when the port cannot be bound.
  static Result<std::unique_ptr<FakeLlmServer>> Start();
  static Result<std::unique_ptr<FakeLlmServer>> Start(const FakeLlmServerOptions& options);
  ~FakeLlmServer();

  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:<port>"

  void Enqueue(FakeResponse response);
  void SetDefault(FakeResponse response);
  // Adds `route` after the routes already added; routes take priority over the script. A route's
  // position in its responses advances once per matching request, under the server's lock, so
  // concurrent requests get each response exactly as often as they would one after another.
  void AddRoute(FakeRoute route);
  // Removes every route, with its position and hit count.
  void ClearRoutes();
  // How many requests routes named `name` have answered since they were added (0 when none is).
  int64_t RouteHits(std::string_view name) const;
  // Requests must carry this bearer token / x-api-key, otherwise 401. Empty: no check.
  void RequireApiKey(std::string key);

  // Called on a server thread for every request as it arrives, after it is recorded. Must be
  // thread-safe; set it before sending requests.
  using RequestObserver = std::function<void(const RecordedRequest&)>;
  void SetRequestObserver(RequestObserver observer);

  std::vector<RecordedRequest> requests() const;
  size_t request_count() const;
  int connection_count() const;  // distinct TCP connections accepted so far
  void ClearRequests();

  // Streams with FakeResponse::pause_after_events wait, once they have written that many events,
  // for the next call of ResumeStreams. A call releases exactly the streams paused at that moment
  // (and sets paused_streams() to 0); a stream that pauses afterwards waits for a later call.
  // Stopping the server releases every paused stream, which then ends without writing the rest.
  void ResumeStreams();
  // The streams paused now, i.e. since the last ResumeStreams.
  size_t paused_streams() const;
  // True as soon as at least `n` streams are paused; false when `timeout` passes first.
  bool WaitForPausedStreams(size_t n, std::chrono::milliseconds timeout) const;

  // Streams that ended before their last event was written because a write failed or the
  // connection was no longer writable: the client (or a proxy between) went away. Streams cut by
  // the stream_cut fault, and streams ended by stopping the server, are not counted. A write into
  // a connection the peer has just closed may still succeed, so the count can lag the peer's close
  // by some events; it is never decremented.
  size_t aborted_streams() const;
  // True as soon as aborted_streams() >= n; false when `timeout` passes first.
  bool WaitForAbortedStreams(size_t n, std::chrono::milliseconds timeout) const;

 private:
  class Impl;
  explicit FakeLlmServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mend::testing
