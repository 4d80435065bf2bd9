#include "agent/run_tools.h"

#include <algorithm>
#include <string>

#include "agent/command_tool.h"
#include "mend/agent/builtin_tools.h"

namespace mend::agent {
namespace {

// The registry owns its tools; an extra tool is shared with the embedder, so the registry gets
// this forwarding handle.
class SharedTool final : public Tool {
 public:
  explicit SharedTool(std::shared_ptr<Tool> tool) : tool_(std::move(tool)) {}
  const ToolSpec& spec() const override { return tool_->spec(); }
  Result<ToolResult> Execute(std::string_view arguments, const ToolContext& ctx) override {
    return tool_->Execute(arguments, ctx);
  }

 private:
  std::shared_ptr<Tool> tool_;
};

Result<std::unique_ptr<Tool>> MakeSpecTool(const AgentSpec& spec, const std::string& name) {
  if (IsBuiltinTool(name)) return MakeBuiltinTool(name);
  for (const CommandToolSpec& command : spec.command_tools) {
    if (command.spec.name != name) continue;
    // agent.toml's [tool_options.<name>] timeout overrides the tool file's own timeout.
    auto options = spec.tool_options.find(name);
    if (options == spec.tool_options.end() || !options->second.timeout.has_value()) {
      return MakeCommandTool(command, spec.dir);
    }
    CommandToolSpec configured = command;
    configured.timeout = options->second.timeout;
    return MakeCommandTool(configured, spec.dir);
  }
  return InvalidArgumentError("agent " + spec.name + " enables tool \"" + name +
                              "\", which is neither built in nor defined in tools/");
}

}  // namespace

Result<std::shared_ptr<const RunTools>> RunTools::Build(
    const AgentSpec& spec, const std::vector<std::shared_ptr<Tool>>& extra) {
  auto tools = std::make_shared<RunTools>();
  std::vector<std::string> names;
  for (const auto& tool : extra) {
    if (tool == nullptr) continue;
    names.push_back(tool->spec().name);
    MEND_RETURN_IF_ERROR(tools->registry_.Register(std::make_unique<SharedTool>(tool)));
  }
  for (const std::string& name : spec.tools) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<Tool> tool, MakeSpecTool(spec, name));
    names.push_back(name);
    MEND_RETURN_IF_ERROR(tools->registry_.Register(std::move(tool)));
  }
  return std::shared_ptr<const RunTools>(std::move(tools));
}

const ToolSpec* RunTools::Find(const std::string& name) const {
  const Tool* tool = registry_.Find(name);
  return tool == nullptr ? nullptr : &tool->spec();
}

ToolResult RunTools::Invoke(const llm::ToolCall& call, const ToolContext& ctx) const {
  return registry_.Invoke(call.name, call.arguments, ctx);
}

}  // namespace mend::agent
