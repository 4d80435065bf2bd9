#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/fake_llm_server.h"

// Renders the bodies the fake server sends, in the shapes of the real APIs. Pure functions, no I/O.
namespace mend::testing::fake_llm {

enum class Endpoint { kChatCompletions, kResponses, kMessages, kEmbeddings, kModels };

// What a body depends on besides the scripted response.
struct RenderContext {
  std::string model;                // the request's "model"
  int64_t sequence = 0;             // distinct per response: makes ids unique
  std::vector<std::string> inputs;  // the embedding inputs, for kEmbeddings
  bool base64 = false;              // embeddings as base64 of float32 ("encoding_format")
  // For kResponses: the request's parameters that the response object repeats (ResponseObject).
  nlohmann::json request = nlohmann::json::object();
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
// chat.completion.chunk deltas ending in "data: [DONE]" for chat completions, the
// response.created … response.completed events for responses, the message_start … message_stop
// events for messages.
std::vector<std::string> RenderStream(Endpoint endpoint, const FakeResponse& response,
                                      const RenderContext& context, bool include_usage);

// The OpenAI Responses API object for `response` with the given status ("completed",
// "incomplete" or "in_progress") and output items. The request's instructions, max_output_tokens,
// metadata, parallel_tool_calls, previous_response_id, reasoning, store, temperature, text,
// tool_choice, tools, top_p, truncation and user are repeated, each with the API's default when
// the request has none. `usage` is null while "in_progress", otherwise left out with omit_usage.
nlohmann::json ResponseObject(const FakeResponse& response, const RenderContext& context,
                              const std::string& status, nlohmann::json output);
// The complete output items of a finished response: a message item when there is text or no tool
// call, then one function_call item per tool call.
nlohmann::json ResponseOutput(const FakeResponse& response, const RenderContext& context);
// "incomplete" when the finish reason is "length" or "max_tokens", else "completed".
std::string ResponseStatus(const FakeResponse& response);
// The ids of a response's output items.
std::string ResponseMessageId(const RenderContext& context);
std::string ResponseFunctionCallId(const RenderContext& context, size_t index);
// The events of a streamed response (fake_llm_responses.cc).
std::vector<std::string> RenderResponseStream(const FakeResponse& response,
                                              const RenderContext& context);

// Splits text into pieces of about 8 bytes, never inside a UTF-8 sequence; none for "".
std::vector<std::string> TextPieces(const std::string& text);
// Splits text into exactly max(1, n) consecutive pieces, as even in bytes as UTF-8 allows.
std::vector<std::string> SplitInto(const std::string& text, int n);
// A JSON value as compact text; invalid UTF-8 in strings is replaced rather than thrown on.
std::string Dump(const nlohmann::json& json);
// A typed server-sent event: "event: <the value's type>\ndata: <the value>\n\n".
std::string TypedEvent(const nlohmann::json& event);

// A deterministic unit vector of 8 floats derived from the bytes of `input`.
std::vector<float> DeriveEmbedding(std::string_view input);

// The finish reason in each API's vocabulary; the script may use either ("length" and
// "max_tokens" are the same). Empty: derived from whether there are tool calls.
std::string OpenAiFinishReason(const FakeResponse& response);
std::string AnthropicStopReason(const FakeResponse& response);

// The standard reason phrase of `status` ("Too Many Requests"), or "Error".
std::string_view ReasonPhrase(int status);

}  // namespace mend::testing::fake_llm
