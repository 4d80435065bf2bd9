// The run's origin in its metadata JSON: workspace, model, agent fingerprint (docs/runs.md).
#include "mend/agent/run_origin.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "agent/run_tools.h"
#include "mend/base/file_system.h"
#include "mend/base/hash.h"
#include "mend/base/json.h"

namespace mend::agent {
namespace {

using nlohmann::json;

// Length-prefixed fields, so that no two different field lists hash the same bytes.
void AddField(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

Status Corrupt(std::string_view run_id, std::string_view what) {
  return DataLossError("run " + std::string(run_id) + ": metadata " + std::string(what));
}

json ModelJson(const RunModel& m) {
  json j = {{"name", m.provider}, {"base_url", m.base_url}, {"model", m.model}};
  if (!m.script_file.empty()) j["script_file"] = m.script_file;
  return j;
}

Result<RunModel> ParseModel(const json& j) {
  RunModel m;
  MEND_ASSIGN_OR_RETURN(auto name, GetOptionalString(j, "name"));
  MEND_ASSIGN_OR_RETURN(auto base_url, GetOptionalString(j, "base_url"));
  MEND_ASSIGN_OR_RETURN(auto model, GetOptionalString(j, "model"));
  MEND_ASSIGN_OR_RETURN(auto script, GetOptionalString(j, "script_file"));
  m.script_file = script.value_or("");
  m.provider = name.value_or("");
  m.base_url = base_url.value_or("");
  m.model = model.value_or("");
  return m;
}

json FingerprintJson(const AgentFingerprint& f) {
  json tools = json::object();
  for (const auto& [name, digest] : f.tools) tools[name] = digest;
  return {{"agent_toml", f.agent_toml},
          {"instructions", f.instructions},
          {"skills", f.skills},
          {"tools", std::move(tools)}};
}

Result<AgentFingerprint> ParseFingerprint(const json& j) {
  AgentFingerprint f;
  MEND_ASSIGN_OR_RETURN(auto toml, GetOptionalString(j, "agent_toml"));
  MEND_ASSIGN_OR_RETURN(auto instructions, GetOptionalString(j, "instructions"));
  MEND_ASSIGN_OR_RETURN(auto skills, GetOptionalString(j, "skills"));
  f.agent_toml = toml.value_or("");
  f.instructions = instructions.value_or("");
  f.skills = skills.value_or("");
  MEND_ASSIGN_OR_RETURN(auto tools, GetOptionalObject(j, "tools"));
  if (tools.has_value()) {
    for (const auto& [name, digest] : (*tools)->items()) {
      if (!digest.is_string()) return InvalidArgumentError("tool " + name + " is not a string");
      f.tools[name] = digest.get<std::string>();
    }
  }
  return f;
}

Result<json> ParseObject(std::string_view metadata, std::string_view run_id) {
  if (metadata.empty()) return json::object();
  Result<json> parsed = ParseJson(metadata);
  if (!parsed.ok() || !parsed->is_object()) return Corrupt(run_id, "is not a JSON object");
  return std::move(parsed).value();
}

Result<RunOrigin> ParseOriginFields(const json& j) {
  RunOrigin origin;
  MEND_ASSIGN_OR_RETURN(auto kind, GetOptionalString(j, "kind"));
  MEND_ASSIGN_OR_RETURN(auto workspace, GetOptionalString(j, "workspace"));
  MEND_ASSIGN_OR_RETURN(auto shadow, GetOptionalBool(j, "shadow"));
  MEND_ASSIGN_OR_RETURN(auto arm, GetOptionalString(j, "arm"));
  origin.arm = arm.value_or("");
  MEND_ASSIGN_OR_RETURN(auto canary, GetOptionalString(j, "canary"));
  origin.canary = canary.value_or("");
  MEND_ASSIGN_OR_RETURN(auto prefix, GetOptionalInt64(j, "prompt_prefix_bytes"));
  MEND_ASSIGN_OR_RETURN(auto trace_id, GetOptionalString(j, "trace_id"));
  MEND_ASSIGN_OR_RETURN(auto root_span_id, GetOptionalString(j, "trace_root_span_id"));
  origin.trace_id = trace_id.value_or("");
  origin.trace_root_span_id = root_span_id.value_or("");
  origin.kind = kind.value_or("");
  // Runs recorded before workspaces were normalised are shown and resumed in normal form too.
  origin.workspace = NormalizePath(workspace.value_or(""));
  origin.shadow = shadow.value_or(false);
  if (prefix.has_value() && *prefix >= 0) origin.prompt_prefix_bytes = static_cast<size_t>(*prefix);
  MEND_ASSIGN_OR_RETURN(auto model, GetOptionalObject(j, "model"));
  if (model.has_value()) {
    MEND_ASSIGN_OR_RETURN(origin.model, ParseModel(**model));
  }
  MEND_ASSIGN_OR_RETURN(auto fingerprint, GetOptionalObject(j, "agent_fingerprint"));
  if (fingerprint.has_value()) {
    MEND_ASSIGN_OR_RETURN(origin.fingerprint, ParseFingerprint(**fingerprint));
  }
  MEND_ASSIGN_OR_RETURN(auto changes, GetOptionalArray(j, "model_changes"));
  if (changes.has_value()) {
    for (const json& c : **changes) {
      ModelChange change;
      MEND_ASSIGN_OR_RETURN(const json* from, GetObject(c, "from"));
      MEND_ASSIGN_OR_RETURN(const json* to, GetObject(c, "to"));
      MEND_ASSIGN_OR_RETURN(change.from, ParseModel(*from));
      MEND_ASSIGN_OR_RETURN(change.to, ParseModel(*to));
      MEND_ASSIGN_OR_RETURN(change.at, GetString(c, "at"));
      origin.model_changes.push_back(std::move(change));
    }
  }
  return origin;
}

void AppendNames(std::string& out, std::string_view what, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (!out.empty()) out += ", ";
    out += "tool " + name + " " + std::string(what);
  }
}

}  // namespace

std::string DescribeRunModel(const RunModel& m) {
  if (m.empty()) return "(not recorded)";
  std::string text = m.provider.empty() ? "(unknown provider)" : m.provider;
  text += " " + (m.model.empty() ? std::string("(default model)") : m.model);
  if (!m.base_url.empty()) text += " at " + m.base_url;
  if (!m.script_file.empty()) text += " from " + m.script_file;
  return text;
}

AgentFingerprint FingerprintAgent(const AgentSpec& spec,
                                  const std::vector<llm::ToolDefinition>& tools) {
  AgentFingerprint f;
  f.agent_toml = spec.agent_toml_sha256;
  f.instructions = Sha256Hex(spec.instructions);
  std::string skills;
  for (const SkillSpec& skill : spec.skills) {
    AddField(skills, skill.path);
    AddField(skills, skill.name);
    AddField(skills, skill.description);
    AddField(skills, skill.body);
  }
  f.skills = Sha256Hex(skills);
  for (const llm::ToolDefinition& tool : tools) {
    std::string bytes;
    AddField(bytes, tool.name);
    AddField(bytes, tool.description);
    AddField(bytes, tool.parameters);
    f.tools[tool.name] = Sha256Hex(bytes);
  }
  return f;
}

Result<AgentFingerprint> FingerprintAgentFolder(const AgentSpec& spec) {
  MEND_ASSIGN_OR_RETURN(std::shared_ptr<const RunTools> tools, RunTools::Build(spec, {}));
  return FingerprintAgent(spec, tools->Definitions());
}

bool AgentChanges::any() const {
  return agent_toml || instructions || skills || !tools_removed.empty() || !tools_changed.empty() ||
         !tools_added.empty();
}

std::string AgentChanges::Describe() const {
  std::string out;
  if (agent_toml) out += "agent.toml";
  if (instructions) out += std::string(out.empty() ? "" : ", ") + "instructions";
  if (skills) out += std::string(out.empty() ? "" : ", ") + "skills";
  AppendNames(out, "removed", tools_removed);
  AppendNames(out, "changed", tools_changed);
  AppendNames(out, "added", tools_added);
  return out;
}

AgentChanges CompareFingerprints(const AgentFingerprint& recorded,
                                 const AgentFingerprint& current) {
  AgentChanges changes;
  if (recorded.empty()) return changes;
  changes.agent_toml = recorded.agent_toml != current.agent_toml;
  changes.instructions = recorded.instructions != current.instructions;
  changes.skills = recorded.skills != current.skills;
  for (const auto& [name, digest] : recorded.tools) {
    auto it = current.tools.find(name);
    if (it == current.tools.end()) {
      changes.tools_removed.push_back(name);
    } else if (it->second != digest) {
      changes.tools_changed.push_back(name);
    }
  }
  for (const auto& [name, digest] : current.tools) {
    if (!recorded.tools.contains(name)) changes.tools_added.push_back(name);
  }
  return changes;
}

Result<RunOrigin> ParseRunOrigin(std::string_view metadata, std::string_view run_id) {
  MEND_ASSIGN_OR_RETURN(json j, ParseObject(metadata, run_id));
  Result<RunOrigin> origin = ParseOriginFields(j);
  if (!origin.ok()) return Corrupt(run_id, origin.status().message());
  return origin;
}

Result<std::string> WriteRunOrigin(std::string_view metadata, const RunOrigin& origin,
                                   std::string_view run_id) {
  MEND_ASSIGN_OR_RETURN(json j, ParseObject(metadata, run_id));
  if (!origin.kind.empty()) j["kind"] = origin.kind;
  j["workspace"] = origin.workspace;
  if (!origin.model.empty()) j["model"] = ModelJson(origin.model);
  if (!origin.model_changes.empty()) {
    json changes = json::array();
    for (const ModelChange& c : origin.model_changes) {
      changes.push_back({{"from", ModelJson(c.from)}, {"to", ModelJson(c.to)}, {"at", c.at}});
    }
    j["model_changes"] = std::move(changes);
  }
  if (!origin.fingerprint.empty()) j["agent_fingerprint"] = FingerprintJson(origin.fingerprint);
  if (origin.shadow) j["shadow"] = true;
  if (!origin.arm.empty()) j["arm"] = origin.arm;
  if (!origin.canary.empty()) j["canary"] = origin.canary;
  if (origin.prompt_prefix_bytes.has_value()) {
    j["prompt_prefix_bytes"] = static_cast<int64_t>(*origin.prompt_prefix_bytes);
  }
  if (!origin.trace_id.empty()) j["trace_id"] = origin.trace_id;
  if (!origin.trace_root_span_id.empty()) j["trace_root_span_id"] = origin.trace_root_span_id;
  return DumpJson(j);
}

}  // namespace mend::agent
