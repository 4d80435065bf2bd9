#pragma once

// Server-sent events as the OpenAI and Anthropic streaming APIs send them: an incremental parser
// and the observers that learn from a relayed stream what the span and the lesson need (usage,
// model, the final text, tool calls), without holding the stream back.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"
#include "proxy/api_shape.h"

namespace mend::proxy {

struct SseEvent {
  std::string event;  // "" when the event had no `event:` field
  std::string data;   // the `data:` lines joined with "\n"
  std::string id;
};

// Incremental text/event-stream parser (the WHATWG rules: lines end in \n, \r\n or \r; a blank
// line dispatches; `:` lines are comments; a leading space after the colon is dropped). Feed
// bytes in any chunking; the same events come out. An event larger than `max_event_bytes` is an
// error (kResourceExhausted) and the parser stays failed. Not thread-safe.
class SseParser {
 public:
  explicit SseParser(size_t max_event_bytes = 16u << 20) : max_event_bytes_(max_event_bytes) {}
  // Appends the events completed by `bytes` to `out`.
  Status Feed(std::string_view bytes, std::vector<SseEvent>& out);
  // Whether bytes of an unfinished event are buffered (a stream that ends here was cut).
  bool pending() const;

 private:
  size_t max_event_bytes_;
  // implementation state
  std::string line_;
  SseEvent current_;
  bool has_data_ = false;
  bool cr_pending_ = false;
  Status failed_;
};

// One tool call of a reply.
struct ReplyToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // as the model sent it (JSON text for OpenAI; input JSON for Anthropic)
};

// What a reply (streamed or not) said, as far as the proxy cares.
struct ReplySummary {
  std::string model;
  std::string text;  // the assistant's text, concatenated
  std::vector<ReplyToolCall> tool_calls;
  std::string finish_reason;  // finish_reason / stop_reason / the response's status
  int64_t input_tokens = -1;  // -1: the reply carried no usage
  int64_t output_tokens = -1;
  bool complete = false;  // streams: the terminal event was seen ([DONE], message_stop,
                          // response.completed / response.failed); non-streamed: always true
  std::string error;      // an error the reply carried ("" when none)
};

// Reads a non-streamed 2xx reply body of `shape`. kInvalidArgument when it is not JSON.
Result<ReplySummary> ParseReply(ApiShape shape, std::string_view body);

// Watches the events of a streamed reply of `shape` as they are relayed; never changes them.
// Events it does not understand are ignored. Not thread-safe.
class StreamObserver {
 public:
  explicit StreamObserver(ApiShape shape) : shape_(shape) {}
  void OnEvent(const SseEvent& event);
  const ReplySummary& summary() const { return summary_; }

 private:
  ApiShape shape_;
  ReplySummary summary_;
  // tool calls by their stream index (OpenAI) or content block index (Anthropic)
  std::vector<int64_t> tool_indexes_;
};

}  // namespace mend::proxy
