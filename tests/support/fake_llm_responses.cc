#include <nlohmann/json.hpp>
#include <utility>

#include "tests/support/fake_llm_render.h"

// The OpenAI Responses API (POST /v1/responses): the response object and its typed stream events.
namespace mend::testing::fake_llm {
namespace {

using Json = nlohmann::json;

// The request parameters a response object repeats, with the values the API reports when the
// request leaves them out.
Json EchoedDefaults() {
  return {{"instructions", nullptr},
          {"max_output_tokens", nullptr},
          {"metadata", Json::object()},
          {"parallel_tool_calls", true},
          {"previous_response_id", nullptr},
          {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
          {"store", true},
          {"temperature", 1.0},
          {"text", {{"format", {{"type", "text"}}}}},
          {"tool_choice", "auto"},
          {"tools", Json::array()},
          {"top_p", 1.0},
          {"truncation", "disabled"},
          {"user", nullptr}};
}

Json OutputText(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}};
}

Json MessageItem(const RenderContext& context, const std::string& status, Json content) {
  return {{"type", "message"},
          {"id", ResponseMessageId(context)},
          {"status", status},
          {"role", "assistant"},
          {"content", std::move(content)}};
}

Json FunctionCallItem(const RenderContext& context, size_t index,
                      const FakeResponse::ToolCall& call, const std::string& arguments,
                      const std::string& status) {
  return {{"type", "function_call"}, {"id", ResponseFunctionCallId(context, index)},
          {"call_id", call.id},      {"name", call.name},
          {"arguments", arguments},  {"status", status}};
}

bool HasMessage(const FakeResponse& r) { return !r.text.empty() || r.tool_calls.empty(); }

// The item status of a finished message: a response cut short by the token limit leaves its
// message incomplete; function calls are only reported once complete.
std::string MessageStatus(const FakeResponse& r) {
  return ResponseStatus(r) == "incomplete" ? "incomplete" : "completed";
}

class ResponseStream {
 public:
  ResponseStream(const FakeResponse& r, const RenderContext& context) : r_(r), context_(context) {}

  std::vector<std::string> Render() {
    Json started = ResponseObject(r_, context_, "in_progress", Json::array());
    Emit({{"type", "response.created"}, {"response", started}});
    Emit({{"type", "response.in_progress"}, {"response", started}});
    int output_index = 0;
    if (HasMessage(r_)) Message(output_index++);
    for (size_t i = 0; i < r_.tool_calls.size(); ++i) FunctionCall(i, output_index++);
    const std::string status = ResponseStatus(r_);
    Emit({{"type", status == "incomplete" ? "response.incomplete" : "response.completed"},
          {"response", ResponseObject(r_, context_, status, ResponseOutput(r_, context_))}});
    return std::move(events_);
  }

 private:
  void Message(int output_index) {
    const std::string id = ResponseMessageId(context_);
    Emit({{"type", "response.output_item.added"},
          {"output_index", output_index},
          {"item", MessageItem(context_, "in_progress", Json::array())}});
    Json part_at = {{"item_id", id}, {"output_index", output_index}, {"content_index", 0}};
    Json added = part_at;
    added["type"] = "response.content_part.added";
    added["part"] = OutputText("");
    Emit(added);
    for (const std::string& piece : TextPieces(r_.text)) {
      Json delta = part_at;
      delta["type"] = "response.output_text.delta";
      delta["delta"] = piece;
      delta["logprobs"] = Json::array();
      Emit(delta);
    }
    Json text_done = part_at;
    text_done["type"] = "response.output_text.done";
    text_done["text"] = r_.text;
    text_done["logprobs"] = Json::array();
    Emit(text_done);
    Json part_done = part_at;
    part_done["type"] = "response.content_part.done";
    part_done["part"] = OutputText(r_.text);
    Emit(part_done);
    Emit({{"type", "response.output_item.done"},
          {"output_index", output_index},
          {"item", MessageItem(context_, MessageStatus(r_), Json::array({OutputText(r_.text)}))}});
  }

  void FunctionCall(size_t index, int output_index) {
    const FakeResponse::ToolCall& call = r_.tool_calls[index];
    const std::string id = ResponseFunctionCallId(context_, index);
    Emit({{"type", "response.output_item.added"},
          {"output_index", output_index},
          {"item", FunctionCallItem(context_, index, call, "", "in_progress")}});
    for (const std::string& piece : SplitInto(call.arguments, r_.argument_pieces)) {
      Emit({{"type", "response.function_call_arguments.delta"},
            {"item_id", id},
            {"output_index", output_index},
            {"delta", piece}});
    }
    Emit({{"type", "response.function_call_arguments.done"},
          {"item_id", id},
          {"output_index", output_index},
          {"name", call.name},
          {"arguments", call.arguments}});
    Emit({{"type", "response.output_item.done"},
          {"output_index", output_index},
          {"item", FunctionCallItem(context_, index, call, call.arguments, "completed")}});
  }

  // Numbers the events from 0 in the order they are sent, as the API does.
  void Emit(Json event) {
    event["sequence_number"] = static_cast<int64_t>(events_.size());
    events_.push_back(TypedEvent(event));
  }

  const FakeResponse& r_;
  const RenderContext& context_;
  std::vector<std::string> events_;
};

}  // namespace

std::string ResponseMessageId(const RenderContext& context) {
  return "msg_fake" + std::to_string(context.sequence);
}

std::string ResponseFunctionCallId(const RenderContext& context, size_t index) {
  return "fc_fake" + std::to_string(context.sequence) + "_" + std::to_string(index);
}

std::string ResponseStatus(const FakeResponse& r) {
  return r.finish_reason == "length" || r.finish_reason == "max_tokens" ? "incomplete"
                                                                        : "completed";
}

Json ResponseOutput(const FakeResponse& r, const RenderContext& context) {
  Json output = Json::array();
  if (HasMessage(r)) {
    output.push_back(MessageItem(context, MessageStatus(r), Json::array({OutputText(r.text)})));
  }
  for (size_t i = 0; i < r.tool_calls.size(); ++i) {
    output.push_back(
        FunctionCallItem(context, i, r.tool_calls[i], r.tool_calls[i].arguments, "completed"));
  }
  return output;
}

Json ResponseObject(const FakeResponse& r, const RenderContext& context, const std::string& status,
                    Json output) {
  Json body = {{"id", "resp_fake" + std::to_string(context.sequence)},
               {"object", "response"},
               {"created_at", 1700000000 + context.sequence},
               {"status", status},
               {"error", nullptr},
               {"incomplete_details", nullptr},
               {"model", context.model},
               {"output", std::move(output)}};
  if (status == "incomplete") body["incomplete_details"] = {{"reason", "max_output_tokens"}};
  const Json defaults = EchoedDefaults();
  for (const auto& [key, fallback] : defaults.items()) {
    auto given = context.request.find(key);
    body[key] = given != context.request.end() ? *given : fallback;
  }
  if (status == "in_progress") {
    body["usage"] = nullptr;
  } else if (!r.omit_usage) {
    body["usage"] = {{"input_tokens", r.input_tokens},
                     {"input_tokens_details", {{"cached_tokens", 0}}},
                     {"output_tokens", r.output_tokens},
                     {"output_tokens_details", {{"reasoning_tokens", 0}}},
                     {"total_tokens", r.input_tokens + r.output_tokens}};
  }
  return body;
}

std::vector<std::string> RenderResponseStream(const FakeResponse& response,
                                              const RenderContext& context) {
  return ResponseStream(response, context).Render();
}

}  // namespace mend::testing::fake_llm
