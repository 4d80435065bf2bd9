#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/agent/tool.h"
#include "mend/agent/tool_registry.h"
#include "mend/base/result.h"
#include "mend/llm/types.h"

namespace mend::agent {

// The name of the tool through which the model asks a person a question. The step loop handles
// its calls itself: the run waits and the person's answer becomes the tool's result.
inline constexpr std::string_view kAskHumanTool = "ask_human";

// The tools a run offers the model: the Agent's extra tools first, then those the spec enables
// (built-ins and the folder's command tools) in the spec's order. Built once per Agent; Invoke()
// is safe to call concurrently when the tools are.
class RunTools {
 public:
  // kInvalidArgument naming the tool when the spec enables a tool that is neither an extra tool,
  // a built-in nor one of its command tools, or when a tool does not register (bad name or
  // schema; kAlreadyExists for a name given twice).
  static Result<std::shared_ptr<const RunTools>> Build(
      const AgentSpec& spec, const std::vector<std::shared_ptr<Tool>>& extra);

  std::vector<llm::ToolDefinition> Definitions() const { return registry_.Specs(); }
  // The spec of tool `name`, or null for an unknown tool.
  const ToolSpec* Find(const std::string& name) const;

  // Runs one call and always yields a result the model can see (ToolRegistry::Invoke): an unknown
  // tool, invalid arguments and a failing tool all become is_error results; long output is cut.
  ToolResult Invoke(const llm::ToolCall& call, const ToolContext& ctx) const;

 private:
  // ToolRegistry::Invoke is not const but only reads the registry; the tools synchronise
  // themselves.
  mutable ToolRegistry registry_;
};

}  // namespace mend::agent
