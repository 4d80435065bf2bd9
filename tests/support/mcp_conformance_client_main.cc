// The client side of the MCP conformance suite (@modelcontextprotocol/conformance, client mode):
// the suite starts a scenario's server and runs `mcp_conformance_client URL`. This program is
// mend's MCP client (mcp/client.h over the Streamable HTTP transport) doing what an agent's run
// does with a server: initialize, list the tools, call each with arguments made from its schema,
// close. Exit 0 when it could connect, 1 otherwise; what it saw goes to stderr.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "mend/mcp/client.h"

namespace {

using json = nlohmann::json;

// An argument of the type a schema asks for.
json ValueFor(const json& schema) {
  const std::string type =
      schema.is_object() && schema.contains("type") && schema["type"].is_string()
          ? schema["type"].get<std::string>()
          : "string";
  if (type == "number" || type == "integer") return 1;
  if (type == "boolean") return true;
  if (type == "array") return json::array();
  if (type == "object") return json::object();
  return "x";
}

json ArgumentsFor(const json& schema) {
  json args = json::object();
  if (!schema.is_object() || !schema.contains("properties")) return args;
  for (const auto& [name, property] : schema["properties"].items()) args[name] = ValueFor(property);
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mcp_conformance_client URL\n");
    return 2;
  }
  mend::mcp::HttpOptions http;
  http.url = argv[argc - 1];
  auto transport = mend::mcp::MakeHttpTransport(http);
  if (!transport.ok()) {
    std::fprintf(stderr, "%s\n", transport.status().ToString().c_str());
    return 1;
  }
  mend::mcp::ClientOptions options;
  options.name = "conformance";
  options.client_version = "conformance";
  auto client = mend::mcp::Client::Connect(std::move(transport).value(), options);
  if (!client.ok()) {
    std::fprintf(stderr, "connect: %s\n", client.status().ToString().c_str());
    return 1;
  }
  auto tools = (*client)->ListTools();
  if (!tools.ok()) {
    std::fprintf(stderr, "tools/list: %s\n", tools.status().ToString().c_str());
    (*client)->Close();
    return 1;
  }
  for (const mend::mcp::ToolInfo& tool : *tools) {
    auto call =
        (*client)->CallTool(tool.name, ArgumentsFor(tool.input_schema), std::chrono::seconds(20));
    std::fprintf(stderr, "%s: %s\n", tool.name.c_str(),
                 call.ok() ? mend::mcp::RenderToolResult(call->result, 500).c_str()
                           : call.status().ToString().c_str());
  }
  (*client)->Close();
  return 0;
}
