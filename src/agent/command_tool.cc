#include "agent/command_tool.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "agent/builtin_tool_util.h"
#include "agent/tool_output.h"
#include "agent/workspace_path.h"
#include "mend/agent/command_vars.h"
#include "mend/base/file_system.h"
#include "mend/base/subprocess.h"

namespace mend::agent {
namespace {

// How much of a failing tool's stderr is shown to the model.
constexpr std::size_t kMaxStderrExcerpt = 2048;

class CommandTool final : public Tool {
 public:
  CommandTool(CommandToolSpec spec, std::string agent_dir)
      : spec_(std::move(spec)), agent_dir_(std::move(agent_dir)) {}

  const ToolSpec& spec() const override { return spec_.spec; }

  Result<ToolResult> Execute(std::string_view arguments_json, const ToolContext& ctx) override {
    if (spec_.command.empty()) {
      return ToolResult::Error("tool " + spec_.spec.name + " has no command configured");
    }
    Result<std::string> workspace = ResolveInWorkspace(ctx.workspace, "", PathUse::kRead);
    if (!workspace.ok()) return ErrorResult(workspace.status());
    SubprocessOptions options;
    options.argv = ExpandCommand(spec_.command, agent_dir_, *workspace);
    options.cwd = *workspace;
    options.stdin_data = std::string(arguments_json);
    options.timeout = spec_.timeout.value_or(ctx.timeout);
    options.max_output_bytes = ctx.max_output_bytes;
    Result<SubprocessResult> r = RunSubprocess(options);
    if (!r.ok()) {
      return ToolResult::Error("tool " + spec_.spec.name +
                               " could not start: " + std::string(r.status().message()));
    }
    ToolResult result = ProcessToolResult(*r, options, "tool " + spec_.spec.name);
    if (result.is_error && !r->stderr_data.empty()) {
      result.content +=
          "\nstderr:\n" + CapOutput(r->stderr_data, kMaxStderrExcerpt, r->stderr_total);
    }
    if (result.is_error) result.content += AgentFileHint(*workspace);
    if (!result.is_error)
      result.content = CapOutput(r->stdout_data, options.max_output_bytes, r->stdout_total);
    return result;
  }

 private:
  // Commands run in the workspace, so an argument naming a file of the agent folder
  // ("tools/wc.sh") does not find it there. When a call failed and such an argument names a file
  // in the agent folder but not in the workspace, the result says how to write it.
  std::string AgentFileHint(const std::string& workspace) const {
    for (size_t i = 1; i < spec_.command.size(); ++i) {
      const std::string& arg = spec_.command[i];
      if (arg.empty() || arg.front() == '/' || arg.front() == '-' ||
          arg.find("${") != std::string::npos) {
        continue;
      }
      std::error_code error;
      if (!std::filesystem::is_regular_file(JoinPath(agent_dir_, arg), error)) continue;
      if (std::filesystem::exists(JoinPath(workspace, arg), error)) continue;
      const std::string file =
          spec_.path.empty() ? "tools/" + spec_.spec.name + ".toml" : spec_.path;
      return "\n(" + arg + " is a file of the agent folder, and commands run in the workspace: " +
             "write ${AGENT_DIR}/" + arg + " in " + file + ")";
    }
    return "";
  }

  CommandToolSpec spec_;
  std::string agent_dir_;
};

}  // namespace

std::unique_ptr<Tool> MakeCommandTool(const CommandToolSpec& spec, std::string agent_dir) {
  return std::make_unique<CommandTool>(spec, std::move(agent_dir));
}

}  // namespace mend::agent
