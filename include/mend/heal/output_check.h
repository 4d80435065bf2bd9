#pragma once

// OutputCheck, the post-tool hook that checks tool outputs against an agent's [[checks]] (pattern,
// JSON schema, size, command) and adds a hint or replaces the result (docs/heal.md). Thread-safe.

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mend/agent/hooks.h"
#include "mend/base/result.h"

namespace mend::obs {
class EventBus;
}

namespace mend::heal {

/// The run flag OutputCheck sets on a run in which one of its checks failed.
inline constexpr std::string_view kChecksFailedFlag = "output_check_failed";

namespace internal {
struct CompiledCheck;  ///< a spec with its compiled pattern or parsed schema
}

/// What a failed check does to the result.
enum class CheckAction {
  kHint,     ///< append a message to the result
  kReplace,  ///< replace the result with an error result holding the message
};

/// One predicate over the output of a tool.
struct OutputCheckSpec {
  /// What the check tests.
  enum class Kind {
    kMustMatch,     ///< `pattern` (ECMAScript) must be found in the output
    kMustNotMatch,  ///< `pattern` must not be found in the output
    kJsonSchema,    ///< the output must parse as JSON and satisfy `schema` (agent/json_schema.h)
    kMaxBytes,      ///< the output must be at most `max_bytes` bytes
    kCommand,       ///< `command` gets the output on stdin and must exit 0
  };
  Kind kind = Kind::kMaxBytes;              ///< what the check tests
  std::string tool = "*";                   ///< the tool it applies to; "*" for every tool
  CheckAction action = CheckAction::kHint;  ///< what a failure does
  std::string pattern;                      ///< kMustMatch and kMustNotMatch: ECMAScript
  std::string schema;                       ///< JSON text
  size_t max_bytes = 0;                     ///< kMaxBytes
  std::vector<std::string> command;  ///< argv; argv[0] is looked up in PATH unless it has a '/'
  std::chrono::milliseconds timeout{10'000};  ///< kCommand: how long the command may run
  /// The hint or replacement text. Empty: a command's stdout when it printed something, otherwise
  /// a description of the failure ("output check failed: ...").
  std::string message;
};

/// How a check command ended.
struct CommandRun {
  int exit_code = -1;       ///< -1 when a signal ended it
  bool timed_out = false;   ///< killed at the timeout
  std::string stdout_data;  ///< at most 64 KiB
};

/// The seam through which kCommand checks run a process. Implementations are thread-safe.
class CheckCommandRunner {
 public:
  virtual ~CheckCommandRunner() = default;
  /// Runs `argv` in `cwd` ("" = the current directory) with `stdin_data` on its stdin, its stderr
  /// discarded; kills it (and its process group) after `timeout`. A non-zero exit is a normal
  /// result. kInvalidArgument for an empty argv; the errno Status (kNotFound, ...) when it cannot
  /// start.
  virtual Result<CommandRun> Run(const std::vector<std::string>& argv, const std::string& cwd,
                                 std::string_view stdin_data,
                                 std::chrono::milliseconds timeout) = 0;
};

/// The default runner: fork/exec of a child in its own process group.
std::shared_ptr<CheckCommandRunner> MakeSubprocessRunner();

/// OutputCheck's collaborators.
struct OutputCheckOptions {
  obs::EventBus* events = nullptr;             ///< `heal.action` events; optional, not owned
  std::shared_ptr<CheckCommandRunner> runner;  ///< null: MakeSubprocessRunner()
};

/// A post-tool hook that checks tool outputs (docs/heal.md). For each successful
/// result (error results are left alone), the checks that apply to the tool run in order; every
/// failing kHint check appends its message, and the first failing kReplace check replaces the
/// result with ToolResult::Error(message) (the agent marks it replaced_by_hook) and ends the
/// checking. Each failure publishes `heal.action` {run, step, tool, action: "hint"|"replace",
/// reason}. Command checks run in the run's workspace. A check command that cannot start makes
/// AfterTool fail (reported by the agent as `hook.failed`; the result stays as it
/// was). Thread-safe.
///
/// Registered as a post-run hook too, it sets the flag kChecksFailedFlag on a run in which a check
/// failed while this process drove it (a canary counts such a run as not successful).
class OutputCheck final : public agent::PostToolHook, public agent::PostRunHook {
 public:
  /// kInvalidArgument naming the check's index for a pattern that does not compile, a schema that
  /// is not JSON or not usable, a kMaxBytes check with max_bytes 0, a kCommand check without
  /// argv, or an empty tool name.
  static Result<std::unique_ptr<OutputCheck>> Create(std::vector<OutputCheckSpec> checks,
                                                     OutputCheckOptions options = {});
  ~OutputCheck() override;

  std::string_view name() const override { return "output-check"; }
  Result<agent::PostToolAction> AfterTool(const agent::ToolCallInfo& call,
                                          const agent::ToolResult& result) override;
  /// Sets kChecksFailedFlag when a check failed in the run, and forgets the run.
  Status AfterRun(agent::RunOutcome& outcome) override;

  OutputCheck(std::vector<std::unique_ptr<internal::CompiledCheck>> checks,
              OutputCheckOptions options);  ///< use Create

 private:
  // The description of how `check` failed on `output`, or "" when it passed; a command's stdout
  // goes to `command_stdout`.
  Result<std::string> Evaluate(const internal::CompiledCheck& check,
                               const agent::ToolCallInfo& call, const std::string& output,
                               std::string& command_stdout);

  std::vector<std::unique_ptr<internal::CompiledCheck>> checks_;
  OutputCheckOptions options_;
  std::mutex mu_;
  std::set<std::string> failed_runs_;  // guarded by mu_: runs with a failed check since AfterRun
};

}  // namespace mend::heal
