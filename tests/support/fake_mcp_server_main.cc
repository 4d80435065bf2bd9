// A small MCP server over stdio for the client's tests, with ways to misbehave that real servers
// do not offer on request: crash mid-call, never answer, write malformed JSON, flood stderr,
// ignore SIGTERM. Speaks newline-delimited JSON-RPC 2.0 on stdin/stdout.
//
//   fake_mcp_server [--version V] [--tools N] [--page-size K] [--log FILE] [--mute]
//                   [--malformed-on-list] [--stderr-lines N] [--ignore-term]
//                   [--list-changed-after-call]
//
// Tools: echo {text} (read-only; {message} with --alt-schema) answers text; env {name}
// (read-only) answers an environment variable; write_note {name, text} (destructive) writes a
// file in the working directory; fail {} answers isError; crash {} exits at once with status 3;
// slow {} never answers (a notifications/cancelled for it is logged); image {} answers an image
// and structured content; big {bytes} answers that many bytes of text; tool_<i> for --tools N
// extra tools. Every message received is appended to --log, one line each.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

using json = nlohmann::json;

namespace {

struct Flags {
  std::string version;  // empty: echo the client's
  int tools = 0;
  int page_size = 0;  // 0: one page
  std::string log;
  bool mute = false;
  bool malformed_on_list = false;
  int stderr_lines = 0;
  bool ignore_term = false;
  bool list_changed_after_call = false;
  bool alt_schema = false;  // echo takes {"message"} instead of {"text"}
};

void Write(const json& message) { std::cout << message.dump() << "\n" << std::flush; }

json Text(const std::string& text, bool is_error = false) {
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"isError", is_error}};
}

json AllTools(const Flags& flags) {
  json tools = json::array();
  const std::string field = flags.alt_schema ? "message" : "text";
  tools.push_back({{"name", "echo"},
                   {"description", "Answers with the text it is given."},
                   {"inputSchema",
                    {{"type", "object"},
                     {"properties", {{field, {{"type", "string"}}}}},
                     {"required", {field}}}},
                   {"annotations", {{"readOnlyHint", true}, {"destructiveHint", false}}}});
  tools.push_back(
      {{"name", "write_note"},
       {"description", "Writes a note into the working directory."},
       {"inputSchema",
        {{"type", "object"},
         {"properties", {{"name", {{"type", "string"}}}, {"text", {{"type", "string"}}}}},
         {"required", {"name", "text"}}}}});
  tools.push_back(
      {{"name", "env"},
       {"description", "Answers with the value of an environment variable."},
       {"inputSchema", {{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}}},
       {"annotations", {{"readOnlyHint", true}}}});
  for (const char* name : {"fail", "crash", "slow", "image"}) {
    tools.push_back({{"name", name},
                     {"description", std::string("The ") + name + " tool."},
                     {"inputSchema", {{"type", "object"}}}});
  }
  tools.push_back(
      {{"name", "big"},
       {"description", "Answers with many bytes."},
       {"inputSchema", {{"type", "object"}, {"properties", {{"bytes", {{"type", "integer"}}}}}}}});
  for (int i = 0; i < flags.tools; ++i) {
    tools.push_back({{"name", "tool_" + std::to_string(i)},
                     {"description", "Extra tool " + std::to_string(i) + "."},
                     {"inputSchema", {{"type", "object"}}}});
  }
  return tools;
}

json ListPage(const Flags& flags, const json& params) {
  const json tools = AllTools(flags);
  size_t start = 0;
  if (params.is_object() && params.contains("cursor")) {
    start = std::stoul(params["cursor"].get<std::string>().substr(5));
  }
  const size_t size = flags.page_size > 0 ? static_cast<size_t>(flags.page_size) : tools.size();
  json page = json::array();
  for (size_t i = start; i < tools.size() && i < start + size; ++i) page.push_back(tools[i]);
  json result = {{"tools", page}};
  if (start + size < tools.size()) result["nextCursor"] = "page-" + std::to_string(start + size);
  return result;
}

