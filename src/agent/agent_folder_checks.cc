// [[checks]] and [shadow]: the agent.toml surface of heal's OutputCheck and ShadowHook. Every check
// is validated here, at load time, the way heal would compile it (the pattern compiles, the schema
// is usable, the arguments fit the kind), so a mistake fails `mend run` at once with its file and
// line instead of failing the hook in the middle of a run.

#include "agent/agent_folder_checks.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "agent/agent_folder_internal.h"
#include "agent/agent_folder_toml.h"
#include "agent/json_schema_internal.h"
#include "mend/agent/builtin_tools.h"
#include "mend/agent/command_vars.h"
#include "mend/agent/json_schema.h"
#include "mend/base/json.h"

namespace mend::agent::folder_internal {
namespace {

using Kind = CheckSpec::Kind;

constexpr int64_t kMaxCheckBytes = 64 * 1024 * 1024;
constexpr int64_t kMaxCheckTimeoutSeconds = 3600;

// A kind as agent.toml spells it, with the keys that hold its arguments (the first one required).
struct KindInfo {
  std::string_view name;
  Kind kind;
  std::vector<std::string> arguments;
};

const std::vector<KindInfo>& Kinds() {
  static const auto* const kKinds = new std::vector<KindInfo>{
      {"regex", Kind::kRegex, {"pattern", "must_match"}},
      {"json_schema", Kind::kJsonSchema, {"schema"}},
      {"max_bytes", Kind::kMaxBytes, {"max_bytes"}},
      {"command", Kind::kCommand, {"command", "timeout_seconds"}},
  };
  return *kKinds;
}

const std::vector<std::string>& CheckKeys() {
  static const auto* const kKeys = [] {
    auto* keys = new std::vector<std::string>{"tool", "kind", "action", "message"};
    for (const KindInfo& kind : Kinds()) {
      keys->insert(keys->end(), kind.arguments.begin(), kind.arguments.end());
    }
    return keys;
  }();
  return *kKeys;
}

std::string JoinNames(const std::vector<std::string>& names, std::string_view last_separator) {
  std::string joined;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) joined += i + 1 == names.size() ? last_separator : ", ";
    joined += names[i];
  }
  return joined;
}

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

int TableLine(const toml::table& table) { return static_cast<int>(table.source().begin.line); }

// An optional string key holding one of `choices`.
Result<std::optional<std::string>> GetChoice(const toml::table& t, std::string_view key,
                                             const std::string& path, const std::string& name,
                                             const std::vector<std::string>& choices) {
  MEND_ASSIGN_OR_RETURN(auto value, GetTomlString(t, key, path, name));
  if (!value.has_value() || std::find(choices.begin(), choices.end(), *value) != choices.end()) {
    return value;
  }
  return ErrorAt(path, KeyLine(t, key),
                 name + " must be " + JoinNames(choices, " or ") + ", got " + Quoted(*value) +
                     DidYouMean(*value, choices));
}

Status ParseTool(const toml::table& t, const std::string& path, const std::string& name,
                 const std::vector<std::string>& enabled, CheckSpec& check) {
  MEND_ASSIGN_OR_RETURN(auto tool, GetTomlString(t, "tool", path, name + ".tool"));
  if (!tool.has_value()) {
    return ErrorAt(path, TableLine(t),
                   name +
                       ": missing required key tool (a tool of `tools`, or \"*\" for every "
                       "tool)");
  }
  if (*tool != "*" && std::find(enabled.begin(), enabled.end(), *tool) == enabled.end()) {
    return ErrorAt(path, KeyLine(t, "tool"),
                   name + ".tool " + Quoted(*tool) + " is not in tools" +
                       DidYouMean(*tool, enabled) +
                       "; name an enabled tool, or \"*\" for every "
                       "tool");
  }
  check.tool = std::move(*tool);
  return OkStatus();
}

