// GET /api/v1/agents/{name}: one agent folder of serve.agents_dir as the web UI's agent page shows
// it (docs/http_api.md, "Agents"): its instructions, skills, tools with their JSON schemas,
// checks, limits and the canary running on it. The name is resolved as POST /api/v1/runs
// resolves it, so no path outside serve.agents_dir is ever read.
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/agent/builtin_tools.h"
#include "mend/app/canary.h"
#include "mend/app/runtime.h"
#include "mend/base/file_system.h"
#include "mend/base/json.h"
#include "server/api.h"
#include "server/api_runs.h"
#include "server/serve_context.h"

namespace mend::server {
namespace {

using nlohmann::json;

// A schema as JSON; a tool's schema text that does not parse is shown as the text it is.
json SchemaJson(const std::string& text) {
  Result<json> parsed = ParseJson(text);
  return parsed.ok() ? *std::move(parsed) : json(text);
}

json ToolJson(const agent::ToolSpec& spec, const char* kind) {
  return {{"name", spec.name},
          {"kind", kind},
          {"description", spec.description},
          {"parameters", SchemaJson(spec.parameters)},
          {"read_only", spec.read_only},
          {"requires_approval", spec.requires_approval}};
}

// The enabled tools in agent.toml's order: built-ins with the schema the model is given, command
// tools from tools/*.toml.
json ToolsJson(const agent::AgentSpec& spec) {
  json tools = json::array();
  for (const std::string& name : spec.tools) {
    if (agent::IsBuiltinTool(name)) {
      Result<std::unique_ptr<agent::Tool>> tool = agent::MakeBuiltinTool(name);
      if (tool.ok()) tools.push_back(ToolJson((*tool)->spec(), "builtin"));
      continue;
    }
    for (const agent::CommandToolSpec& command : spec.command_tools) {
      if (command.spec.name != name) continue;
      json tool = ToolJson(command.spec, "command");
      tool["command"] = command.command;
      tool["path"] = command.path;
      tools.push_back(std::move(tool));
    }
  }
  return tools;
}

const char* CheckKindName(agent::CheckSpec::Kind kind) {
  switch (kind) {
    case agent::CheckSpec::Kind::kRegex:
      return "regex";
    case agent::CheckSpec::Kind::kJsonSchema:
      return "json_schema";
    case agent::CheckSpec::Kind::kMaxBytes:
      return "max_bytes";
    case agent::CheckSpec::Kind::kCommand:
      return "command";
  }
  return "regex";
}

json CheckJson(const agent::CheckSpec& check) {
  json out = {{"tool", check.tool},
              {"kind", CheckKindName(check.kind)},
              {"action", check.action == agent::CheckSpec::Action::kReplace ? "replace" : "hint"},
              {"message", check.message}};
  switch (check.kind) {
    case agent::CheckSpec::Kind::kRegex:
      out["pattern"] = check.pattern;
      out["must_match"] = check.must_match;
      break;
    case agent::CheckSpec::Kind::kJsonSchema:
      out["schema"] = SchemaJson(check.schema);
      break;
    case agent::CheckSpec::Kind::kMaxBytes:
      out["max_bytes"] = check.max_bytes;
      break;
    case agent::CheckSpec::Kind::kCommand:
      out["command"] = check.command;
      break;
  }
  return out;
}

// The canary running on the folder, or null (also when the canary store cannot be opened: the
// agent page still shows the folder).
json CanaryJson(app::Runtime& runtime, const std::string& dir) {
  Result<improve::CanaryStore*> canaries = app::Canaries(runtime);
  if (!canaries.ok()) return nullptr;
  Result<std::optional<improve::Canary>> running = (*canaries)->Running(NormalizePath(dir));
  if (!running.ok() || !running->has_value()) return nullptr;
  const improve::Canary& c = **running;
  return {{"proposal", c.proposal_id},
          {"percent", c.percent},
          {"auto", c.auto_decide},
          {"state", std::string(improve::CanaryStateName(c.state))},
          {"started_at", c.started_at}};
}

json SpecJson(const std::string& folder, const agent::AgentSpec& spec, json canary) {
  json skills = json::array();
  for (const agent::SkillSpec& s : spec.skills) {
    skills.push_back(
        {{"name", s.name}, {"description", s.description}, {"path", s.path}, {"body", s.body}});
  }
  json checks = json::array();
  for (const agent::CheckSpec& c : spec.checks) checks.push_back(CheckJson(c));
  json mcp = json::array();
  for (const agent::McpServerSpec& m : spec.mcp_servers) mcp.push_back(m.name);
  return {{"name", folder},
          {"agent_name", spec.name},
          {"dir", spec.dir},
          {"description", spec.description},
          {"model", spec.model.empty() ? json(nullptr) : json(spec.model)},
          {"workspace", spec.workspace.empty() ? json(nullptr) : json(spec.workspace)},
          {"instructions", spec.instructions},
          {"limits",
           {{"max_steps", spec.limits.max_steps},
            {"max_cost_usd", spec.limits.max_cost_usd},
            {"max_wall_seconds", spec.limits.max_wall.count()}}},
          {"skills", std::move(skills)},
          {"tools", ToolsJson(spec)},
          {"checks", std::move(checks)},
          {"mcp_servers", std::move(mcp)},
          {"canary", std::move(canary)}};
}

// The folder of serve.agents_dir whose agent.toml is named `name` (runs record that name, which
// may differ from the folder's); the first in the listing's order.
std::optional<std::string> FolderNamed(ServeContext& context, const std::string& name) {
  FileSystem& fs = *context.runtime().env.fs;
  const std::string& root = context.options().agents_dir;
  Result<std::vector<std::string>> folders = fs.List(root);
  if (root.empty() || !folders.ok()) return std::nullopt;
  for (const std::string& folder : *folders) {
    if (folder.empty() || folder.front() == '.') continue;
    Result<agent::AgentSpec> spec = agent::LoadAgentFolder(fs, root + "/" + folder);
    if (spec.ok() && spec->name == name) return folder;
  }
  return std::nullopt;
}

// `name` is a folder of serve.agents_dir holding agent.toml, else the name in the agent.toml of
// one.
Result<ApiResponse> ShowAgent(ServeContext& context, const ApiRequest& request) {
  std::string name = request.params.at(0);
  Result<std::string> found = runs::AgentDirOf(context, name);
  app::Runtime& runtime = context.runtime();
  if (found.ok() && !runtime.env.fs->Exists(*found + "/agent.toml")) {
    found = NotFoundError("no agent named " + name + " in serve.agents_dir");
  }
  if (!found.ok() && found.status().code() == StatusCode::kNotFound) {
    std::optional<std::string> folder = FolderNamed(context, name);
    if (folder.has_value()) {
      name = *folder;
      found = runs::AgentDirOf(context, name);
    }
  }
  MEND_ASSIGN_OR_RETURN(std::string dir, std::move(found));
  // A folder that does not load is shown with why, as the agent list shows it.
  Result<agent::AgentSpec> spec = agent::LoadAgentFolder(*runtime.env.fs, dir);
  if (!spec.ok()) {
    return ApiResponse(json{{"name", name}, {"error", std::string(spec.status().message())}});
  }
  return ApiResponse(SpecJson(name, *spec, CanaryJson(runtime, dir)));
}

}  // namespace

void AddAgentRoutes(ApiRoutes& routes, ServeContext& context) {
  routes.Get("/api/v1/agents/([^/]+)",
             [&context](const ApiRequest& request) { return ShowAgent(context, request); });
}

}  // namespace mend::server
