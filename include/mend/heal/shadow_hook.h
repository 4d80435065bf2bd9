#pragma once

// ShadowHook, the pre-tool hook of shadow mode (docs/heal.md): only the tools listed as read-only
// run, every other call gets a simulated result. Immutable and thread-safe.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mend/agent/hooks.h"

namespace mend::obs {
class EventBus;
}

namespace mend::heal {

/// What ShadowHook lets run.
struct ShadowHookOptions {
  std::vector<std::string> read_only;  ///< tools that still run
  obs::EventBus* events = nullptr;     ///< `heal.action` events; optional, not owned
};

/// A pre-tool hook for probe runs (docs/heal.md): a tool not named in read_only does
/// not run; the model gets the successful result "not executed (shadow mode): <tool> is not in the
/// read-only list" (PreToolDecision::Supply), and `heal.action` {run, step, tool, action: "shadow",
/// reason} is published. Listed tools are allowed (later hooks and approval still apply).
/// Immutable after construction; thread-safe.
class ShadowHook final : public agent::PreToolHook {
 public:
  /// A hook that lets only `options.read_only` run.
  explicit ShadowHook(ShadowHookOptions options);

  std::string_view name() const override { return "shadow"; }
  Result<agent::PreToolDecision> BeforeTool(const agent::ToolCallInfo& call) override;

 private:
  std::set<std::string, std::less<>> read_only_;
  obs::EventBus* events_;
};

}  // namespace mend::heal
