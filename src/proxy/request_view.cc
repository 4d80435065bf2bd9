// ReadRequest (conversation.h): what the proxy needs from a request of each API, with the API's
// own words in the errors a client gets for a body it would refuse.
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>

#include "mend/base/json.h"
#include "proxy/conversation.h"

namespace mend::proxy {
namespace {

using Json = nlohmann::json;

const Json& At(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it != j.end() ? *it : kNull;
}

std::string StringAt(const Json& j, const char* key) {
  const Json& v = At(j, key);
  return v.is_string() ? v.get<std::string>() : "";
}

// The text of a content value: a string, or the `text` of its parts or blocks joined with "\n"
// (tool_result blocks recurse into their own content).
std::string ContentText(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) return "";
  std::string text;
  for (const Json& part : content) {
    std::string piece;
    if (part.is_string()) {
      piece = part.get<std::string>();
    } else if (const Json& t = At(part, "text"); t.is_string()) {
      piece = t.get<std::string>();
    } else if (StringAt(part, "type") == "tool_result") {
      continue;
    }
    if (piece.empty()) continue;
    if (!text.empty()) text += "\n";
    text += piece;
  }
  return text;
}

// Arguments as canonical JSON text (keys sorted, compact) when they parse, else as sent.
std::string CanonicalArguments(const Json& arguments) {
  if (arguments.is_string()) {
    const std::string& text = arguments.get_ref<const std::string&>();
    Result<Json> parsed = ParseJson(text);
    return parsed.ok() ? DumpJson(*parsed) : text;
  }
  return arguments.is_null() ? "{}" : DumpJson(arguments);
}

// Calls and results are paired by id; results of calls the history does not hold are dropped.
class ExchangeBuilder {
 public:
  void Call(std::string id, std::string tool, std::string arguments) {
    by_id_[id] = exchanges_.size();
    exchanges_.push_back(ToolExchange{std::move(id), std::move(tool), std::move(arguments)});
  }
  void Result(const std::string& id, std::string text, bool flagged_error) {
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return;
    ToolExchange& exchange = exchanges_[it->second];
    exchange.has_result = true;
    exchange.result = std::move(text);
    exchange.flagged_error = flagged_error;
  }
  std::vector<ToolExchange> Take() { return std::move(exchanges_); }

 private:
  std::vector<ToolExchange> exchanges_;
  std::unordered_map<std::string, size_t> by_id_;
};

Status CheckMessages(const Json& body) {
  const Json& messages = At(body, "messages");
  if (!messages.is_array()) {
    return InvalidArgumentError(messages.is_null() ? "'messages' is a required property"
                                                   : "'messages' must be an array");
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].is_object() || !At(messages[i], "role").is_string()) {
      return InvalidArgumentError("messages[" + std::to_string(i) +
                                  "] must be an object with a string 'role'");
    }
  }
  return OkStatus();
}

Status ReadChat(const Json& body, RequestView& view) {
  MEND_RETURN_IF_ERROR(CheckMessages(body));
  ExchangeBuilder exchanges;
  bool have_system = false;
  bool have_user = false;
  std::string last_role;
  for (const Json& message : At(body, "messages")) {
    last_role = StringAt(message, "role");
    if ((last_role == "system" || last_role == "developer") && !have_system) {
      view.system_text = ContentText(At(message, "content"));
      have_system = true;
    } else if (last_role == "user" && !have_user) {
      view.first_user_text = ContentText(At(message, "content"));
      have_user = true;
    } else if (last_role == "assistant") {
      const Json& calls = At(message, "tool_calls");
      for (const Json& call : calls.is_array() ? calls : Json()) {
        const Json& function = At(call, "function");
        exchanges.Call(StringAt(call, "id"), StringAt(function, "name"),
                       CanonicalArguments(At(function, "arguments")));
      }
    } else if (last_role == "tool") {
      exchanges.Result(StringAt(message, "tool_call_id"), ContentText(At(message, "content")),
                       false);
    }
  }
  view.ends_with_tool_results = last_role == "tool";
  view.exchanges = exchanges.Take();
  return OkStatus();
}

