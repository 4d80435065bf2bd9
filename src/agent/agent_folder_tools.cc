// tools/*.toml: external command tools. Each file declares one tool: what the model sees (name,
// description, JSON Schema parameters) and how it runs (argv, read_only, requires_approval,
// timeout). A command tool needs approval unless it is read-only, because it runs arbitrary
// programs.

#include <nlohmann/json.hpp>

#include "agent/agent_folder_internal.h"
#include "agent/agent_folder_toml.h"
#include "mend/agent/builtin_tools.h"
#include "mend/agent/command_vars.h"
#include "mend/base/json.h"

namespace mend::agent::folder_internal {
namespace {

const std::vector<std::string>& ToolFileKeys() {
  static const auto* const kKeys =
      new std::vector<std::string>{"name",      "description",       "command",        "parameters",
                                   "read_only", "requires_approval", "timeout_seconds"};
  return *kKeys;
}

Result<std::vector<std::string>> ParseCommand(const toml::table& table, const std::string& path) {
  MEND_ASSIGN_OR_RETURN(auto argv, GetTomlArgv(table, "command", path, "command"));
  if (!argv.has_value()) return ErrorAt(path, 1, "missing required key command");
  for (size_t i = 0; i < argv->size(); ++i) {
    if (Status vars = CheckCommandVariables((*argv)[i]); !vars.ok()) {
      return ErrorAt(path, KeyLine(table, "command"),
                     "command[" + std::to_string(i) + "]: " + std::string(vars.message()));
    }
  }
  return std::move(*argv);
}

// The JSON Schema of the tool's arguments as compact JSON text.
Result<std::string> ParseParameters(const toml::table& table, const std::string& path) {
  MEND_ASSIGN_OR_RETURN(std::optional<nlohmann::json> parsed,
                        GetTomlJsonDocument(table, "parameters", path, "parameters"));
  if (!parsed.has_value()) return std::string(ToolSpec().parameters);
  const int line = KeyLine(table, "parameters");
  nlohmann::json schema = std::move(*parsed);
  if (!schema.is_object() || !schema.contains("type") || schema["type"] != "object") {
    return ErrorAt(path, line, "parameters must be a JSON Schema object with \"type\": \"object\"");
  }
  if (schema.contains("properties") && !schema["properties"].is_object()) {
    return ErrorAt(path, line, "parameters.properties must be an object");
  }
  if (!schema.contains("properties")) schema["properties"] = nlohmann::json::object();
  return DumpJson(schema);
}

Status ParseIdentity(const toml::table& table, const std::string& path, ToolSpec& spec) {
  MEND_ASSIGN_OR_RETURN(auto name, GetTomlString(table, "name", path, "name"));
  if (!name.has_value()) return ErrorAt(path, 1, "missing required key name");
  const int line = KeyLine(table, "name");
  if (!IsValidName(*name)) {
    return ErrorAt(path, line,
                   "invalid tool name \"" + *name + "\": use " + std::string(kNameRule));
  }
  if (IsBuiltinTool(*name)) {
    return ErrorAt(path, line,
                   "tool name \"" + *name + "\" is taken by a built-in tool; choose another name");
  }
  MEND_ASSIGN_OR_RETURN(auto description, GetTomlString(table, "description", path, "description"));
  if (!description.has_value() || description->empty()) {
    return ErrorAt(path, description.has_value() ? KeyLine(table, "description") : 1,
                   "a tool needs a non-empty description: the model reads it to decide when to "
                   "call the tool");
  }
  spec.name = std::move(*name);
  spec.description = std::move(*description);
  return OkStatus();
}

Result<CommandToolSpec> ParseToolFile(std::string_view text, const std::string& rel_path,
                                      const std::string& path) {
  MEND_ASSIGN_OR_RETURN(toml::table table, ParseToml(text, path));
  MEND_RETURN_IF_ERROR(CheckKnownKeys(table, ToolFileKeys(), path, ""));
  CommandToolSpec tool;
  tool.path = rel_path;
  MEND_RETURN_IF_ERROR(ParseIdentity(table, path, tool.spec));
  MEND_ASSIGN_OR_RETURN(tool.command, ParseCommand(table, path));
  MEND_ASSIGN_OR_RETURN(tool.spec.parameters, ParseParameters(table, path));
  MEND_ASSIGN_OR_RETURN(auto read_only, GetTomlBool(table, "read_only", path, "read_only"));
  MEND_ASSIGN_OR_RETURN(auto approval,
                        GetTomlBool(table, "requires_approval", path, "requires_approval"));
  tool.spec.read_only = read_only.value_or(false);
  tool.spec.requires_approval = approval.value_or(!tool.spec.read_only);
  MEND_ASSIGN_OR_RETURN(auto timeout,
                        GetTomlInt(table, "timeout_seconds", path, "timeout_seconds", 1, 86400));
  if (timeout.has_value()) tool.timeout = std::chrono::seconds(*timeout);
  return tool;
}

}  // namespace

Result<std::vector<CommandToolSpec>> LoadCommandTools(FileSystem& fs, const std::string& dir) {
  const std::string tools_dir = JoinPath(dir, "tools");
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> files,
                        ListFilesWithSuffix(fs, tools_dir, ".toml"));
  std::vector<CommandToolSpec> tools;
  for (const std::string& file : files) {
    const std::string rel_path = JoinPath("tools", file);
    const std::string path = JoinPath(dir, rel_path);
    MEND_ASSIGN_OR_RETURN(std::string text, ReadTextFile(fs, path));
    MEND_ASSIGN_OR_RETURN(CommandToolSpec tool, ParseToolFile(text, rel_path, path));
    for (const CommandToolSpec& earlier : tools) {
      if (earlier.spec.name == tool.spec.name) {
        // Re-parsing is cheap and keeps the line out of CommandToolSpec.
        MEND_ASSIGN_OR_RETURN(toml::table table, ParseToml(text, path));
        return ErrorAt(
            path, KeyLine(table, "name"),
            "duplicate tool name \"" + tool.spec.name + "\" (also in " + earlier.path + ")");
      }
    }
    tools.push_back(std::move(tool));
  }
  return tools;
}

}  // namespace mend::agent::folder_internal
