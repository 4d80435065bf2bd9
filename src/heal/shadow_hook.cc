#include "mend/heal/shadow_hook.h"

#include <string>

#include "heal/heal_event.h"

namespace mend::heal {

ShadowHook::ShadowHook(ShadowHookOptions options)
    : read_only_(options.read_only.begin(), options.read_only.end()), events_(options.events) {}

Result<agent::PreToolDecision> ShadowHook::BeforeTool(const agent::ToolCallInfo& call) {
  if (read_only_.count(call.tool) != 0) return agent::PreToolDecision::Allow();
  std::string text = "not executed (shadow mode): " + call.tool + " is not in the read-only list";
  PublishHealAction(events_, call, "shadow", text);
  return agent::PreToolDecision::Supply(std::move(text));
}

}  // namespace mend::heal
