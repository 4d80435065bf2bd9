#include "heal/heal_event.h"

#include <string>

#include "mend/base/utf8.h"
#include "mend/obs/events.h"
#include "mend/obs/trace.h"

namespace mend::heal {

void PublishHealAction(obs::EventBus* events, const agent::ToolCallInfo& call,
                       std::string_view action, std::string_view reason) {
  // The tool call's span is the active one while its hooks run (docs/observe.md).
  obs::AddActiveSpanEvent("heal.action", {{"heal.action", std::string(action)},
                                          {"heal.reason", std::string(reason)},
                                          {"gen_ai.tool.name", call.tool},
                                          {"mend.step", call.step}});
  if (events == nullptr) return;
  obs::Event e("heal.action");
  e.AddString("run", call.run == nullptr ? "" : call.run->run_id)
      .AddInt("step", call.step)
      .AddString("tool", call.tool)
      .AddString("action", action)
      .AddString("reason", reason);
  events->Publish(std::move(e));
}

std::string Excerpt(std::string_view text, size_t max_bytes) {
  std::string collapsed = CollapseWhitespace(text);
  if (collapsed.size() <= max_bytes) return collapsed;
  return TruncateUtf8Bytes(collapsed, max_bytes) + "...";
}

}  // namespace mend::heal