// The kind of the check, after making sure no key of another kind is set.
Result<const KindInfo*> ParseKind(const toml::table& t, const std::string& path,
                                  const std::string& name) {
  std::vector<std::string> names;
  for (const KindInfo& kind : Kinds()) names.emplace_back(kind.name);
  MEND_ASSIGN_OR_RETURN(auto spelled, GetChoice(t, "kind", path, name + ".kind", names));
  if (!spelled.has_value()) {
    return ErrorAt(path, TableLine(t),
                   name + ": missing required key kind (" + JoinNames(names, " or ") + ")");
  }
  const KindInfo* info = nullptr;
  for (const KindInfo& kind : Kinds()) {
    if (kind.name == *spelled) info = &kind;
  }
  for (const KindInfo& other : Kinds()) {
    if (&other == info) continue;
    for (const std::string& key : other.arguments) {
      if (t.get(key) == nullptr) continue;
      return ErrorAt(path, KeyLine(t, key),
                     name + "." + key + " does not apply to a check of kind " + *spelled +
                         " (its keys: " + JoinNames(info->arguments, ", ") + ")");
    }
  }
  return info;
}

Status ParseActionAndMessage(const toml::table& t, const std::string& path, const std::string& name,
                             CheckSpec& check) {
  MEND_ASSIGN_OR_RETURN(auto action,
                        GetChoice(t, "action", path, name + ".action", {"hint", "replace"}));
  check.action = action == "replace" ? CheckSpec::Action::kReplace : CheckSpec::Action::kHint;
  MEND_ASSIGN_OR_RETURN(auto message, GetTomlString(t, "message", path, name + ".message"));
  if (message.has_value() && message->empty()) {
    return ErrorAt(path, KeyLine(t, "message"),
                   name +
                       ".message must not be empty; omit it to get a description of the "
                       "failure");
  }
  check.message = message.value_or("");
  return OkStatus();
}

Status ParseRegex(const toml::table& t, const std::string& path, const std::string& name,
                  CheckSpec& check) {
  MEND_ASSIGN_OR_RETURN(auto pattern, GetTomlString(t, "pattern", path, name + ".pattern"));
  if (pattern.has_value() && pattern->empty()) {
    return ErrorAt(path, KeyLine(t, "pattern"),
                   name + ".pattern must not be empty (it would match every output)");
  }
  if (pattern.has_value()) {
    Result<Pattern> compiled = internal::CompilePattern(*pattern);
    if (!compiled.ok()) {
      return ErrorAt(
          path, KeyLine(t, "pattern"),
          name + ".pattern does not compile: " + std::string(compiled.status().message()));
    }
    check.pattern = std::move(*pattern);
  }
  MEND_ASSIGN_OR_RETURN(auto must_match, GetTomlBool(t, "must_match", path, name + ".must_match"));
  check.must_match = must_match.value_or(true);
  return OkStatus();
}

Status ParseSchema(const toml::table& t, const std::string& path, const std::string& name,
                   CheckSpec& check) {
  MEND_ASSIGN_OR_RETURN(std::optional<nlohmann::json> schema,
                        GetTomlJsonDocument(t, "schema", path, name + ".schema"));
  if (!schema.has_value()) return OkStatus();
  const Status usable = ValidateJsonSchema(*schema);
  if (!usable.ok()) {
    return ErrorAt(path, KeyLine(t, "schema"),
                   name + ".schema is not a usable JSON Schema: " + std::string(usable.message()));
  }
  check.schema = DumpJson(*schema);
  return OkStatus();
}

Status ParseCommandCheck(const toml::table& t, const std::string& path, const std::string& name,
                         CheckSpec& check) {
  MEND_ASSIGN_OR_RETURN(auto argv, GetTomlArgv(t, "command", path, name + ".command"));
  if (argv.has_value()) {
    for (size_t i = 0; i < argv->size(); ++i) {
      if (Status vars = CheckCommandVariables((*argv)[i]); !vars.ok()) {
        return ErrorAt(
            path, KeyLine(t, "command"),
            name + ".command[" + std::to_string(i) + "]: " + std::string(vars.message()));
      }
    }
    check.command = std::move(*argv);
  }
  MEND_ASSIGN_OR_RETURN(auto timeout,
                        GetTomlInt(t, "timeout_seconds", path, name + ".timeout_seconds", 1,
                                   kMaxCheckTimeoutSeconds));
  if (timeout.has_value()) check.timeout = std::chrono::seconds(*timeout);
  return OkStatus();
}

