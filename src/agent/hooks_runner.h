#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mend/agent/hooks.h"
#include "mend/agent/tool.h"

namespace mend::obs {
class EventBus;
}

namespace mend::agent {

// The hooks of one run, copied from the Agent when the run is driven, and the rules that compose
// them (include/mend/agent/hooks.h, docs/hooks.md). A hook that returns an error or throws is
// skipped and reported as a `hook.failed` event {run, hook, stage, error}; it never fails the run.
// Thread-compatible; the hooks themselves synchronise if shared.
class HooksRunner {
 public:
  struct Hooks {
    std::vector<std::shared_ptr<PreRunHook>> pre_run;
    std::vector<std::shared_ptr<PreToolHook>> pre_tool;
    std::vector<std::shared_ptr<PostToolHook>> post_tool;
    std::vector<std::shared_ptr<PostRunHook>> post_run;
  };

  // `events` may be null; not owned.
  HooksRunner(Hooks hooks, obs::EventBus* events) : hooks_(std::move(hooks)), events_(events) {}

  // The non-empty sections of every pre-run hook, in registration order.
  std::vector<std::string> ContextSections(const RunInfo& run);
  // The first decision other than kAllow, or kAllow when every hook allowed.
  PreToolDecision BeforeTool(const ToolCallInfo& call);
  // `result` after every post-tool hook: hints appended on a new line, replacements applied.
  // `replaced_by_hook` is set when any hook replaced the result (and stays set after later hooks).
  ToolResult AfterTool(const ToolCallInfo& call, ToolResult result);
  // Calls every post-run hook on `outcome` in order.
  void AfterRun(RunOutcome& outcome);

 private:
  void ReportFailure(const std::string& run_id, std::string_view hook, std::string_view stage,
                     const Status& error);

  Hooks hooks_;
  obs::EventBus* events_;
};

}  // namespace mend::agent