Status ReadMessages(const Json& body, RequestView& view) {
  MEND_RETURN_IF_ERROR(CheckMessages(body));
  const Json& system = At(body, "system");
  if (!system.is_null() && !system.is_string() && !system.is_array()) {
    return InvalidArgumentError("system: Input should be a valid string or a list of blocks");
  }
  view.system_text = ContentText(system);
  ExchangeBuilder exchanges;
  bool have_user = false;
  bool last_has_results = false;
  for (const Json& message : At(body, "messages")) {
    const std::string role = StringAt(message, "role");
    const Json& content = At(message, "content");
    last_has_results = false;
    if (role == "user" && !have_user) {
      view.first_user_text = ContentText(content);
      have_user = !view.first_user_text.empty() || content.is_string();
    }
    if (!content.is_array()) continue;
    for (const Json& block : content) {
      const std::string type = StringAt(block, "type");
      if (role == "assistant" && type == "tool_use") {
        exchanges.Call(StringAt(block, "id"), StringAt(block, "name"),
                       CanonicalArguments(At(block, "input")));
      } else if (role == "user" && type == "tool_result") {
        const Json& is_error = At(block, "is_error");
        exchanges.Result(StringAt(block, "tool_use_id"), ContentText(At(block, "content")),
                         is_error.is_boolean() && is_error.get<bool>());
        last_has_results = true;
      }
    }
  }
  view.ends_with_tool_results = last_has_results;
  view.exchanges = exchanges.Take();
  return OkStatus();
}

Status ReadResponses(const Json& body, RequestView& view) {
  const Json& input = At(body, "input");
  if (!input.is_string() && !input.is_array()) {
    return InvalidArgumentError(input.is_null() ? "'input' is a required property"
                                                : "'input' must be a string or an array");
  }
  const Json& instructions = At(body, "instructions");
  if (!instructions.is_null() && !instructions.is_string()) {
    return InvalidArgumentError("'instructions' must be a string");
  }
  view.system_text = StringAt(body, "instructions");
  if (input.is_string()) {
    view.first_user_text = input.get<std::string>();
    return OkStatus();
  }
  ExchangeBuilder exchanges;
  bool have_user = false;
  std::string last_type;
  for (const Json& item : input) {
    std::string type = StringAt(item, "type");
    if (type.empty() && At(item, "role").is_string()) type = "message";
    last_type = type;
    if (type == "message") {
      const std::string role = StringAt(item, "role");
      if (role == "user" && !have_user) {
        view.first_user_text = ContentText(At(item, "content"));
        have_user = true;
      } else if ((role == "system" || role == "developer") && view.system_text.empty()) {
        view.system_text = ContentText(At(item, "content"));
      }
    } else if (type == "function_call") {
      exchanges.Call(StringAt(item, "call_id"), StringAt(item, "name"),
                     CanonicalArguments(At(item, "arguments")));
    } else if (type == "function_call_output") {
      const Json& output = At(item, "output");
      exchanges.Result(StringAt(item, "call_id"),
                       output.is_string() ? output.get<std::string>() : ContentText(output), false);
    }
  }
  view.ends_with_tool_results = last_type == "function_call_output";
  view.exchanges = exchanges.Take();
  return OkStatus();
}

}  // namespace

Result<RequestView> ReadRequest(ApiShape shape, const nlohmann::json& body) {
  if (!body.is_object()) return InvalidArgumentError("request body must be a JSON object");
  RequestView view;
  const Json& model = At(body, "model");
  if (!model.is_null() && !model.is_string()) {
    return InvalidArgumentError("'model' must be a string");
  }
  view.model = StringAt(body, "model");
  const Json& stream = At(body, "stream");
  if (!stream.is_null() && !stream.is_boolean()) {
    return InvalidArgumentError("'stream' must be a boolean");
  }
  view.stream = stream.is_boolean() && stream.get<bool>();
  switch (shape) {
    case ApiShape::kChatCompletions:
      MEND_RETURN_IF_ERROR(ReadChat(body, view));
      break;
    case ApiShape::kMessages:
      MEND_RETURN_IF_ERROR(ReadMessages(body, view));
      break;
    case ApiShape::kResponses:
      MEND_RETURN_IF_ERROR(ReadResponses(body, view));
      break;
  }
  return view;
}

}  // namespace mend::proxy
