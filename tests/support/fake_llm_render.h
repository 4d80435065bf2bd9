#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/fake_llm_server.h"

// Renders the bodies the fake server sends, in the shapes of the real APIs. Pure functions, no I/O.
namespace mend::testing::fake_llm {

enum class Endpoint { kChatCompletions, kMessages, kEmbeddings, kModels };

// What a body depends on besides the scripted response.
struct RenderContext {
  std::string model;                // the request's "model"
  int64_t sequence = 0;             // distinct per response: makes ids unique
  std::vector<std::string> inputs;  // the embedding inputs, for kEmbeddings
  bool base64 = false;              // embeddings as base64 of float32 ("encoding_format")
};

// The 200 body of `endpoint` for `response` (text, tool calls, usage or embeddings).
std::string RenderSuccess(Endpoint endpoint, const FakeResponse& response,
                          const RenderContext& context);

// The error body for HTTP `status` in the endpoint's provider shape: OpenAI's
// {"error":{...}} or Anthropic's {"type":"error","error":{...}}.
std::string RenderError(Endpoint endpoint, int status, const FakeResponse& response);

// A reverse proxy's HTML error page for `status`.
std::string RenderHtmlErrorPage(int status);

// The GET /v1/models list.
std::string RenderModels();

// The server-sent events of a streamed answer, each complete with its trailing blank line:
// chat.completion.chunk deltas ending in "data: [DONE]" for chat completions, the message_start …
// message_stop events for messages.
std::vector<std::string> RenderStream(Endpoint endpoint, const FakeResponse& response,
                                      const RenderContext& context, bool include_usage);

// A deterministic unit vector of 8 floats derived from the bytes of `input`.
std::vector<float> DeriveEmbedding(std::string_view input);

// The finish reason in each API's vocabulary; the script may use either ("length" and
// "max_tokens" are the same). Empty: derived from whether there are tool calls.
std::string OpenAiFinishReason(const FakeResponse& response);
std::string AnthropicStopReason(const FakeResponse& response);

// The standard reason phrase of `status` ("Too Many Requests"), or "Error".
std::string_view ReasonPhrase(int status);

}  // namespace mend::testing::fake_llm
