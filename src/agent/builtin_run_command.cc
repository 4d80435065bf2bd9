// run_command: a shell command in the workspace, bounded in time and output.

#include <nlohmann/json.hpp>

#include "agent/builtin_tool_util.h"
#include "agent/tool_output.h"
#include "agent/workspace_path.h"
#include "mend/base/subprocess.h"

namespace mend::agent {

namespace {

Result<ToolResult> RunCommand(const nlohmann::json& args, const ToolContext& ctx) {
  Result<std::string> workspace = ResolveInWorkspace(ctx.workspace, "", PathUse::kRead);
  if (!workspace.ok()) return ErrorResult(workspace.status());
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", args.value("command", std::string())};
  options.cwd = *workspace;
  options.timeout = ctx.timeout;
  options.max_output_bytes = ctx.max_output_bytes;
  options.stderr_mode = StderrMode::kMergeWithStdout;
  Result<SubprocessResult> r = RunSubprocess(options);
  if (!r.ok()) return ErrorResult(r.status());
  return ProcessToolResult(*r, options, "command");
}

}  // namespace

ToolResult ProcessToolResult(const SubprocessResult& r, const SubprocessOptions& options,
                             std::string_view what) {
  std::string out = CapOutput(r.stdout_data, options.max_output_bytes, r.stdout_total);
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (r.timed_out) {
    return ToolResult::Error(out + "[" + std::string(what) + " timed out after " +
                             FormatSeconds(options.timeout.count()) + " and was killed]");
  }
  if (r.term_signal != 0) {
    return ToolResult::Error(out + "[" + std::string(what) + " killed by signal " +
                             std::to_string(r.term_signal) + "]");
  }
  out += "[exit code: " + std::to_string(r.exit_code) + "]";
  return r.exit_code == 0 ? ToolResult::Ok(out) : ToolResult::Error(out);
}

std::unique_ptr<Tool> MakeRunCommandTool() {
  ToolSpec spec{"run_command",
                "Run a shell command (/bin/sh -c) in the workspace directory. Returns its "
                "combined stdout and stderr and its exit code; long outputs are cut and "
                "commands that run too long are killed.",
                R"({"type":"object","properties":{
                  "command":{"type":"string","minLength":1}},
                  "required":["command"],"additionalProperties":false})",
                /*read_only=*/false, /*requires_approval=*/true};
  return MakeFunctionTool(std::move(spec), RunCommand);
}

}  // namespace mend::agent
