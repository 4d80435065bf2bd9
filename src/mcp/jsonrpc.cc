#include "mend/mcp/jsonrpc.h"

#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend::mcp {
namespace {

using json = nlohmann::json;

Status Malformed(const std::string& what) {
  return InvalidArgumentError("malformed JSON-RPC message: " + what);
}

bool IsValidId(const json& id) {
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned();
}

}  // namespace

std::string RpcError::Describe() const {
  std::string text = std::to_string(code) + " " + message;
  if (!data.is_null()) text += ": " + TruncateUtf8Bytes(DumpJson(data), 500);
  return text;
}

RpcMessage RpcMessage::Request(json id, std::string method, json params) {
  RpcMessage m;
  m.kind = Kind::kRequest;
  m.id = std::move(id);
  m.method = std::move(method);
  m.params = std::move(params);
  return m;
}

RpcMessage RpcMessage::Notification(std::string method, json params) {
  RpcMessage m;
  m.kind = Kind::kNotification;
  m.method = std::move(method);
  m.params = std::move(params);
  return m;
}

RpcMessage RpcMessage::Result(json id, json result) {
  RpcMessage m;
  m.kind = Kind::kResult;
  m.id = std::move(id);
  m.result = std::move(result);
  return m;
}

RpcMessage RpcMessage::Error(json id, int64_t code, std::string message, json data) {
  RpcMessage m;
  m.kind = Kind::kError;
  m.id = std::move(id);
  m.error.code = code;
  m.error.message = std::move(message);
  m.error.data = std::move(data);
  return m;
}

Result<RpcMessage> ParseRpcMessage(std::string_view text) {
  if (text.size() > kMaxMessageBytes) {
    return Malformed(std::to_string(text.size()) + " bytes, over the limit of " +
                     std::to_string(kMaxMessageBytes));
  }
  Result<json> parsed = ParseJson(text);
  if (!parsed.ok()) {
    // nlohmann's message quotes the token it stopped at, which may be the whole text.
    return Malformed(SanitizeUtf8(TruncateUtf8Bytes(parsed.status().message(), 300)) + " in \"" +
                     SanitizeUtf8(TruncateUtf8Bytes(text, 200)) + "\"");
  }
  json& doc = *parsed;
  if (doc.is_array()) return Malformed("a batch (an array); MCP sends one message at a time");
  if (!doc.is_object()) return Malformed("not an object");
  for (const auto& [key, value] : doc.items()) {
    if (key != "jsonrpc" && key != "id" && key != "method" && key != "params" && key != "result" &&
        key != "error") {
      return Malformed("unknown member \"" + SanitizeUtf8(TruncateUtf8Bytes(key, 64)) + "\"");
    }
  }
  auto version = doc.find("jsonrpc");
  if (version == doc.end() || !version->is_string() || *version != "2.0") {
    return Malformed("\"jsonrpc\" must be \"2.0\"");
  }
  RpcMessage m;
  auto id = doc.find("id");
  auto method = doc.find("method");
  auto result = doc.find("result");
  auto error = doc.find("error");
  if (method != doc.end()) {
    if (!method->is_string() || method->get_ref<const std::string&>().empty()) {
      return Malformed("\"method\" must be a non-empty string");
    }
    if (result != doc.end() || error != doc.end()) {
      return Malformed("a request cannot carry \"result\" or \"error\"");
    }
    m.method = method->get<std::string>();
    if (auto params = doc.find("params"); params != doc.end()) {
      if (!params->is_object()) return Malformed("\"params\" must be an object");
      m.params = std::move(*params);
    }
    if (id == doc.end()) {
      m.kind = RpcMessage::Kind::kNotification;
      return m;
    }
    if (!IsValidId(*id)) return Malformed("\"id\" must be a string or an integer");
    m.kind = RpcMessage::Kind::kRequest;
    m.id = std::move(*id);
    return m;
  }
  if (doc.contains("params")) return Malformed("a response cannot carry \"params\"");
  if ((result == doc.end()) == (error == doc.end())) {
    return Malformed("a response needs exactly one of \"result\" and \"error\"");
  }
  if (id == doc.end()) return Malformed("a response needs an \"id\"");
  if (result != doc.end()) {
    if (!IsValidId(*id)) return Malformed("\"id\" must be a string or an integer");
    if (!result->is_object()) return Malformed("\"result\" must be an object");
    m.kind = RpcMessage::Kind::kResult;
    m.id = std::move(*id);
    m.result = std::move(*result);
    return m;
  }
  // An error may answer a request whose id could not be read: its id is null.
  if (!id->is_null() && !IsValidId(*id)) {
    return Malformed("\"id\" must be a string, an integer or null");
  }
  if (!error->is_object()) return Malformed("\"error\" must be an object");
  auto code = error->find("code");
  auto message = error->find("message");
  if (code == error->end() || !(code->is_number_integer() || code->is_number_unsigned())) {
    return Malformed("\"error.code\" must be an integer");
  }
  if (message == error->end() || !message->is_string()) {
    return Malformed("\"error.message\" must be a string");
  }
  m.kind = RpcMessage::Kind::kError;
  m.id = std::move(*id);
  m.error.code = code->is_number_unsigned() ? static_cast<int64_t>(code->get<uint64_t>())
                                            : code->get<int64_t>();
  m.error.message = message->get<std::string>();
  if (auto data = error->find("data"); data != error->end()) m.error.data = std::move(*data);
  return m;
}

std::string SerializeRpcMessage(const RpcMessage& message) {
  json doc = {{"jsonrpc", "2.0"}};
  switch (message.kind) {
    case RpcMessage::Kind::kRequest:
      doc["id"] = message.id;
      [[fallthrough]];
    case RpcMessage::Kind::kNotification:
      doc["method"] = message.method;
      if (!message.params.is_null()) doc["params"] = message.params;
      break;
    case RpcMessage::Kind::kResult:
      doc["id"] = message.id;
      doc["result"] = message.result.is_null() ? json::object() : message.result;
      break;
    case RpcMessage::Kind::kError: {
      doc["id"] = message.id;
      json error = {{"code", message.error.code}, {"message", message.error.message}};
      if (!message.error.data.is_null()) error["data"] = message.error.data;
      doc["error"] = std::move(error);
      break;
    }
  }
  // Compact JSON escapes control characters, so the line holds no newline.
  return DumpJson(doc);
}

}  // namespace mend::mcp