Status ParseArguments(const toml::table& t, const std::string& path, const std::string& name,
                      const KindInfo& kind, CheckSpec& check) {
  const std::string& required = kind.arguments.front();
  if (t.get(required) == nullptr) {
    return ErrorAt(path, TableLine(t),
                   name + ": a check of kind " + std::string(kind.name) + " needs " + required);
  }
  check.kind = kind.kind;
  switch (kind.kind) {
    case Kind::kRegex:
      return ParseRegex(t, path, name, check);
    case Kind::kJsonSchema:
      return ParseSchema(t, path, name, check);
    case Kind::kMaxBytes: {
      MEND_ASSIGN_OR_RETURN(
          auto max_bytes, GetTomlInt(t, "max_bytes", path, name + ".max_bytes", 1, kMaxCheckBytes));
      check.max_bytes = static_cast<size_t>(*max_bytes);
      return OkStatus();
    }
    case Kind::kCommand:
      return ParseCommandCheck(t, path, name, check);
  }
  return OkStatus();
}

Result<CheckSpec> ParseCheck(const toml::table& t, const std::string& path, const std::string& name,
                             const std::vector<std::string>& enabled) {
  MEND_RETURN_IF_ERROR(CheckKnownKeys(t, CheckKeys(), path, name + "."));
  CheckSpec check;
  MEND_RETURN_IF_ERROR(ParseTool(t, path, name, enabled, check));
  MEND_ASSIGN_OR_RETURN(const KindInfo* kind, ParseKind(t, path, name));
  MEND_RETURN_IF_ERROR(ParseActionAndMessage(t, path, name, check));
  MEND_RETURN_IF_ERROR(ParseArguments(t, path, name, *kind, check));
  return check;
}

bool IsEnabled(const AgentSpec& spec, const std::string& tool) {
  return std::find(spec.tools.begin(), spec.tools.end(), tool) != spec.tools.end();
}

// The enabled tools that declare themselves read-only. ask_human is left out although it changes
// nothing: a shadow run is meant to run unattended, and a question would stop it for a person.
std::vector<std::string> DefaultReadOnly(const AgentSpec& spec) {
  std::vector<std::string> read_only;
  for (const std::string& name : spec.tools) {
    if (name == kAskHumanToolName) continue;
    bool declared = false;
    if (Result<std::unique_ptr<Tool>> builtin = MakeBuiltinTool(name); builtin.ok()) {
      declared = (*builtin)->spec().read_only;
    }
    for (const CommandToolSpec& tool : spec.command_tools) {
      if (tool.spec.name == name) declared = tool.spec.read_only;
    }
    if (declared) read_only.push_back(name);
  }
  return read_only;
}

}  // namespace

Result<std::vector<CheckSpec>> ParseChecks(const toml::table& agent_toml, const std::string& path,
                                           const std::vector<std::string>& enabled) {
  std::vector<CheckSpec> checks;
  const toml::node* node = agent_toml.get("checks");
  if (node == nullptr) return checks;
  const auto* array = node->as_array();
  if (array == nullptr) {
    return ErrorAt(
        path, KeyLine(agent_toml, "checks"),
        "checks must be an array of tables, one [[checks]] per check, got " + TomlTypeName(*node));
  }
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    const std::string name = "checks[" + std::to_string(i) + "]";
    const auto* table = item.as_table();
    if (table == nullptr) {
      return ErrorAt(path, static_cast<int>(item.source().begin.line),
                     name + " must be a table ([[checks]]), got " + TomlTypeName(item));
    }
    MEND_ASSIGN_OR_RETURN(CheckSpec check, ParseCheck(*table, path, name, enabled));
    checks.push_back(std::move(check));
  }
  return checks;
}

