#include "mend/mcp/server.h"

#include <mutex>

#include "mend/base/json.h"
#include "mend/base/utf8.h"
#include "mend/mcp/client.h"
#include "mend/mcp/jsonrpc.h"

namespace mend::mcp {
namespace {

using json = nlohmann::json;

// The JSON-RPC error of MCP for a resource that does not exist.
constexpr int64_t kResourceNotFound = -32002;

json ToolJson(const ServedTool& tool) {
  json item = {
      {"name", tool.name}, {"description", tool.description}, {"inputSchema", tool.input_schema}};
  if (!tool.title.empty()) item["title"] = tool.title;
  if (!tool.output_schema.is_null()) item["outputSchema"] = tool.output_schema;
  if (!tool.annotations.is_null()) item["annotations"] = tool.annotations;
  return item;
}

json ResourceJson(const ServedResource& resource, const char* uri_key) {
  json item = {{uri_key, resource.uri}, {"name", resource.name}, {"mimeType", resource.mime_type}};
  if (!resource.description.empty()) item["description"] = resource.description;
  return item;
}

json TextResult(const std::string& text, bool is_error) {
  return {{"content", json::array({{{"type", "text"}, {"text", SanitizeUtf8(text)}}})},
          {"isError", is_error}};
}

}  // namespace

McpServer::McpServer(ServerIdentity identity, std::vector<ServedTool> tools,
                     ServedResources resources)
    : identity_(std::move(identity)), tools_(std::move(tools)), resources_(std::move(resources)) {}

std::string McpServer::protocol_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return protocol_version_;
}

json McpServer::Initialize(const json& params) {
  std::string asked;
  if (params.is_object()) {
    auto version = params.find("protocolVersion");
    if (version != params.end() && version->is_string()) asked = version->get<std::string>();
  }
  // A revision mend speaks is agreed to; for any other the answer is mend's newest, and the
  // client decides whether it can go on (the spec's negotiation).
  const std::string agreed = IsSupportedProtocolVersion(asked) ? asked : kProtocolVersions[0];
  {
    std::lock_guard<std::mutex> lock(mu_);
    protocol_version_ = agreed;
  }
  json capabilities = {{"tools", {{"listChanged", false}}}};
  if (resources_.read) capabilities["resources"] = {{"listChanged", false}, {"subscribe", false}};
  json result = {{"protocolVersion", agreed},
                 {"capabilities", std::move(capabilities)},
                 {"serverInfo", {{"name", identity_.name}, {"version", identity_.version}}}};
  if (!identity_.instructions.empty()) result["instructions"] = identity_.instructions;
  return result;
}

Result<json> McpServer::CallTool(const json& params) {
  auto name = params.find("name");
  if (name == params.end() || !name->is_string()) {
    return InvalidArgumentError("tools/call needs a \"name\"");
  }
  const ServedTool* tool = nullptr;
  for (const ServedTool& t : tools_) {
    if (t.name == name->get_ref<const std::string&>()) tool = &t;
  }
  if (tool == nullptr) {
    return InvalidArgumentError("Unknown tool: " +
                                SanitizeUtf8(TruncateUtf8Bytes(name->get<std::string>(), 100)));
  }
  json arguments = json::object();
  if (auto args = params.find("arguments"); args != params.end() && !args->is_null()) {
    if (!args->is_object()) return InvalidArgumentError("tools/call arguments must be an object");
    arguments = *args;
  }
  Result<json> out = tool->call(arguments);
  if (!out.ok()) return TextResult(std::string(out.status().message()), true);
  json result = TextResult(DumpJson(*out), false);
  result["structuredContent"] = std::move(out).value();
  return result;
}

Result<json> McpServer::ReadResource(const json& params) {
  auto uri = params.find("uri");
  if (uri == params.end() || !uri->is_string()) {
    return InvalidArgumentError("resources/read needs a \"uri\"");
  }
  if (!resources_.read) return NotFoundError("no resources");
  const std::string target = uri->get<std::string>();
  MEND_ASSIGN_OR_RETURN(std::string text, resources_.read(target));
  std::string mime = "text/markdown";
  for (const ServedResource& r : resources_.fixed) {
    if (r.uri == target) mime = r.mime_type;
  }
  return json{{"contents",
               json::array({{{"uri", target}, {"mimeType", mime}, {"text", SanitizeUtf8(text)}}})}};
}

std::optional<std::string> McpServer::Handle(std::string_view message) {
  Result<RpcMessage> parsed = ParseRpcMessage(message);
  if (!parsed.ok()) {
    const bool json_text = ParseJson(message).ok();
    return SerializeRpcMessage(RpcMessage::Error(nullptr, json_text ? kInvalidRequest : kParseError,
                                                 std::string(parsed.status().message())));
  }
  const RpcMessage& m = *parsed;
  if (m.kind != RpcMessage::Kind::kRequest) return std::nullopt;
  const json params = m.params.is_null() ? json::object() : m.params;
  Result<json> result = json::object();
  if (m.method == "initialize") {
    result = Initialize(params);
  } else if (m.method == "ping") {
    result = json::object();
  } else if (m.method == "tools/list") {
    json tools = json::array();
    for (const ServedTool& tool : tools_) tools.push_back(ToolJson(tool));
    result = json{{"tools", std::move(tools)}};
  } else if (m.method == "tools/call") {
    result = CallTool(params);
  } else if (m.method == "resources/list" && resources_.read) {
    json list = json::array();
    for (const ServedResource& r : resources_.fixed) list.push_back(ResourceJson(r, "uri"));
    result = json{{"resources", std::move(list)}};
  } else if (m.method == "resources/templates/list" && resources_.read) {
    json list = json::array();
    for (const ServedResource& r : resources_.templates) {
      list.push_back(ResourceJson(r, "uriTemplate"));
    }
    result = json{{"resourceTemplates", std::move(list)}};
  } else if (m.method == "resources/read" && resources_.read) {
    result = ReadResource(params);
  } else {
    return SerializeRpcMessage(
        RpcMessage::Error(m.id, kMethodNotFound, "Method not found: " + m.method));
  }
  if (!result.ok()) {
    const Status& s = result.status();
    const int64_t code = s.code() == StatusCode::kNotFound          ? kResourceNotFound
                         : s.code() == StatusCode::kInvalidArgument ? kInvalidParams
                                                                    : kInternalError;
    return SerializeRpcMessage(RpcMessage::Error(m.id, code, std::string(s.message())));
  }
  return SerializeRpcMessage(RpcMessage::Result(m.id, std::move(result).value()));
}

}  // namespace mend::mcp
