#pragma once

// ProgressGuard, the hook that stops a run looping on a failing tool: it hints, then denies the
// same failing call, then stops the run with MEND_RUN_NO_PROGRESS (docs/heal.md). One guard serves
// concurrent runs.

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "mend/agent/hooks.h"

namespace mend::obs {
class EventBus;
}

namespace mend::heal {

/// The detail code (and RunError code) of a run the guard stopped.
inline constexpr std::string_view kNoProgressCode = "MEND_RUN_NO_PROGRESS";

/// When ProgressGuard hints, denies and stops.
struct ProgressGuardOptions {
  /// A tool failing with the same (normalised) error this many times in a row gets a hint, and its
  /// failing calls are denied from then on. At least 1.
  int repeat_threshold = 2;
  /// After this many denials in one streak, the next repeated call stops the run.
  int max_denials = 3;
  /// Runs whose state is kept; beyond it the least recently seen run is forgotten (as if new).
  size_t max_runs = 1024;
  obs::EventBus* events = nullptr;  ///< `heal.action` events; optional, not owned
};

/// Stops runs that loop on a failing tool (docs/heal.md). Register the same object
/// as a post-tool hook (it watches results) and as a pre-tool hook (it denies and stops).
///
/// Per run and per tool, the guard tracks a failure streak: consecutive error results of the tool
/// whose text is the same after NormalizeError. A success of the tool ends its streak, and so does
/// a failure with a different error (which starts a new streak); results of other tools do not.
/// When the streak reaches repeat_threshold the result gets the hint "This call failed the same way
/// N times: <excerpt>. Change the arguments or try a different approach." (again on every further
/// failure of the streak). While that streak lasts, a call of the tool with arguments equal (as
/// JSON) to one of the streak's failing calls is denied; calls with new arguments run. After
/// max_denials denials the next such call is answered with PreToolDecision::StopRun(...,
/// "MEND_RUN_NO_PROGRESS") and the run's state is dropped. Each hint, deny and stop publishes
/// `heal.action` {run, step, tool, action: "hint"|"deny"|"stop", reason}.
///
/// Thread-safe: one guard may serve concurrent runs.
class ProgressGuard final : public agent::PreToolHook, public agent::PostToolHook {
 public:
  /// A guard with no runs seen yet.
  explicit ProgressGuard(ProgressGuardOptions options = {});

  std::string_view name() const override { return "progress-guard"; }
  Result<agent::PreToolDecision> BeforeTool(const agent::ToolCallInfo& call) override;
  Result<agent::PostToolAction> AfterTool(const agent::ToolCallInfo& call,
                                          const agent::ToolResult& result) override;

  /// Runs with state held (for tests and metrics).
  size_t tracked_runs() const;

 private:
  struct Streak {
    std::string error_key;              ///< NormalizeError of the failures
    std::string excerpt;                ///< of the newest failure
    int failures = 0;                   ///< in a row
    int denials = 0;                    ///< calls denied during this streak
    std::set<std::string> failed_args;  ///< canonical arguments of the failing calls (bounded)
  };
  struct RunState {
    uint64_t last_used = 0;
    std::map<std::string, Streak> tools;  ///< by tool name
  };

  // The state of `run_id`, created (and the oldest run evicted) when missing. Holds mu_.
  RunState& StateFor(const std::string& run_id);
  agent::PostToolAction RecordFailure(const agent::ToolCallInfo& call, const std::string& text,
                                      Streak& streak);

  const ProgressGuardOptions options_;
  mutable std::mutex mu_;
  uint64_t tick_ = 0;
  std::map<std::string, RunState> runs_;
};

/// The error text with volatile parts removed so that "the same failure" compares equal: runs of
/// hex digits containing a digit (ids, addresses, "0x7ffd") and runs of decimal digits become "#",
/// and white space is collapsed to single spaces and trimmed.
std::string NormalizeError(std::string_view text);

}  // namespace mend::heal
