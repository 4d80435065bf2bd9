#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "mend/agent/agent_spec.h"
#include "mend/agent/tool.h"
#include "mend/base/status.h"

namespace mend::agent {

// The extension points of a run (docs/hooks.md). `app` registers them on an Agent; later modules
// (memory, reflexion, heal, improve) plug in only through these. Hooks are called on the run's
// thread; a hook shared by concurrent runs synchronises itself. A hook that returns an error or
// throws never fails the run: the error becomes a `hook.failed` event and the hook is skipped.
//
// Order and composition (docs/hooks.md):
//   pre-run    every hook, in registration order; their non-empty sections are appended to the
//              system prompt after the instructions and skills, separated by blank lines.
//   pre-tool   in registration order; the first decision other than kAllow wins and later hooks
//              are not asked (kStopRun ends the run as failed). After every hook allowed, a tool
//              with requires_approval waits for a person.
//   post-tool  in registration order; each sees the result as left by the previous one. Hints are
//              appended to the result text; a replacement replaces it (marked replaced_by_hook).
//   post-run   in registration order (app registers verify → refine → reflexion); each sees the
//              outcome, including flags and output changes made by earlier hooks.

struct RunInfo {
  std::string run_id;
  std::string task;
  const AgentSpec* agent = nullptr;
  std::string workspace;
};

class PreRunHook {
 public:
  virtual ~PreRunHook() = default;
  virtual std::string_view name() const = 0;
  // A section for the system prompt (e.g. "## Long-term Memory\n..."), or "" for none.
  virtual Result<std::string> ContextSection(const RunInfo& run) = 0;
};

struct ToolCallInfo {
  const RunInfo* run = nullptr;
  int64_t step = 0;
  std::string call_id;
  std::string tool;
  std::string arguments;           // JSON text as the model sent it
  const ToolSpec* spec = nullptr;  // null for an unknown tool
};

struct PreToolDecision {
  enum class Kind {
    kAllow,
    kDeny,      // the tool does not run; `text` goes back to the model as a tool error
    kSupply,    // the tool does not run; `text` is its result
    kAskHuman,  // the run waits for a person to approve or deny; `text` explains why
    // The tool does not run; `text` is recorded as its error result and the run ends failed with
    // a permanent, non-retryable error (kFailedPrecondition, message `text`, detail code
    // `detail_code`). The run's last_error.code is the detail code when it starts with "MEND_".
    kStopRun,
  };
  Kind kind = Kind::kAllow;
  std::string text;
  std::string detail_code;  // kStopRun only, e.g. "MEND_RUN_NO_PROGRESS"

  static PreToolDecision Allow() { return {}; }
  static PreToolDecision Deny(std::string why) { return {Kind::kDeny, std::move(why)}; }
  static PreToolDecision Supply(std::string result) { return {Kind::kSupply, std::move(result)}; }
  static PreToolDecision AskHuman(std::string why) { return {Kind::kAskHuman, std::move(why)}; }
  static PreToolDecision StopRun(std::string why, std::string detail_code) {
    return {Kind::kStopRun, std::move(why), std::move(detail_code)};
  }
};

class PreToolHook {
 public:
  virtual ~PreToolHook() = default;
  virtual std::string_view name() const = 0;
  virtual Result<PreToolDecision> BeforeTool(const ToolCallInfo& call) = 0;
};

struct PostToolAction {
  std::string append_hint;                // appended to the result text on a new line
  std::optional<ToolResult> replacement;  // replaces the result
};

class PostToolHook {
 public:
  virtual ~PostToolHook() = default;
  virtual std::string_view name() const = 0;
  virtual Result<PostToolAction> AfterTool(const ToolCallInfo& call, const ToolResult& result) = 0;
};

// What post-run hooks see and may change.
struct RunOutcome {
  const RunInfo* run = nullptr;
  std::string output;                 // the final answer ("" when the run failed)
  Status error;                       // OK when the run completed
  std::string attempt;                // a transcript excerpt of what the agent did (for lessons)
  std::map<std::string, bool> flags;  // e.g. "verified_with_discrepancy", "refine_low_quality"
  int64_t steps = 0;
  double cost_usd = 0;

  bool Flag(std::string_view name) const {
    auto it = flags.find(std::string(name));
    return it != flags.end() && it->second;
  }
};

class PostRunHook {
 public:
  virtual ~PostRunHook() = default;
  virtual std::string_view name() const = 0;
  virtual Status AfterRun(RunOutcome& outcome) = 0;
};

}  // namespace mend::agent
