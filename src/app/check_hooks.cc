// The hooks of an agent folder's [[checks]] (heal/agent_checks.h) and [shadow] on a runtime's
// agents.
#include "mend/app/check_hooks.h"

#include <memory>
#include <utility>

#include "mend/app/runtime.h"
#include "mend/heal/agent_checks.h"
#include "mend/heal/shadow_hook.h"

namespace mend::app {

Status AddCheckHooks(Runtime& runtime, agent::Agent& agent, const agent::AgentSpec& spec,
                     ShadowMode shadow) {
  if (shadow == ShadowMode::kOn) {
    heal::ShadowHookOptions options;
    options.read_only = spec.shadow.read_only;
    options.events = runtime.events.get();
    agent.AddPreToolHook(std::make_shared<heal::ShadowHook>(std::move(options)));
  }
  heal::OutputCheckOptions options;
  options.events = runtime.events.get();
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<heal::OutputCheck> hook,
                        heal::OutputCheckForAgent(spec, std::move(options)));
  if (hook != nullptr) {
    std::shared_ptr<heal::OutputCheck> shared = std::move(hook);
    agent.AddPostToolHook(shared);
    agent.AddPostRunHook(shared);
  }
  return OkStatus();
}

}  // namespace mend::app
