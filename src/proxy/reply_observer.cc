// What a reply said (sse.h): ParseReply for whole bodies and StreamObserver for relayed streams,
// in the three APIs' shapes. Both only read; anything unexpected is skipped, never an error of
// the relay.
#include <nlohmann/json.hpp>
#include <utility>

#include "mend/base/json.h"
#include "proxy/sse.h"

namespace mend::proxy {
namespace {

using Json = nlohmann::json;

std::string StringAt(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t IntAt(const Json& j, const char* key) {
  if (!j.is_object()) return -1;
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : -1;
}

const Json& At(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it != j.end() ? *it : kNull;
}

// The message of an error object ({"message": ...}) or of a string.
std::string ErrorText(const Json& error) {
  if (error.is_string()) return error.get<std::string>();
  std::string message = StringAt(error, "message");
  return message.empty() && !error.is_null() ? DumpJson(error) : message;
}

void ChatUsage(const Json& usage, ReplySummary& s) {
  if (!usage.is_object()) return;
  if (int64_t in = IntAt(usage, "prompt_tokens"); in >= 0) s.input_tokens = in;
  if (int64_t out = IntAt(usage, "completion_tokens"); out >= 0) s.output_tokens = out;
}

void TokensUsage(const Json& usage, ReplySummary& s) {
  if (!usage.is_object()) return;
  if (int64_t in = IntAt(usage, "input_tokens"); in >= 0) s.input_tokens = in;
  if (int64_t out = IntAt(usage, "output_tokens"); out >= 0) s.output_tokens = out;
}

std::string ArgumentsText(const Json& value) {
  return value.is_string() ? value.get<std::string>() : DumpJson(value);
}

void ResponsesOutput(const Json& output, ReplySummary& s) {
  if (!output.is_array()) return;
  for (const Json& item : output) {
    const std::string type = StringAt(item, "type");
    if (type == "message") {
      for (const Json& part : At(item, "content").is_array() ? At(item, "content") : Json()) {
        if (StringAt(part, "type") == "output_text") s.text += StringAt(part, "text");
      }
    } else if (type == "function_call") {
      s.tool_calls.push_back(ReplyToolCall{StringAt(item, "call_id"), StringAt(item, "name"),
                                           ArgumentsText(At(item, "arguments"))});
    }
  }
}

void ResponseObject(const Json& response, ReplySummary& s) {
  if (std::string model = StringAt(response, "model"); !model.empty()) s.model = std::move(model);
  s.finish_reason = StringAt(response, "status");
  TokensUsage(At(response, "usage"), s);
  if (!At(response, "error").is_null()) s.error = ErrorText(At(response, "error"));
}

}  // namespace

Result<ReplySummary> ParseReply(ApiShape shape, std::string_view body) {
  MEND_ASSIGN_OR_RETURN(Json reply, ParseJson(body));
  if (!reply.is_object()) return InvalidArgumentError("reply is not a JSON object");
  ReplySummary s;
  s.complete = true;
  s.model = StringAt(reply, "model");
  switch (shape) {
    case ApiShape::kChatCompletions: {
      const Json& choices = At(reply, "choices");
      if (choices.is_array() && !choices.empty()) {
        const Json& message = At(choices[0], "message");
        s.text = StringAt(message, "content");
        s.finish_reason = StringAt(choices[0], "finish_reason");
        const Json& calls = At(message, "tool_calls");
        for (const Json& call : calls.is_array() ? calls : Json()) {
          const Json& function = At(call, "function");
          s.tool_calls.push_back(ReplyToolCall{StringAt(call, "id"), StringAt(function, "name"),
                                               ArgumentsText(At(function, "arguments"))});
        }
      }
      ChatUsage(At(reply, "usage"), s);
      break;
    }
    case ApiShape::kMessages: {
      const Json& content = At(reply, "content");
      for (const Json& block : content.is_array() ? content : Json()) {
        const std::string type = StringAt(block, "type");
        if (type == "text") s.text += StringAt(block, "text");
        if (type == "tool_use") {
          s.tool_calls.push_back(ReplyToolCall{StringAt(block, "id"), StringAt(block, "name"),
                                               DumpJson(At(block, "input"))});
        }
      }
      s.finish_reason = StringAt(reply, "stop_reason");
      TokensUsage(At(reply, "usage"), s);
      break;
    }
    case ApiShape::kResponses:
      ResponseObject(reply, s);
      ResponsesOutput(At(reply, "output"), s);
      break;
  }
  return s;
}

void StreamObserver::OnEvent(const SseEvent& event) {
  if (summary_.complete) return;
  if (shape_ == ApiShape::kChatCompletions && event.data == "[DONE]") {
    summary_.complete = true;
    return;
  }
  Result<Json> parsed = ParseJson(event.data);
  if (!parsed.ok() || !parsed->is_object()) return;
  const Json& data = *parsed;
  if (const Json& error = At(data, "error"); !error.is_null() && shape_ != ApiShape::kResponses) {
    summary_.error = ErrorText(error);
    return;
  }
  const std::string type = StringAt(data, "type");
  switch (shape_) {
    case ApiShape::kChatCompletions: {
      if (std::string model = StringAt(data, "model"); !model.empty()) summary_.model = model;
      ChatUsage(At(data, "usage"), summary_);
      const Json& choices = At(data, "choices");
      if (!choices.is_array()) return;
      for (const Json& choice : choices) {
        if (IntAt(choice, "index") > 0) continue;  // n > 1: the first choice speaks for the reply
        const Json& delta = At(choice, "delta");
        summary_.text += StringAt(delta, "content");
        if (std::string reason = StringAt(choice, "finish_reason"); !reason.empty()) {
          summary_.finish_reason = std::move(reason);
        }
        const Json& calls = At(delta, "tool_calls");
        for (const Json& call : calls.is_array() ? calls : Json()) {
          const int64_t index = IntAt(call, "index");
          size_t at = 0;
          while (at < tool_indexes_.size() && tool_indexes_[at] != index) ++at;
          if (at == tool_indexes_.size()) {
            tool_indexes_.push_back(index);
            summary_.tool_calls.emplace_back();
          }
          ReplyToolCall& target = summary_.tool_calls[at];
          if (std::string id = StringAt(call, "id"); !id.empty()) target.id = std::move(id);
          const Json& function = At(call, "function");
          target.name += StringAt(function, "name");
          target.arguments += StringAt(function, "arguments");
        }
      }
      return;
    }
    case ApiShape::kMessages: {
      if (type == "message_start") {
        const Json& message = At(data, "message");
        summary_.model = StringAt(message, "model");
        TokensUsage(At(message, "usage"), summary_);
      } else if (type == "content_block_start") {
        const Json& block = At(data, "content_block");
        if (StringAt(block, "type") == "tool_use") {
          tool_indexes_.push_back(IntAt(data, "index"));
          summary_.tool_calls.push_back(
              ReplyToolCall{StringAt(block, "id"), StringAt(block, "name"), ""});
        }
      } else if (type == "content_block_delta") {
        const Json& delta = At(data, "delta");
        const std::string kind = StringAt(delta, "type");
        if (kind == "text_delta") summary_.text += StringAt(delta, "text");
        if (kind == "input_json_delta") {
          const int64_t index = IntAt(data, "index");
          for (size_t at = 0; at < tool_indexes_.size(); ++at) {
            if (tool_indexes_[at] == index) {
              summary_.tool_calls[at].arguments += StringAt(delta, "partial_json");
            }
          }
        }
      } else if (type == "message_delta") {
        if (std::string reason = StringAt(At(data, "delta"), "stop_reason"); !reason.empty()) {
          summary_.finish_reason = std::move(reason);
        }
        if (int64_t out = IntAt(At(data, "usage"), "output_tokens"); out >= 0) {
          summary_.output_tokens = out;
        }
      } else if (type == "message_stop") {
        summary_.complete = true;
      }
      return;
    }
    case ApiShape::kResponses: {
      if (type == "response.output_text.delta") {
        summary_.text += StringAt(data, "delta");
      } else if (type == "response.output_item.done") {
        const Json& item = At(data, "item");
        if (StringAt(item, "type") == "function_call") {
          summary_.tool_calls.push_back(ReplyToolCall{StringAt(item, "call_id"),
                                                      StringAt(item, "name"),
                                                      ArgumentsText(At(item, "arguments"))});
        }
      } else if (type == "response.created" || type == "response.in_progress") {
        ResponseObject(At(data, "response"), summary_);
      } else if (type == "response.completed" || type == "response.incomplete" ||
                 type == "response.failed") {
        ResponseObject(At(data, "response"), summary_);
        summary_.complete = true;
      } else if (type == "error") {
        summary_.error = ErrorText(data);
      }
      return;
    }
  }
}

}  // namespace mend::proxy
