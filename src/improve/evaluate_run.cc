#include "improve/evaluate_run.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "improve/evaluate_check.h"
#include "improve/evaluate_tree.h"
#include "mend/agent/agent.h"
#include "mend/base/json.h"
#include "mend/heal/agent_checks.h"
#include "mend/heal/shadow_hook.h"

namespace mend::improve::internal {
namespace {

using nlohmann::json;

// Every run of an arm holds its leases under this one name. The store belongs to the arm alone,
// so no other holder ever competes, and no host or process needs to be recorded.
store::LeaseHolder EvaluationHolder() { return store::LeaseHolder{"improve-evaluate", "", "", 0}; }

json ToolCallsJson(const std::vector<llm::ToolCall>& calls) {
  json out = json::array();
  for (const llm::ToolCall& call : calls) {
    out.push_back(json{{"id", call.id}, {"name", call.name}, {"arguments", call.arguments}});
  }
  return out;
}

// The run's two copies: the workspace fixture (or an empty folder) and the candidate's agent
// folder. Returns the copy of the agent folder.
Result<std::string> MakeCopies(const ArmContext& ctx, const Case& c, const std::string& dir,
                               const std::string& workspace) {
  FileSystem& fs = *ctx.options->env.fs;
  if (c.workspace.empty()) {
    MEND_RETURN_IF_ERROR(fs.CreateDirs(workspace));
  } else {
    MEND_RETURN_IF_ERROR(CopyTree(fs, c.workspace, workspace));
  }
  const std::string agent_dir = JoinPath(dir, "agent");
  MEND_RETURN_IF_ERROR(CopyTree(fs, ctx.agent_dir, agent_dir));
  return agent_dir;
}

Result<std::unique_ptr<agent::Agent>> MakeAgent(const ArmContext& ctx, const std::string& agent_dir,
                                                const std::string& workspace) {
  const EvaluateOptions& options = *ctx.options;
  MEND_ASSIGN_OR_RETURN(agent::AgentSpec spec, agent::LoadAgentFolder(*options.env.fs, agent_dir));
  agent::AgentOptions agent_options;
  agent_options.env = options.env;
  agent_options.provider = options.provider;
  agent_options.store = ctx.store;
  agent_options.model = options.model;
  agent_options.holder = EvaluationHolder();
  agent_options.workspace = workspace;
  agent_options.caller_dir = workspace;
  agent_options.shadow = true;
  agent_options.stop = options.stop;
  heal::ShadowHookOptions shadow;
  shadow.read_only = spec.shadow.read_only;
  if (options.extra_tools && !spec.mcp_servers.empty()) {
    MEND_ASSIGN_OR_RETURN(EvaluateOptions::RunTools extra, options.extra_tools(spec, workspace));
    agent_options.extra_tools = std::move(extra.tools);
    for (std::string& name : extra.shadow_read_only) shadow.read_only.push_back(std::move(name));
  }
  heal::OutputCheckOptions check_options;
  check_options.events = options.events;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<heal::OutputCheck> checks,
                        heal::OutputCheckForAgent(spec, std::move(check_options)));
  const agent::AgentSpec hooks_spec = options.add_run_hooks ? spec : agent::AgentSpec{};
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent,
                        agent::Agent::Create(std::move(spec), std::move(agent_options)));
  // The shadow hook goes first, so no later hook acts on a call that will not run.
  agent->AddPreToolHook(std::make_shared<heal::ShadowHook>(std::move(shadow)));
  if (checks != nullptr) agent->AddPostToolHook(std::move(checks));
  if (options.add_run_hooks) MEND_RETURN_IF_ERROR(options.add_run_hooks(*agent, hooks_spec));
  return agent;
}

// Fills `run` and `transcript` from what the store kept of the run. A run that never started
// has nothing to read.
void ReadStoredRun(store::CheckpointStore& store, CaseRun& run, json& transcript) {
  Result<agent::RunView> view = agent::ReadRunView(store, run.run_id);
  if (!view.ok()) return;
  transcript = TranscriptJson(view->transcript);
  run.cost_usd = view->cost_usd;
}

// Drives the run. A Status error is a failure of mend (the copies, the folder, the store); the
// run's own failures are in `run`.
Status DriveRun(const ArmContext& ctx, const Case& c, const std::string& dir,
                const std::string& workspace, CaseRun& run, json& transcript) {
  MEND_ASSIGN_OR_RETURN(std::string agent_dir, MakeCopies(ctx, c, dir, workspace));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent, MakeAgent(ctx, agent_dir, workspace));
  agent::SendOptions send;
  send.run_id = run.run_id;
  Result<agent::RunResult> result = agent->Send(c.task, send);
  if (!result.ok()) {
    // Even a run that stopped on an error of mend may have spent money and said something.
    ReadStoredRun(*ctx.store, run, transcript);
    return result.status();
  }
  run.status = std::string(store::RunStatusName(result->status));
  if (result->status == store::RunStatus::kCompleted) run.output = result->output;
  if (result->error.has_value()) run.error = result->error->code + ": " + result->error->message;
  run.cost_usd = result->cost_usd;
  Result<agent::RunView> view = agent::ReadRunView(*ctx.store, run.run_id);
  MEND_RETURN_IF_ERROR(view);
  transcript = TranscriptJson(view->transcript);
  return OkStatus();
}

}  // namespace

json TranscriptJson(const std::vector<agent::TranscriptEntry>& transcript) {
  json out = json::array();
  for (const agent::TranscriptEntry& entry : transcript) {
    const llm::Message& m = entry.message;
    json j{{"role", llm::RoleName(m.role)}, {"content", m.content}};
    if (!m.tool_calls.empty()) j["tool_calls"] = ToolCallsJson(m.tool_calls);
    if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
    if (!m.name.empty()) j["name"] = m.name;
    if (m.is_error) j["is_error"] = true;
    if (!entry.hook_decision.empty()) j["hook_decision"] = entry.hook_decision;
    out.push_back(std::move(j));
  }
  return out;
}

CaseRun RunCase(const ArmContext& ctx, const Case& c, size_t case_index, int repeat) {
  const EvaluateOptions& options = *ctx.options;
  CaseRun run;
  run.case_id = c.id;
  run.repeat = repeat;
  run.run_id = c.id + "." + std::to_string(repeat);
  const std::string dir =
      JoinPath(ctx.runs_dir, std::to_string(case_index) + "-" + std::to_string(repeat));
  const std::string workspace = JoinPath(dir, "workspace");
  json transcript = json::array();
  Status driven = DriveRun(ctx, c, dir, workspace, run, transcript);
  if (driven.ok()) {
    std::vector<std::string> argv = options.check_command;
    argv.insert(argv.end(), c.check_args.begin(), c.check_args.end());
    run.check = RunCheck(argv, workspace, CheckInput(c, run, transcript), options.check_timeout);
  } else {
    run.status = "error";
    run.output.clear();
    run.error = driven.ToString();
    run.check.error = "not checked: the run stopped on an error of mend";
  }
  run.transcript = DumpJson(transcript);
  // Best effort: what is left is removed with the whole scratch folder when the arm ends.
  RemoveTree(dir).IgnoreError();
  return run;
}

}  // namespace mend::improve::internal