Result<ShadowSpec> ParseShadow(const toml::table& agent_toml, const std::string& path,
                               const AgentSpec& spec) {
  ShadowSpec shadow;
  MEND_ASSIGN_OR_RETURN(const toml::table* t, GetTomlTable(agent_toml, "shadow", path, "shadow"));
  std::optional<std::vector<TomlString>> listed;
  if (t != nullptr) {
    MEND_RETURN_IF_ERROR(CheckKnownKeys(*t, {"read_only"}, path, "shadow."));
    MEND_ASSIGN_OR_RETURN(listed, GetTomlStringArray(*t, "read_only", path, "shadow.read_only",
                                                     R"(["read_file", "grep"])"));
  }
  if (!listed.has_value()) {
    shadow.read_only = DefaultReadOnly(spec);
    return shadow;
  }
  for (TomlString& tool : *listed) {
    if (!IsEnabled(spec, tool.value)) {
      return ErrorAt(path, tool.line,
                     "shadow.read_only names " + Quoted(tool.value) + ", which is not in tools" +
                         DidYouMean(tool.value, spec.tools));
    }
    if (std::find(shadow.read_only.begin(), shadow.read_only.end(), tool.value) !=
        shadow.read_only.end()) {
      return ErrorAt(path, tool.line, "shadow.read_only lists " + Quoted(tool.value) + " twice");
    }
    shadow.read_only.push_back(std::move(tool.value));
  }
  return shadow;
}

Result<CanarySpec> ParseCanary(const toml::table& agent_toml, const std::string& path) {
  CanarySpec canary;
  MEND_ASSIGN_OR_RETURN(const toml::table* t, GetTomlTable(agent_toml, "canary", path, "canary"));
  if (t == nullptr) return canary;
  MEND_RETURN_IF_ERROR(CheckKnownKeys(*t, {"check", "timeout_seconds"}, path, "canary."));
  MEND_ASSIGN_OR_RETURN(auto check, GetTomlArgv(*t, "check", path, "canary.check"));
  if (check.has_value()) canary.check = std::move(*check);
  MEND_ASSIGN_OR_RETURN(auto timeout,
                        GetTomlInt(*t, "timeout_seconds", path, "canary.timeout_seconds", 1, 3600));
  if (timeout.has_value()) canary.timeout = std::chrono::seconds(*timeout);
  return canary;
}

Result<ImproveSpec> ParseImprove(const toml::table& agent_toml, const std::string& path) {
  ImproveSpec improve;
  MEND_ASSIGN_OR_RETURN(const toml::table* t, GetTomlTable(agent_toml, "improve", path, "improve"));
  if (t == nullptr) return improve;
  MEND_RETURN_IF_ERROR(CheckKnownKeys(*t, {"check", "cases", "timeout_seconds"}, path, "improve."));
  MEND_ASSIGN_OR_RETURN(auto check, GetTomlArgv(*t, "check", path, "improve.check"));
  if (check.has_value()) {
    for (size_t i = 0; i < check->size(); ++i) {
      const std::string& arg = (*check)[i];
      Status vars = CheckCommandVariables(arg);
      if (vars.ok() && arg.find("${WORKSPACE}") != std::string::npos) {
        vars = InvalidArgumentError(
            "${WORKSPACE} is not known here: the check runs in the run's workspace, so a path "
            "relative to it names a file there");
      }
      if (!vars.ok()) {
        return ErrorAt(path, KeyLine(*t, "check"),
                       "improve.check[" + std::to_string(i) + "]: " + std::string(vars.message()));
      }
    }
    improve.check = std::move(*check);
  }
  MEND_ASSIGN_OR_RETURN(auto cases, GetTomlString(*t, "cases", path, "improve.cases"));
  if (cases.has_value()) {
    // The server reads the file when a request names the folder: it must be the folder's own.
    bool inside = !cases->empty() && cases->front() != '/';
    size_t start = 0;
    while (inside && start <= cases->size()) {
      size_t slash = cases->find('/', start);
      if (slash == std::string::npos) slash = cases->size();
      inside = cases->compare(start, slash - start, "..") != 0;
      start = slash + 1;
    }
    if (!inside) {
      return ErrorAt(path, KeyLine(*t, "cases"),
                     "improve.cases must be a path inside the agent folder (relative, without "
                     "\"..\"), got " +
                         Quoted(*cases));
    }
    improve.cases = std::move(*cases);
  }
  MEND_ASSIGN_OR_RETURN(
      auto timeout, GetTomlInt(*t, "timeout_seconds", path, "improve.timeout_seconds", 1, 3600));
  if (timeout.has_value()) improve.timeout = std::chrono::seconds(*timeout);
  return improve;
}

}  // namespace mend::agent::folder_internal
