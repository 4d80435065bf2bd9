#include "mend/agent/builtin_tools.h"

#include <nlohmann/json.hpp>

#include "agent/builtin_tool_util.h"

namespace mend::agent {
namespace {

std::unique_ptr<Tool> MakeAskHumanTool() {
  ToolSpec spec{std::string(kAskHumanToolName),
                "Ask the person you work for a question and wait for the answer. Use it when "
                "you cannot proceed without a decision or information only they have.",
                R"({"type":"object","properties":{
                  "question":{"type":"string","minLength":1}},
                  "required":["question"],"additionalProperties":false})",
                /*read_only=*/true, /*requires_approval=*/false};
  return MakeFunctionTool(std::move(spec), [](const nlohmann::json&, const ToolContext&) {
    return Result<ToolResult>(ToolResult::Error("ask_human must be handled by the run loop"));
  });
}

struct Builtin {
  const char* name;
  std::unique_ptr<Tool> (*make)();
};

constexpr Builtin kBuiltins[] = {
    {"read_file", MakeReadFileTool}, {"write_file", MakeWriteFileTool},
    {"edit_file", MakeEditFileTool}, {"list_dir", MakeListDirTool},
    {"grep", MakeGrepTool},          {"run_command", MakeRunCommandTool},
    {"ask_human", MakeAskHumanTool},
};

}  // namespace

std::vector<std::string> BuiltinToolNames() {
  std::vector<std::string> names;
  for (const Builtin& b : kBuiltins) names.emplace_back(b.name);
  return names;
}

bool IsBuiltinTool(std::string_view name) {
  for (const Builtin& b : kBuiltins) {
    if (name == b.name) return true;
  }
  return false;
}

Result<std::unique_ptr<Tool>> MakeBuiltinTool(std::string_view name) {
  for (const Builtin& b : kBuiltins) {
    if (name == b.name) return b.make();
  }
  std::string names;
  for (const Builtin& b : kBuiltins) names += (names.empty() ? "" : ", ") + std::string(b.name);
  return NotFoundError("no built-in tool \"" + std::string(name) + "\"; built-ins: " + names);
}

Status RegisterBuiltinTools(ToolRegistry& registry, const std::vector<std::string>& enabled) {
  for (const std::string& name : enabled) {
    if (!IsBuiltinTool(name)) continue;
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<Tool> tool, MakeBuiltinTool(name));
    MEND_RETURN_IF_ERROR(registry.Register(std::move(tool)));
  }
  return OkStatus();
}

}  // namespace mend::agent
