// [[mcp_servers]]: the MCP servers whose tools an agent gets. Only loaded and checked here; app
// starts the servers (src/app/mcp_tools.cc).

#include "agent/agent_folder_mcp.h"

#include <algorithm>
#include <cctype>

#include "agent/agent_folder_internal.h"
#include "agent/agent_folder_toml.h"

namespace mend::agent::folder_internal {
namespace {

using folder_internal::TomlEntry;

const std::vector<std::string> kServerKeys = {"name",
                                              "command",
                                              "args",
                                              "env",
                                              "cwd",
                                              "url",
                                              "headers",
                                              "tools",
                                              "read_only",
                                              "trust_annotations",
                                              "requires_approval",
                                              "timeout",
                                              "max_result_bytes"};

// A table of strings (`env`, `headers`), each value checked for ${VAR} syntax.
Result<std::map<std::string, std::string>> GetStringTable(const toml::table& table,
                                                          std::string_view key,
                                                          const std::string& path,
                                                          const std::string& name) {
  std::map<std::string, std::string> values;
  MEND_ASSIGN_OR_RETURN(const toml::table* t, GetTomlTable(table, key, path, name));
  if (t == nullptr) return values;
  for (const TomlEntry& entry : EntriesInFileOrder(*t)) {
    const auto* s = entry.node->as_string();
    if (s == nullptr) {
      return ErrorAt(
          path, entry.line,
          name + "." + entry.key + " must be a string, got " + TomlTypeName(*entry.node));
    }
    if (Status refs = CheckVariableReferences(s->get()); !refs.ok()) {
      return ErrorAt(path, entry.line, name + "." + entry.key + ": " + std::string(refs.message()));
    }
    values[entry.key] = s->get();
  }
  return values;
}

Result<std::vector<std::string>> GetNames(const toml::table& table, std::string_view key,
                                          const std::string& path, const std::string& name) {
  MEND_ASSIGN_OR_RETURN(auto listed, GetTomlStringArray(table, key, path, name,
                                                        R"(["read_file", "list_directory"])"));
  std::vector<std::string> names;
  if (!listed.has_value()) return names;
  for (TomlString& item : *listed) {
    if (item.value.empty()) return ErrorAt(path, item.line, name + " holds an empty name");
    names.push_back(std::move(item.value));
  }
  return names;
}

Result<McpServerSpec> ParseServer(const toml::table& t, const std::string& path,
                                  const std::string& where, int line, const AgentSpec& spec) {
  MEND_RETURN_IF_ERROR(CheckKnownKeys(t, kServerKeys, path, where + "."));
  McpServerSpec server;
  server.line = line;
  MEND_ASSIGN_OR_RETURN(auto name, GetTomlString(t, "name", path, where + ".name"));
  if (!name.has_value()) return ErrorAt(path, line, where + " needs a name");
  if (!IsValidName(*name) || name->find("__") != std::string::npos) {
    return ErrorAt(path, KeyLine(t, "name"),
                   where + ".name \"" + *name + "\" is not a valid server name: use " +
                       std::string(kNameRule) + ", without \"__\" (tools are named " +
                       "<server>__<tool>)");
  }
  server.name = std::move(*name);
  const std::string at = "mcp_servers." + server.name;

  MEND_ASSIGN_OR_RETURN(auto command, GetTomlString(t, "command", path, at + ".command"));
  MEND_ASSIGN_OR_RETURN(auto url, GetTomlString(t, "url", path, at + ".url"));
  if (command.has_value() == url.has_value()) {
    return ErrorAt(path, line,
                   at +
                       " needs either command (a server started over stdio) or url (a "
                       "Streamable HTTP server), not " +
                       (command.has_value() ? "both" : "neither"));
  }
  if (command.has_value()) {
    if (command->empty()) return ErrorAt(path, KeyLine(t, "command"), at + ".command is empty");
    MEND_ASSIGN_OR_RETURN(auto args, GetTomlStringArray(t, "args", path, at + ".args",
                                                        R"(["-y", "some-mcp-server"])"));
    if (!args.has_value() && command->find(' ') != std::string::npos) {
      return ErrorAt(path, KeyLine(t, "command"),
                     at + ".command is the program alone; put its arguments in args, e.g. "
                          "command = \"npx\", args = [\"-y\", \"some-mcp-server\"]");
    }
    server.command.push_back(std::move(*command));
    if (args.has_value()) {
      for (TomlString& arg : *args) server.command.push_back(std::move(arg.value));
    }
    MEND_ASSIGN_OR_RETURN(server.env, GetStringTable(t, "env", path, at + ".env"));
    MEND_ASSIGN_OR_RETURN(auto cwd, GetTomlString(t, "cwd", path, at + ".cwd"));
    if (cwd.has_value()) {
      if (cwd->empty()) return ErrorAt(path, KeyLine(t, "cwd"), at + ".cwd must not be empty");
      server.cwd = NormalizePath(cwd->front() == '/' ? *cwd : JoinPath(spec.dir, *cwd));
    }
    if (t.contains("headers")) {
      return ErrorAt(path, KeyLine(t, "headers"),
                     at + ".headers is for a server reached by url; this one has a command");
    }
  } else {
    if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0) {
      return ErrorAt(path, KeyLine(t, "url"),
                     at + ".url must start with http:// or https://, got \"" + *url + "\"");
    }
    server.url = std::move(*url);
    MEND_ASSIGN_OR_RETURN(server.headers, GetStringTable(t, "headers", path, at + ".headers"));
    for (const char* key : {"args", "env", "cwd"}) {
      if (t.contains(key)) {
        return ErrorAt(path, KeyLine(t, key),
                       at + "." + key + " is for a server started by command; this one has a url");
      }
    }
  }

