// The agent.toml surface of heal's OutputCheck and ShadowHook: the agent module loads and
// validates [[checks]] and [shadow] without knowing heal (it sits below it), and this file turns
// them into hooks.
#include "mend/app/check_hooks.h"

#include <memory>
#include <utility>
#include <vector>

#include "mend/app/runtime.h"
#include "mend/heal/shadow_hook.h"

namespace mend::app {

heal::OutputCheckSpec ToOutputCheckSpec(const agent::CheckSpec& check) {
  using Kind = heal::OutputCheckSpec::Kind;
  heal::OutputCheckSpec spec;
  switch (check.kind) {
    case agent::CheckSpec::Kind::kRegex:
      spec.kind = check.must_match ? Kind::kMustMatch : Kind::kMustNotMatch;
      break;
    case agent::CheckSpec::Kind::kJsonSchema:
      spec.kind = Kind::kJsonSchema;
      break;
    case agent::CheckSpec::Kind::kMaxBytes:
      spec.kind = Kind::kMaxBytes;
      break;
    case agent::CheckSpec::Kind::kCommand:
      spec.kind = Kind::kCommand;
      break;
  }
  spec.tool = check.tool;
  spec.action = check.action == agent::CheckSpec::Action::kReplace ? heal::CheckAction::kReplace
                                                                   : heal::CheckAction::kHint;
  spec.pattern = check.pattern;
  spec.schema = check.schema;
  spec.max_bytes = check.max_bytes;
  spec.command = check.command;
  if (check.timeout.has_value()) spec.timeout = *check.timeout;
  spec.message = check.message;
  return spec;
}

Status AddCheckHooks(Runtime& runtime, agent::Agent& agent, const agent::AgentSpec& spec,
                     ShadowMode shadow) {
  if (shadow == ShadowMode::kOn) {
    heal::ShadowHookOptions options;
    options.read_only = spec.shadow.read_only;
    options.events = runtime.events.get();
    agent.AddPreToolHook(std::make_shared<heal::ShadowHook>(std::move(options)));
  }
  if (spec.checks.empty()) return OkStatus();
  std::vector<heal::OutputCheckSpec> checks;
  checks.reserve(spec.checks.size());
  for (const agent::CheckSpec& check : spec.checks) checks.push_back(ToOutputCheckSpec(check));
  heal::OutputCheckOptions options;
  options.events = runtime.events.get();
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<heal::OutputCheck> hook,
                        heal::OutputCheck::Create(std::move(checks), std::move(options)));
  agent.AddPostToolHook(std::move(hook));
  return OkStatus();
}

}  // namespace mend::app