// The result of tools/call, or null when the call is never answered.
json Call(const json& params) {
  const std::string name = params.value("name", "");
  const json args = params.value("arguments", json::object());
  if (name == "echo") return Text(args.value("text", args.value("message", "")));
  if (name == "env") {
    const char* value = std::getenv(args.value("name", "").c_str());
    return Text(value == nullptr ? "(unset)" : value);
  }
  if (name == "write_note") {
    std::ofstream(args.value("name", "note.txt")) << args.value("text", "");
    return Text("wrote " + args.value("name", "note.txt"));
  }
  if (name == "fail") return Text("the thing failed: no such record", true);
  if (name == "crash") {
    std::cerr << "fake_mcp_server: crashing on purpose" << std::endl;
    _exit(3);
  }
  if (name == "slow") return nullptr;
  if (name == "image") {
    return {{"content",
             json::array(
                 {{{"type", "image"}, {"data", "aGVsbG8gd29ybGQh"}, {"mimeType", "image/png"}}})},
            {"structuredContent", {{"width", 1}, {"height", 1}}}};
  }
  if (name == "big") return Text(std::string(args.value("bytes", 1000), 'x'));
  if (name.rfind("tool_", 0) == 0) return Text(name + " ok");
  return json();  // unknown: an error answer
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (arg == "--version")
      flags.version = next();
    else if (arg == "--tools")
      flags.tools = std::stoi(next());
    else if (arg == "--page-size")
      flags.page_size = std::stoi(next());
    else if (arg == "--log")
      flags.log = next();
    else if (arg == "--mute")
      flags.mute = true;
    else if (arg == "--malformed-on-list")
      flags.malformed_on_list = true;
    else if (arg == "--stderr-lines")
      flags.stderr_lines = std::stoi(next());
    else if (arg == "--ignore-term")
      flags.ignore_term = true;
    else if (arg == "--alt-schema")
      flags.alt_schema = true;
    else if (arg == "--list-changed-after-call")
      flags.list_changed_after_call = true;
    else {
      std::cerr << "fake_mcp_server: unknown flag " << arg << "\n";
      return 2;
    }
  }
  if (flags.ignore_term) signal(SIGTERM, SIG_IGN);
  for (int i = 0; i < flags.stderr_lines; ++i) {
    std::cerr << "fake_mcp_server: log line " << i << "\n";
  }
  std::cerr << std::flush;
  std::ofstream log;
  if (!flags.log.empty()) log.open(flags.log, std::ios::app);
  if (log.is_open()) log << "pid " << getpid() << "\n" << std::flush;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (log.is_open()) log << line << "\n" << std::flush;
    if (flags.mute) continue;
    const json message = json::parse(line, nullptr, false);
    if (!message.is_object()) continue;
    const std::string method = message.value("method", "");
    if (!message.contains("id")) continue;  // notifications
    const json id = message["id"];
    if (method == "initialize") {
      const std::string version = !flags.version.empty()
                                      ? flags.version
                                      : message["params"].value("protocolVersion", "2025-11-25");
      Write({{"jsonrpc", "2.0"},
             {"id", id},
             {"result",
              {{"protocolVersion", version},
               {"capabilities", {{"tools", {{"listChanged", true}}}}},
               {"serverInfo", {{"name", "fake-mcp"}, {"version", "1.0.0"}}}}}});
    } else if (method == "tools/list") {
      if (flags.malformed_on_list) {
        std::cout << "{\"jsonrpc\": \"2.0\", oops\n" << std::flush;
        continue;
      }
      Write({{"jsonrpc", "2.0"},
             {"id", id},
             {"result", ListPage(flags, message.value("params", json()))}});
    } else if (method == "tools/call") {
      const json result = Call(message["params"]);
      if (result.is_null()) {
        if (message["params"].value("name", "") == "slow") continue;
        Write({{"jsonrpc", "2.0"},
               {"id", id},
               {"error", {{"code", -32602}, {"message", "Unknown tool"}}}});
        continue;
      }
      Write({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
      if (flags.list_changed_after_call) {
        Write({{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
      }
    } else if (method == "ping") {
      Write({{"jsonrpc", "2.0"}, {"id", id}, {"result", json::object()}});
    } else {
      Write({{"jsonrpc", "2.0"},
             {"id", id},
             {"error", {{"code", -32601}, {"message", "Method not found"}}}});
    }
  }
  // Ignoring SIGTERM, it also outlives the end of its stdin: only SIGKILL ends it.
  while (flags.ignore_term) pause();
  return 0;
}