  if (t.contains("tools")) {
    MEND_ASSIGN_OR_RETURN(server.tools, GetNames(t, "tools", path, at + ".tools"));
  }
  MEND_ASSIGN_OR_RETURN(server.read_only, GetNames(t, "read_only", path, at + ".read_only"));
  MEND_ASSIGN_OR_RETURN(auto trust,
                        GetTomlBool(t, "trust_annotations", path, at + ".trust_annotations"));
  server.trust_annotations = trust.value_or(false);
  if (const auto* s = t.get_as<std::string>("requires_approval")) {
    if (s->get() != "destructive") {
      return ErrorAt(path, KeyLine(t, "requires_approval"),
                     at +
                         ".requires_approval must be \"destructive\" or an array of tool names, "
                         "got \"" +
                         s->get() + "\"");
    }
    server.approve_destructive = true;
  } else {
    MEND_ASSIGN_OR_RETURN(server.requires_approval,
                          GetNames(t, "requires_approval", path, at + ".requires_approval"));
  }
  // A name the allow-list leaves out is a typo or a contradiction either way.
  if (server.tools.has_value()) {
    for (const auto* list : {&server.read_only, &server.requires_approval}) {
      for (const std::string& tool : *list) {
        if (std::find(server.tools->begin(), server.tools->end(), tool) != server.tools->end()) {
          continue;
        }
        const char* key = list == &server.read_only ? "read_only" : "requires_approval";
        return ErrorAt(path, KeyLine(t, key),
                       at + "." + key + " names \"" + tool + "\", which " + at +
                           ".tools leaves out" + DidYouMean(tool, *server.tools));
      }
    }
  }
  MEND_ASSIGN_OR_RETURN(auto timeout, GetTomlInt(t, "timeout", path, at + ".timeout", 1, 3600));
  if (timeout.has_value()) server.timeout = std::chrono::seconds(*timeout);
  MEND_ASSIGN_OR_RETURN(auto max_bytes, GetTomlInt(t, "max_result_bytes", path,
                                                   at + ".max_result_bytes", 1024, 4 << 20));
  if (max_bytes.has_value()) server.max_result_bytes = static_cast<size_t>(*max_bytes);
  return server;
}

}  // namespace

Status CheckVariableReferences(std::string_view value) {
  for (size_t pos = value.find("${"); pos != std::string_view::npos;
       pos = value.find("${", pos + 2)) {
    const size_t end = value.find('}', pos + 2);
    if (end == std::string_view::npos) {
      return InvalidArgumentError("\"${\" without its closing \"}\"");
    }
    const std::string_view name = value.substr(pos + 2, end - pos - 2);
    bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name.front()));
    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok) {
      return InvalidArgumentError("${" + std::string(name) +
                                  "} is not a variable name (letters, digits and _)");
    }
  }
  return OkStatus();
}

Result<std::vector<McpServerSpec>> ParseMcpServers(const toml::table& agent_toml,
                                                   const std::string& path, const AgentSpec& spec) {
  std::vector<McpServerSpec> servers;
  const toml::node* node = agent_toml.get("mcp_servers");
  if (node == nullptr) return servers;
  const auto* array = node->as_array();
  if (array == nullptr) {
    return ErrorAt(path, KeyLine(agent_toml, "mcp_servers"),
                   "mcp_servers must be an array of tables, one [[mcp_servers]] per server, got " +
                       TomlTypeName(*node));
  }
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    const std::string where = "mcp_servers[" + std::to_string(i) + "]";
    const int line = static_cast<int>(item.source().begin.line);
    const auto* table = item.as_table();
    if (table == nullptr) {
      return ErrorAt(path, line,
                     where + " must be a table ([[mcp_servers]]), got " + TomlTypeName(item));
    }
    MEND_ASSIGN_OR_RETURN(McpServerSpec server, ParseServer(*table, path, where, line, spec));
    for (const McpServerSpec& other : servers) {
      if (other.name == server.name) {
        return ErrorAt(path, KeyLine(*table, "name"),
                       "two MCP servers are named \"" + server.name + "\" (the other on line " +
                           std::to_string(other.line) + ")");
      }
    }
    servers.push_back(std::move(server));
  }
  return servers;
}

}  // namespace mend::agent::folder_internal
