#include "agent/command_tool.h"

#include <utility>

#include "agent/builtin_tool_util.h"
#include "agent/subprocess.h"
#include "agent/tool_output.h"
#include "agent/workspace_path.h"

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
    options.argv = spec_.command;
    std::string& program = options.argv[0];
    if (program.find('/') != std::string::npos && program.front() != '/') {
      program = agent_dir_ + "/" + program;
    }
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
    if (!result.is_error)
      result.content = CapOutput(r->stdout_data, options.max_output_bytes, r->stdout_total);
    return result;
  }

 private:
  CommandToolSpec spec_;
  std::string agent_dir_;
};

}  // namespace

std::unique_ptr<Tool> MakeCommandTool(const CommandToolSpec& spec, std::string agent_dir) {
  return std::make_unique<CommandTool>(spec, std::move(agent_dir));
}

}  // namespace mend::agent
