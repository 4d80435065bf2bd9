#pragma once

// RunImproveAttempt, one improve attempt with the runtime's wiring (docs/improve.md): an
// ImproveRequest in, an ImproveAttempt out, for `mend improve`, `mend demo` and the server.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/improve/cases.h"
#include "mend/improve/improve.h"
#include "mend/improve/proposal.h"
#include "mend/llm/provider.h"

namespace mend::app {

struct Runtime;

/// The detail code of an attempt refused for its inputs before anything was recorded (a case's
/// workspace that is not a folder, an agent.toml whose workspace no copy can resolve): input the
/// caller must fix, kInvalidArgument.
inline constexpr std::string_view kImproveInputRefusedDetail = "MEND_IMPROVE_INPUT_REFUSED";

/// What becomes of a proposal once the gates made one (docs/improve.md).
enum class ProposalMode {
  kManual,  ///< queued for `mend improve apply`
  kAuto,    ///< applied when the folder's files are unchanged since the attempt started
};

/// Which hooks the evaluation runs get besides heal's ShadowHook and the folder's [[checks]]
/// (which every evaluation run has; improve::EvaluateArm).
enum class EvaluationHooks {
  /// The progress guard when heal.progress_guard is set, as `mend run` has it; not long-term
  /// memory or the quality hooks, whose state changes between runs.
  kAsRun,
  kNone,  ///< nothing more (a scripted scenario that judges the agent's own behaviour)
};

/// One improve attempt as a command asks for it (`mend improve AGENT_DIR`, `mend demo`).
struct ImproveRequest {
  std::string agent_dir;             ///< absolute
  std::vector<improve::Case> cases;  ///< the tasks to rerun (improve/cases.h)
  /// Case id -> what the failed run showed (improve::ImproveOptions::failure_reports).
  std::map<std::string, std::string> failure_reports;
  double held_out_fraction = 0.25;    ///< share of cases only the gates see
  std::optional<std::uint64_t> seed;  ///< unset: drawn from the runtime's randomness
  int candidates = 2;                 ///< candidates the editor writes per round
  int rounds = 2;                     ///< editor rounds
  int repeats = 3;                    ///< runs of every case per arm (K)
  int concurrency = 4;                ///< evaluation runs at a time
  double max_cost_increase = 0.5;     ///< cost gate: relative increase allowed
  /// argv prefix of the check; a case's check_args are appended (ShellCheckCommand for a shell
  /// command line).
  std::vector<std::string> check_command;
  std::chrono::milliseconds check_timeout{60'000};  ///< per check command
  ProposalMode mode = ProposalMode::kManual;        ///< what becomes of a proposal
  EvaluationHooks hooks = EvaluationHooks::kAsRun;  ///< extra hooks of evaluation runs
  ///@{
  /// The model of the evaluation runs and the editor; null: the runtime's provider. Not owned.
  llm::LlmProvider* model = nullptr;
  llm::LlmProvider* editor = nullptr;
  ///@}
  /// Optional: one line of progress at a time ("improve: baseline 3/12 runs; ..."), for a display
  /// that overwrites its last line. Called from the evaluation's threads, one call at a time.
  std::function<void(const std::string& line)> on_progress;
  /// Optional: called once the attempt is recorded (its audit folder exists), with its id, before
  /// any run.
  std::function<void(const std::string& attempt_id)> on_started;
  /// Optional, borrowed: once it reads true no new evaluation run starts, runs in flight stop at
  /// their next checkpoint, and the attempt ends with kCancelled (recorded as failed) at its next
  /// arm. `mend serve` raises it when it shuts down.
  const std::atomic<bool>* stop = nullptr;
};

/// Which names the errors of ValidateImproveRequest give the numbers: `mend improve`'s flags
/// (`--held-out`) or POST /api/v1/improve's fields (`held_out_fraction`).
enum class ImproveFieldNames { kFlags, kJson };

/// The limits of an ImproveRequest's numbers, one rule for the CLI and the API: held_out_fraction
/// in [0, 1), max_cost_increase finite and >= 0, candidates and rounds 1 to 20, repeats 2 to 100,
/// concurrency 1 to 64, a positive check timeout. kInvalidArgument naming the first that is not
/// ("--candidates must be between 1 and 20", "candidates must be between 1 and 20"). Pure.
Status ValidateImproveRequest(const ImproveRequest& request, ImproveFieldNames names);

/// The check command of the agent folder's [improve] table (agent_spec.h) for the folder at
/// `agent_dir` (absolute): ${AGENT_DIR} replaced by it and a relative program holding a '/' taken
/// relative to it (agent::ExpandCommand). kInvalidArgument saying so when the table has no check.
Result<std::vector<std::string>> ImproveTableCheck(const agent::AgentSpec& spec,
                                                   const std::string& agent_dir);

/// The cases of the [improve] table's `cases` file, read from the folder at `agent_dir`
/// (improve::LoadCasesFile, so relative workspaces are taken from the file's folder).
/// kInvalidArgument saying so when the table names no cases file; LoadCasesFile's errors.
Result<std::vector<improve::Case>> ImproveTableCases(FileSystem& fs, const agent::AgentSpec& spec,
                                                     const std::string& agent_dir);

/// An attempt of the folder as its [improve] table describes it: request.check_command,
/// check_timeout and cases from the table (ImproveTableCheck, ImproveTableCases);
/// request.agent_dir must be set. Their errors.
Status UseImproveTable(FileSystem& fs, const agent::AgentSpec& spec, ImproveRequest& request);

/// One finished attempt and what became of its proposal.
struct ImproveAttempt {
  improve::ImproveReport report;              ///< ImproveAgent's report
  std::optional<improve::Proposal> proposal;  ///< set when the gates made one
};

/// The argv that runs the shell command line `command` with a case's check_args as "$1"...
std::vector<std::string> ShellCheckCommand(const std::string& command);

/// Runs one improve attempt on the agent folder `request.agent_dir` (whose spec is `spec`) with the
/// runtime's wiring: the editor model (improve.editor_model, else the folder's), the evaluation
/// runs in a private scratch folder under the home (`improve-scratch-<pid>`, removed as each arm
/// ends; those that killed attempts left behind are removed first), their hooks, and the runtime's
/// attempt store, which records the attempt (also one that fails) and its proposal; in kAuto the
/// proposal is applied when it can be (otherwise its note says why not).
///
/// Errors: kInvalidArgument with kImproveInputRefusedDetail for inputs the evaluation refuses,
/// before anything is recorded; the attempt store's errors; ImproveAgent's errors, "improve attempt
/// <id> failed: ..." once the attempt was recorded; the errors of ApplyProposal other than
/// kFailedPrecondition. The runtime must outlive the call; not for concurrent calls on one
/// runtime (the scratch folder is the process's).
Result<ImproveAttempt> RunImproveAttempt(Runtime& runtime, const agent::AgentSpec& spec,
                                         const ImproveRequest& request);

}  // namespace mend::app
