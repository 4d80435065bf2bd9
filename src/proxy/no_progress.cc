// The answer that ends a loop (proxy.stop_after, docs/proxy.md): an ordinary assistant message
// in the client's API, streamed when the client asked for a stream, so an unmodified SDK ends its
// turn with it.
#include <chrono>
#include <nlohmann/json.hpp>

#include "proxy/service_impl.h"

namespace mend::proxy {
namespace {

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Data(const nlohmann::json& j) { return "data: " + Dump(j) + "\n\n"; }

std::string Event(std::string_view name, const nlohmann::json& j) {
  return "event: " + std::string(name) + "\n" + Data(j);
}

}  // namespace

void ProxyServiceImpl::ReplyNoProgress(httplib::Response& res, const ModelCall& call,
                                       const std::string& message, bool include_usage) {
  const int64_t created =
      std::chrono::duration_cast<std::chrono::seconds>(deps_.clock->Now().time_since_epoch())
          .count();
  const std::string id = call.conversation_id.substr(0, 24);
  const nlohmann::json zero_chat_usage = {
      {"prompt_tokens", 0}, {"completion_tokens", 0}, {"total_tokens", 0}};
  const nlohmann::json zero_usage = {{"input_tokens", 0}, {"output_tokens", 0}};
  res.status = 200;
  std::string body;
  const char* type = "application/json";
  switch (call.shape) {
    case ApiShape::kChatCompletions: {
      const std::string chat_id = "chatcmpl-mend-" + id;
      if (!call.stream) {
        body = Dump(
            {{"id", chat_id},
             {"object", "chat.completion"},
             {"created", created},
             {"model", call.model},
             {"choices",
              {{{"index", 0},
                {"message", {{"role", "assistant"}, {"content", message}, {"refusal", nullptr}}},
                {"logprobs", nullptr},
                {"finish_reason", "stop"}}}},
             {"usage", zero_chat_usage}});
        break;
      }
      type = "text/event-stream";
      const nlohmann::json base = {{"id", chat_id},
                                   {"object", "chat.completion.chunk"},
                                   {"created", created},
                                   {"model", call.model}};
      nlohmann::json first = base;
      first["choices"] = {{{"index", 0},
                           {"delta", {{"role", "assistant"}, {"content", message}}},
                           {"logprobs", nullptr},
                           {"finish_reason", nullptr}}};
      nlohmann::json last = base;
      last["choices"] = {{{"index", 0},
                          {"delta", nlohmann::json::object()},
                          {"logprobs", nullptr},
                          {"finish_reason", "stop"}}};
      body = Data(first) + Data(last);
      if (include_usage) {
        nlohmann::json usage = base;
        usage["choices"] = nlohmann::json::array();
        usage["usage"] = zero_chat_usage;
        body += Data(usage);
      }
      body += "data: [DONE]\n\n";
      break;
    }
    case ApiShape::kMessages: {
      const std::string msg_id = "msg_mend_" + id;
      nlohmann::json reply = {{"id", msg_id},
                              {"type", "message"},
                              {"role", "assistant"},
                              {"model", call.model},
                              {"content", {{{"type", "text"}, {"text", message}}}},
                              {"stop_reason", "end_turn"},
                              {"stop_sequence", nullptr},
                              {"usage", zero_usage}};
      if (!call.stream) {
        body = Dump(reply);
        break;
      }
      type = "text/event-stream";
      nlohmann::json start = reply;
      start["content"] = nlohmann::json::array();
      start["stop_reason"] = nullptr;
      body =
          Event("message_start", {{"type", "message_start"}, {"message", start}}) +
          Event("content_block_start", {{"type", "content_block_start"},
                                        {"index", 0},
                                        {"content_block", {{"type", "text"}, {"text", ""}}}}) +
          Event("content_block_delta", {{"type", "content_block_delta"},
                                        {"index", 0},
                                        {"delta", {{"type", "text_delta"}, {"text", message}}}}) +
          Event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}) +
          Event("message_delta",
                {{"type", "message_delta"},
                 {"delta", {{"stop_reason", "end_turn"}, {"stop_sequence", nullptr}}},
                 {"usage", {{"output_tokens", 0}}}}) +
          Event("message_stop", {{"type", "message_stop"}});
      break;
    }
    case ApiShape::kResponses: {
      const nlohmann::json item = {{"type", "message"},
                                   {"id", "msg_mend_" + id},
                                   {"status", "completed"},
                                   {"role", "assistant"},
                                   {"content",
                                    {{{"type", "output_text"},
                                      {"text", message},
                                      {"annotations", nlohmann::json::array()}}}}};
      nlohmann::json response = {
          {"id", "resp_mend_" + id},
          {"object", "response"},
          {"created_at", created},
          {"status", "completed"},
          {"model", call.model},
          {"output", {item}},
          {"usage", {{"input_tokens", 0}, {"output_tokens", 0}, {"total_tokens", 0}}}};
      if (!call.stream) {
        body = Dump(response);
        break;
      }
      type = "text/event-stream";
      nlohmann::json in_progress = response;
      in_progress["status"] = "in_progress";
      in_progress["output"] = nlohmann::json::array();
      body =
          Event("response.created",
                {{"type", "response.created"}, {"sequence_number", 0}, {"response", in_progress}}) +
          Event("response.output_item.done", {{"type", "response.output_item.done"},
                                              {"sequence_number", 1},
                                              {"output_index", 0},
                                              {"item", item}}) +
          Event("response.completed",
                {{"type", "response.completed"}, {"sequence_number", 2}, {"response", response}});
      break;
    }
  }
  res.set_content(body, type);
}

}  // namespace mend::proxy
