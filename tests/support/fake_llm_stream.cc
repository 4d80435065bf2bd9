#include <algorithm>
#include <nlohmann/json.hpp>

#include "tests/support/fake_llm_render.h"

// Streamed answers: OpenAI's chat.completion.chunk events and Anthropic's typed message events
// (the Responses API's events are in fake_llm_responses.cc).
namespace mend::testing::fake_llm {
namespace {

using Json = nlohmann::json;

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string DataEvent(const Json& json) { return "data: " + Dump(json) + "\n\n"; }

class ChatStream {
 public:
  ChatStream(const FakeResponse& r, const RenderContext& context) : r_(r), context_(context) {}

  std::vector<std::string> Render(bool include_usage) {
    Chunk({{"role", "assistant"}, {"content", ""}}, nullptr);
    for (const std::string& piece : TextPieces(r_.text)) Chunk({{"content", piece}}, nullptr);
    for (size_t i = 0; i < r_.tool_calls.size(); ++i) {
      const auto& call = r_.tool_calls[i];
      Json head = {{"index", i},
                   {"id", call.id},
                   {"type", "function"},
                   {"function", {{"name", call.name}, {"arguments", ""}}}};
      Chunk({{"tool_calls", Json::array({head})}}, nullptr);
      for (const std::string& piece : SplitInto(call.arguments, r_.argument_pieces)) {
        Json args = {{"index", i}, {"function", {{"arguments", piece}}}};
        Chunk({{"tool_calls", Json::array({args})}}, nullptr);
      }
    }
    Chunk(Json::object(), OpenAiFinishReason(r_));
    if (include_usage && !r_.omit_usage) {
      Json usage = Base();
      usage["choices"] = Json::array();
      usage["usage"] = {{"prompt_tokens", r_.input_tokens},
                        {"completion_tokens", r_.output_tokens},
                        {"total_tokens", r_.input_tokens + r_.output_tokens}};
      events_.push_back(DataEvent(usage));
    }
    events_.push_back("data: [DONE]\n\n");
    return std::move(events_);
  }

 private:
  Json Base() const {
    return {{"id", "chatcmpl-fake" + std::to_string(context_.sequence)},
            {"object", "chat.completion.chunk"},
            {"created", 1700000000 + context_.sequence},
            {"model", context_.model}};
  }

  void Chunk(Json delta, Json finish_reason) {
    Json chunk = Base();
    chunk["choices"] = Json::array(
        {{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish_reason)}}});
    events_.push_back(DataEvent(chunk));
  }

  const FakeResponse& r_;
  const RenderContext& context_;
  std::vector<std::string> events_;
};

class MessageStream {
 public:
  MessageStream(const FakeResponse& r, const RenderContext& context) : r_(r), context_(context) {}

  std::vector<std::string> Render() {
    Json message = {{"id", "msg_fake" + std::to_string(context_.sequence)},
                    {"type", "message"},
                    {"role", "assistant"},
                    {"model", context_.model},
                    {"content", Json::array()},
                    {"stop_reason", nullptr},
                    {"stop_sequence", nullptr},
                    {"usage", {{"input_tokens", r_.input_tokens}, {"output_tokens", 1}}}};
    Emit({{"type", "message_start"}, {"message", message}});
    Emit({{"type", "ping"}});
    int index = 0;
    if (!r_.text.empty() || r_.tool_calls.empty()) TextBlock(index++);
    for (const auto& call : r_.tool_calls) {
      Json block = {
          {"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", Json::object()}};
      Emit({{"type", "content_block_start"}, {"index", index}, {"content_block", block}});
      for (const std::string& piece : SplitInto(call.arguments, r_.argument_pieces)) {
        Json delta = {{"type", "input_json_delta"}, {"partial_json", piece}};
        Emit({{"type", "content_block_delta"}, {"index", index}, {"delta", delta}});
      }
      Emit({{"type", "content_block_stop"}, {"index", index++}});
    }
    Emit({{"type", "message_delta"},
          {"delta", {{"stop_reason", AnthropicStopReason(r_)}, {"stop_sequence", nullptr}}},
          {"usage", {{"output_tokens", r_.output_tokens}}}});
    Emit({{"type", "message_stop"}});
    return std::move(events_);
  }

 private:
  void TextBlock(int index) {
    Json block = {{"type", "text"}, {"text", ""}};
    Emit({{"type", "content_block_start"}, {"index", index}, {"content_block", block}});
    for (const std::string& piece : TextPieces(r_.text)) {
      Json delta = {{"type", "text_delta"}, {"text", piece}};
      Emit({{"type", "content_block_delta"}, {"index", index}, {"delta", delta}});
    }
    Emit({{"type", "content_block_stop"}, {"index", index}});
  }

  void Emit(const Json& event) { events_.push_back(TypedEvent(event)); }

  const FakeResponse& r_;
  const RenderContext& context_;
  std::vector<std::string> events_;
};

}  // namespace

// Clients must join deltas; pieces of 8 bytes make even short texts arrive in several.
std::vector<std::string> TextPieces(const std::string& text) {
  constexpr size_t kPiece = 8;
  std::vector<std::string> pieces;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.size(), begin + kPiece);
    while (end < text.size() && IsContinuation(text[end])) ++end;
    pieces.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return pieces;
}

std::vector<std::string> SplitInto(const std::string& text, int n) {
  const size_t count = static_cast<size_t>(std::max(1, n));
  std::vector<std::string> pieces;
  size_t begin = 0;
  for (size_t i = 1; i <= count; ++i) {
    size_t end = std::max(begin, text.size() * i / count);
    while (end < text.size() && IsContinuation(text[end])) ++end;
    pieces.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return pieces;
}

std::string TypedEvent(const Json& json) {
  return "event: " + json.value("type", std::string()) + "\ndata: " + Dump(json) + "\n\n";
}

std::vector<std::string> RenderStream(Endpoint endpoint, const FakeResponse& response,
                                      const RenderContext& context, bool include_usage) {
  if (endpoint == Endpoint::kMessages) return MessageStream(response, context).Render();
  if (endpoint == Endpoint::kResponses) return RenderResponseStream(response, context);
  return ChatStream(response, context).Render(include_usage);
}

}  // namespace mend::testing::fake_llm
