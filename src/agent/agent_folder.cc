// LoadAgentFolder: agent.toml plus the files beside it (docs/agent_folder.md).
// Everything is validated at load time so that a typo fails `mend run` at once, naming the file
// and line, instead of surfacing as odd behaviour in the middle of a run.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "agent/agent_folder_checks.h"
#include "agent/agent_folder_internal.h"
#include "agent/agent_folder_mcp.h"
#include "agent/agent_folder_toml.h"
#include "mend/agent/agent_spec.h"
#include "mend/agent/builtin_tools.h"
#include "mend/base/edit_distance.h"
#include "mend/base/hash.h"
#include "mend/base/utf8.h"

namespace mend::agent {
namespace {

using folder_internal::CheckKnownKeys;
using folder_internal::DidYouMean;
using folder_internal::EntriesInFileOrder;
using folder_internal::ErrorAt;
using folder_internal::GetTomlInt;
using folder_internal::GetTomlString;
using folder_internal::GetTomlStringArray;
using folder_internal::GetTomlTable;
using folder_internal::IsValidName;
using folder_internal::KeyLine;
using folder_internal::kNameRule;
using folder_internal::ReadTextFile;
using folder_internal::TomlEntry;
using folder_internal::TomlString;
using folder_internal::TomlTypeName;

const std::vector<std::string> kAgentKeys = {"name",      "description", "model",        "tools",
                                             "workspace", "limits",      "tool_options", "checks",
                                             "shadow",    "mcp_servers", "canary",       "improve"};
const std::vector<std::string> kLimitKeys = {"max_steps", "max_cost_usd", "max_wall_seconds"};
const std::vector<std::string> kToolOptionKeys = {"timeout_seconds", "max_output_bytes"};
constexpr int64_t kMaxOutputBytesLimit = 64 * 1024 * 1024;
constexpr char kInstructionsFile[] = "instructions.md";

Status ParseIdentity(const toml::table& table, const std::string& path, AgentSpec& spec) {
  MEND_ASSIGN_OR_RETURN(auto name, GetTomlString(table, "name", path, "name"));
  if (!name.has_value()) return ErrorAt(path, 1, "missing required key name");
  if (!IsValidName(*name)) {
    return ErrorAt(path, KeyLine(table, "name"),
                   "invalid agent name \"" + *name + "\": use " + std::string(kNameRule));
  }
  spec.name = std::move(*name);
  MEND_ASSIGN_OR_RETURN(auto description, GetTomlString(table, "description", path, "description"));
  spec.description = description.value_or("");
  MEND_ASSIGN_OR_RETURN(auto model, GetTomlString(table, "model", path, "model"));
  spec.model = model.value_or("");
  return OkStatus();
}

std::string FormatNumber(double d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", d);
  return buf;
}

Status ParseLimits(const toml::table& table, const std::string& path, AgentLimits& limits) {
  MEND_ASSIGN_OR_RETURN(const toml::table* t, GetTomlTable(table, "limits", path, "limits"));
  if (t == nullptr) return OkStatus();
  MEND_RETURN_IF_ERROR(CheckKnownKeys(*t, kLimitKeys, path, "limits."));
  MEND_ASSIGN_OR_RETURN(auto steps,
                        GetTomlInt(*t, "max_steps", path, "limits.max_steps", 1, 10000));
  if (steps.has_value()) limits.max_steps = static_cast<int>(*steps);
  MEND_ASSIGN_OR_RETURN(
      auto wall, GetTomlInt(*t, "max_wall_seconds", path, "limits.max_wall_seconds", 1, 86400));
  if (wall.has_value()) limits.max_wall = std::chrono::seconds(*wall);
  if (const toml::node* cost = t->get("max_cost_usd")) {
    const std::optional<double> value = cost->value<double>();  // integers convert too
    if (!cost->is_number() || !value.has_value() || !std::isfinite(*value) || *value <= 0 ||
        *value > 1000) {
      return ErrorAt(path, KeyLine(*t, "max_cost_usd"),
                     "limits.max_cost_usd must be a number greater than 0 and at most 1000, got " +
                         (cost->is_number() ? FormatNumber(*value) : TomlTypeName(*cost)));
    }
    limits.max_cost_usd = *value;
  }
  return OkStatus();
}

// `tools`: each name built-in or defined in tools/*.toml, no duplicates.
Status ParseToolList(const toml::table& table, const std::string& path, AgentSpec& spec) {
  if (const toml::node* node = table.get("tools"); node != nullptr && node->is_table()) {
    return ErrorAt(path, KeyLine(table, "tools"),
                   "tools must be an array of tool names; options of a tool go in "
                   "[tool_options.<name>]");
  }
  MEND_ASSIGN_OR_RETURN(auto tools, GetTomlStringArray(table, "tools", path, "tools",
                                                       R"(["read_file", "list_dir"])"));
  if (!tools.has_value()) {
    return ErrorAt(path, 1, "missing required key tools (e.g. tools = [\"read_file\"])");
  }
  std::vector<std::string> available = BuiltinToolNames();
  for (const CommandToolSpec& tool : spec.command_tools) available.push_back(tool.spec.name);
  std::string listed;
  for (const std::string& name : available) listed += (listed.empty() ? "" : ", ") + name;
  for (const TomlString& tool : *tools) {
    if (std::find(available.begin(), available.end(), tool.value) == available.end()) {
      return ErrorAt(path, tool.line,
                     "unknown tool \"" + tool.value + "\"" + DidYouMean(tool.value, available) +
                         "; available tools: " + listed);
    }
    if (std::find(spec.tools.begin(), spec.tools.end(), tool.value) != spec.tools.end()) {
      return ErrorAt(path, tool.line, "tool \"" + tool.value + "\" is listed twice");
    }
    spec.tools.push_back(tool.value);
  }
  return OkStatus();
}

Status ParseToolOptions(const toml::table& table, const std::string& path, AgentSpec& spec) {
  MEND_ASSIGN_OR_RETURN(const toml::table* all,
                        GetTomlTable(table, "tool_options", path, "tool_options"));
  if (all == nullptr) return OkStatus();
  for (const TomlEntry& entry : EntriesInFileOrder(*all)) {
    const std::string name = "tool_options." + entry.key;
    if (std::find(spec.tools.begin(), spec.tools.end(), entry.key) == spec.tools.end()) {
      return ErrorAt(path, entry.line,
                     "[" + name + "] configures a tool that is not in tools" +
                         DidYouMean(entry.key, spec.tools));
    }
    MEND_ASSIGN_OR_RETURN(const toml::table* t, GetTomlTable(*all, entry.key, path, name));
    MEND_RETURN_IF_ERROR(CheckKnownKeys(*t, kToolOptionKeys, path, name + "."));
    ToolOptions options;
    MEND_ASSIGN_OR_RETURN(
        auto timeout, GetTomlInt(*t, "timeout_seconds", path, name + ".timeout_seconds", 1, 86400));
    if (timeout.has_value()) options.timeout = std::chrono::seconds(*timeout);
    MEND_ASSIGN_OR_RETURN(auto max_output,
                          GetTomlInt(*t, "max_output_bytes", path, name + ".max_output_bytes", 1,
                                     kMaxOutputBytesLimit));
    if (max_output.has_value()) options.max_output_bytes = static_cast<size_t>(*max_output);
    spec.tool_options[entry.key] = options;
  }
  return OkStatus();
}

Status ParseWorkspace(FileSystem& fs, const toml::table& table, const std::string& path,
                      AgentSpec& spec) {
  MEND_ASSIGN_OR_RETURN(auto workspace, GetTomlString(table, "workspace", path, "workspace"));
  if (!workspace.has_value()) return OkStatus();
  const int line = KeyLine(table, "workspace");
  if (workspace->empty())
    return ErrorAt(path, line, "workspace must not be empty; omit it instead");
  // Runs record and show the workspace in normal form, not as "agents/x/../../ws".
  const std::string resolved =
      NormalizePath(workspace->front() == '/' ? *workspace : JoinPath(spec.dir, *workspace));
  Result<FileInfo> info = fs.Stat(resolved);
  if (!info.ok() || !info->is_directory) {
    return ErrorAt(path, line, "workspace " + resolved + " is not an existing directory");
  }
  spec.workspace = resolved;
  return OkStatus();
}

// " (did you mean X?)" for a file of `dir` that looks like a misspelt instructions.md: within two
// edits of it, ignoring case, or whose name before the first dot is within two edits of
// "instructions" (instruction.md, Instructions.md, INSTRUCTIONS.txt, instructions.markdown).
std::string NearInstructionsFile(FileSystem& fs, const std::string& dir) {
  Result<std::vector<std::string>> names = fs.List(dir);
  if (!names.ok()) return "";
  const std::string* best = nullptr;
  size_t best_distance = 3;
  for (const std::string& name : *names) {
    if (name.empty() || name[0] == '.') continue;
    const std::string lower = ToLowerAscii(name);
    size_t d = EditDistance(lower, kInstructionsFile);
    d = std::min(d, EditDistance(lower.substr(0, lower.find('.')), "instructions"));
    if (d < best_distance) best = &name, best_distance = d;
  }
  return best == nullptr ? "" : " (did you mean " + *best + "?)";
}

// instructions.md is the agent's system prompt. A folder without one is refused like a folder
// without agent.toml: a renamed or misspelt file would otherwise run the agent with no prompt.
Result<std::string> LoadInstructions(FileSystem& fs, const std::string& dir) {
  const std::string path = JoinPath(dir, kInstructionsFile);
  Result<FileInfo> info = fs.Stat(path);
  if (!info.ok() && info.status().code() == StatusCode::kNotFound) {
    return NotFoundError(path + ": missing; an agent folder needs " + kInstructionsFile +
                         ", the agent's system prompt" + NearInstructionsFile(fs, dir));
  }
  return ReadTextFile(fs, path);
}

Status CheckFolder(FileSystem& fs, const std::string& dir, const std::string& toml_path) {
  Result<FileInfo> info = fs.Stat(dir);
  if (!info.ok() && info.status().code() == StatusCode::kNotFound) {
    return NotFoundError("agent folder " + dir + " does not exist");
  }
  MEND_RETURN_IF_ERROR(info);
  if (!info->is_directory)
    return InvalidArgumentError(dir + " is not an agent folder (a directory)");
  if (!fs.Exists(toml_path)) {
    return NotFoundError(toml_path +
                         ": missing; an agent folder needs agent.toml with at least "
                         "name = \"...\" and tools = [...]");
  }
  return OkStatus();
}

Result<AgentSpec> LoadFolder(FileSystem& fs, const std::string& dir) {
  const std::string path = JoinPath(dir, "agent.toml");
  MEND_RETURN_IF_ERROR(CheckFolder(fs, dir, path));
  MEND_ASSIGN_OR_RETURN(std::string text, ReadTextFile(fs, path));
  MEND_ASSIGN_OR_RETURN(toml::table table, folder_internal::ParseToml(text, path));
  MEND_RETURN_IF_ERROR(CheckKnownKeys(table, kAgentKeys, path, ""));
  AgentSpec spec;
  spec.dir = dir;
  spec.agent_toml_sha256 = Sha256Hex(text);
  MEND_RETURN_IF_ERROR(ParseIdentity(table, path, spec));
  MEND_RETURN_IF_ERROR(ParseLimits(table, path, spec.limits));
  MEND_ASSIGN_OR_RETURN(spec.command_tools, folder_internal::LoadCommandTools(fs, dir));
  MEND_RETURN_IF_ERROR(ParseToolList(table, path, spec));
  MEND_RETURN_IF_ERROR(ParseToolOptions(table, path, spec));
  MEND_RETURN_IF_ERROR(ParseWorkspace(fs, table, path, spec));
  MEND_ASSIGN_OR_RETURN(spec.checks, folder_internal::ParseChecks(table, path, spec.tools));
  MEND_ASSIGN_OR_RETURN(spec.shadow, folder_internal::ParseShadow(table, path, spec));
  MEND_ASSIGN_OR_RETURN(spec.mcp_servers, folder_internal::ParseMcpServers(table, path, spec));
  MEND_ASSIGN_OR_RETURN(spec.canary, folder_internal::ParseCanary(table, path));
  MEND_ASSIGN_OR_RETURN(spec.improve, folder_internal::ParseImprove(table, path));
  MEND_ASSIGN_OR_RETURN(spec.instructions, LoadInstructions(fs, dir));
  MEND_ASSIGN_OR_RETURN(spec.skills, folder_internal::LoadSkills(fs, dir));
  return spec;
}

}  // namespace

Result<AgentSpec> LoadAgentFolder(FileSystem& fs, const std::string& dir) {
  Result<AgentSpec> spec = LoadFolder(fs, dir);
  if (spec.ok()) return spec;
  const StatusCode code = spec.status().code();
  if (code != StatusCode::kInvalidArgument && code != StatusCode::kNotFound) return spec;
  return spec.status().WithDetailCode(kAgentFolderInvalidDetail);
}

}  // namespace mend::agent
