// What changes when a run is picked up again by an agent that may have changed since it started.
#include "agent/held_run.h"

#include <set>
#include <string>

namespace mend::agent {

std::string SystemPrompt(const AgentSpec& spec, const std::vector<std::string>& sections) {
  std::vector<std::string> parts;
  if (!spec.instructions.empty()) parts.push_back(spec.instructions);
  for (const SkillSpec& skill : spec.skills) {
    parts.push_back("## Skill: " + skill.name + "\n" + skill.description + "\n\n" + skill.body);
  }
  parts.insert(parts.end(), sections.begin(), sections.end());
  std::string prompt;
  for (const std::string& part : parts) {
    if (!prompt.empty()) prompt += "\n\n";
    prompt += part;
  }
  return prompt;
}

std::string RefreshSystemPrompt(const std::string& stored, size_t prefix_bytes,
                                const std::string& prefix) {
  if (prefix_bytes > stored.size()) return stored;
  std::string_view rest = std::string_view(stored).substr(prefix_bytes);
  // The separator between the old prefix and the sections goes with the prefix.
  if (prefix_bytes > 0 && rest.starts_with("\n\n")) rest.remove_prefix(2);
  std::string prompt = prefix;
  if (!prompt.empty() && !rest.empty()) prompt += "\n\n";
  prompt += rest;
  return prompt;
}

Status CheckUsedTools(std::string_view run_id, const std::vector<llm::Message>& messages,
                      const RunTools& tools, const AgentFingerprint& recorded,
                      const AgentFingerprint& current) {
  std::set<std::string> used;
  for (const llm::Message& m : messages) {
    for (const llm::ToolCall& call : m.tool_calls) used.insert(call.name);
  }
  for (const std::string& name : used) {
    auto was = recorded.tools.find(name);
    // A name the run called that the agent never offered is the model's mistake, not a change.
    if (!recorded.empty() && was == recorded.tools.end()) continue;
    if (tools.Find(name) == nullptr) {
      if (recorded.empty()) continue;
      return FailedPreconditionError(
          "run " + std::string(run_id) + " called tool " + name +
          ", which the agent no longer has; restore the tool in agent.toml to resume it");
    }
    auto now = current.tools.find(name);
    if (was != recorded.tools.end() && now != current.tools.end() && was->second != now->second) {
      return FailedPreconditionError("run " + std::string(run_id) + " called tool " + name +
                                     ", whose definition changed since the run started; restore "
                                     "its description and parameters to resume it");
    }
  }
  return OkStatus();
}

}  // namespace mend::agent
