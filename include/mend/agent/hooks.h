#pragma once

// The hook interfaces of a run (docs/hooks.md): PreRunHook, PreToolHook, PostToolHook and
// PostRunHook, with what each sees and may decide. The rules of their order and composition follow.

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

/// The run a hook is called for.
struct RunInfo {
  std::string run_id;                ///< the run
  std::string task;                  ///< the task it was started with
  const AgentSpec* agent = nullptr;  ///< the agent folder it runs
  std::string workspace;             ///< its absolute workspace
};

/// Called before a run starts or resumes: adds a section to the system prompt.
class PreRunHook {
 public:
  virtual ~PreRunHook() = default;
  /// The name events and errors report the hook by ("memory").
  virtual std::string_view name() const = 0;
  /// A section for the system prompt (e.g. "## Long-term Memory\n..."), or "" for none.
  virtual Result<std::string> ContextSection(const RunInfo& run) = 0;
};

/// One tool call of a run, as pre-tool and post-tool hooks see it.
struct ToolCallInfo {
  const RunInfo* run = nullptr;    ///< the run making the call
  int64_t step = 0;                ///< the model turn that asked for it
  std::string call_id;             ///< the model's id of the call
  std::string tool;                ///< the tool name
  std::string arguments;           ///< JSON text as the model sent it
  const ToolSpec* spec = nullptr;  ///< null for an unknown tool
};

/// A pre-tool hook's decision about one call.
struct PreToolDecision {
  /// What happens to the call.
  enum class Kind {
    kAllow,     ///< the tool runs (later hooks and approval still apply)
    kDeny,      ///< the tool does not run; `text` goes back to the model as a tool error
    kSupply,    ///< the tool does not run; `text` is its result
    kAskHuman,  ///< the run waits for a person to approve or deny; `text` explains why
    /// The tool does not run; `text` is recorded as its error result and the run ends failed with
    /// a permanent, non-retryable error (kFailedPrecondition, message `text`, detail code
    /// `detail_code`). The run's last_error.code is the detail code when it starts with "MEND_".
    kStopRun,
  };
  Kind kind = Kind::kAllow;  ///< what happens to the call
  std::string text;          ///< the message or result the kind calls for
  std::string detail_code;   ///< kStopRun only, e.g. "MEND_RUN_NO_PROGRESS"

  ///@{
  /// The decisions, one constructor per Kind.
  static PreToolDecision Allow() { return {}; }
  static PreToolDecision Deny(std::string why) { return {Kind::kDeny, std::move(why)}; }
  static PreToolDecision Supply(std::string result) { return {Kind::kSupply, std::move(result)}; }
  static PreToolDecision AskHuman(std::string why) { return {Kind::kAskHuman, std::move(why)}; }
  static PreToolDecision StopRun(std::string why, std::string detail_code) {
    return {Kind::kStopRun, std::move(why), std::move(detail_code)};
  }
  ///@}
};

/// Called before each tool call: allows, denies, supplies a result, asks a person or stops the run.
class PreToolHook {
 public:
  virtual ~PreToolHook() = default;
  /// The name events and errors report the hook by.
  virtual std::string_view name() const = 0;
  /// The decision for `call`; an error is reported as `hook.failed` and counts as kAllow.
  virtual Result<PreToolDecision> BeforeTool(const ToolCallInfo& call) = 0;
};

/// A post-tool hook's change to a result; empty: none.
struct PostToolAction {
  std::string append_hint;                ///< appended to the result text on a new line
  std::optional<ToolResult> replacement;  ///< replaces the result
};

/// Called after each tool call: adds a hint to the result or replaces it.
class PostToolHook {
 public:
  virtual ~PostToolHook() = default;
  /// The name events and errors report the hook by.
  virtual std::string_view name() const = 0;
  /// What to do with `result` of `call`; an error is reported as `hook.failed` and leaves it as it
  /// is.
  virtual Result<PostToolAction> AfterTool(const ToolCallInfo& call, const ToolResult& result) = 0;
};

/// What post-run hooks see and may change.
struct RunOutcome {
  const RunInfo* run = nullptr;       ///< the run that ended
  std::string output;                 ///< the final answer ("" when the run failed)
  Status error;                       ///< OK when the run completed
  std::string attempt;                ///< a transcript excerpt of what the agent did (for lessons)
  std::map<std::string, bool> flags;  ///< e.g. "verified_with_discrepancy", "refine_low_quality"
  int64_t steps = 0;                  ///< model turns taken
  double cost_usd = 0;                ///< spent by the run
  int64_t input_tokens = 0;           ///< over the whole run
  int64_t output_tokens = 0;          ///< over the whole run

  /// Whether flag `name` is set.
  bool Flag(std::string_view name) const {
    auto it = flags.find(std::string(name));
    return it != flags.end() && it->second;
  }
};

/// Called once a run completed or failed: checks, revises or learns from its outcome.
class PostRunHook {
 public:
  virtual ~PostRunHook() = default;
  /// The name events and errors report the hook by.
  virtual std::string_view name() const = 0;
  /// May change `outcome` (flags, output) for the hooks after it; an error is reported as
  /// `hook.failed`.
  virtual Status AfterRun(RunOutcome& outcome) = 0;
};

}  // namespace mend::agent
