#include "agent/hooks_runner.h"

#include <exception>
#include <string>

#include "mend/obs/events.h"

namespace mend::agent {
namespace {

// Hooks come from other modules and from embedders; an exception from one must not unwind
// through the step loop, so each call is wrapped here and turned into a Status.
template <typename T, typename Fn>
Result<T> CallGuarded(Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return InternalError(std::string("hook threw: ") + e.what());
  } catch (...) {
    return InternalError("hook threw a non-standard exception");
  }
}

std::string RunIdOf(const RunInfo* run) { return run == nullptr ? "" : run->run_id; }

}  // namespace

void HooksRunner::ReportFailure(const std::string& run_id, std::string_view hook,
                                std::string_view stage, const Status& error) {
  if (events_ == nullptr) return;
  obs::Event e("hook.failed");
  e.AddString("run", run_id)
      .AddString("hook", hook)
      .AddString("stage", stage)
      .AddString("error", error.ToString());
  events_->Publish(std::move(e));
}

std::vector<std::string> HooksRunner::ContextSections(const RunInfo& run) {
  std::vector<std::string> sections;
  for (const auto& hook : hooks_.pre_run) {
    Result<std::string> section =
        CallGuarded<std::string>([&] { return hook->ContextSection(run); });
    if (!section.ok()) {
      ReportFailure(run.run_id, hook->name(), "pre_run", section.status());
    } else if (!section->empty()) {
      sections.push_back(std::move(section).value());
    }
  }
  return sections;
}

PreToolDecision HooksRunner::BeforeTool(const ToolCallInfo& call) {
  for (const auto& hook : hooks_.pre_tool) {
    Result<PreToolDecision> decision =
        CallGuarded<PreToolDecision>([&] { return hook->BeforeTool(call); });
    if (!decision.ok()) {
      ReportFailure(RunIdOf(call.run), hook->name(), "pre_tool", decision.status());
      continue;
    }
    if (decision->kind != PreToolDecision::Kind::kAllow) return std::move(decision).value();
  }
  return PreToolDecision::Allow();
}

ToolResult HooksRunner::AfterTool(const ToolCallInfo& call, ToolResult result) {
  for (const auto& hook : hooks_.post_tool) {
    Result<PostToolAction> action =
        CallGuarded<PostToolAction>([&] { return hook->AfterTool(call, result); });
    if (!action.ok()) {
      ReportFailure(RunIdOf(call.run), hook->name(), "post_tool", action.status());
      continue;
    }
    if (action->replacement.has_value()) {
      result = std::move(*action->replacement);
      result.replaced_by_hook = true;
    }
    if (!action->append_hint.empty()) {
      if (!result.content.empty()) result.content += "\n";
      result.content += action->append_hint;
    }
  }
  return result;
}

void HooksRunner::AfterRun(RunOutcome& outcome) {
  for (const auto& hook : hooks_.post_run) {
    struct Done {};
    Result<Done> done = CallGuarded<Done>([&]() -> Result<Done> {
      Status s = hook->AfterRun(outcome);
      if (!s.ok()) return s;
      return Done{};
    });
    if (!done.ok()) ReportFailure(RunIdOf(outcome.run), hook->name(), "post_run", done.status());
  }
}

}  // namespace mend::agent
