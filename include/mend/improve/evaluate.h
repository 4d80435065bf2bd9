#pragma once

// Evaluating an agent's text on improve's cases (docs/improve.md, "Evaluation"): EvaluateArm runs
// every case K times in scratch copies, with shadow mode and the folder's checks, and scores each
// run with the check command. AgentText is the part of a folder an editor may change.

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mend/agent/agent.h"
#include "mend/agent/agent_spec.h"
#include "mend/base/env.h"
#include "mend/base/result.h"
#include "mend/improve/cases.h"
#include "mend/improve/gates.h"
#include "mend/llm/provider.h"
#include "mend/obs/events.h"

namespace mend::improve {

/// The editable part of an agent folder: what a candidate changes (docs/improve.md). Everything
/// else in the folder (agent.toml, tools/, limits) is copied as it is.
struct AgentText {
  std::string instructions;  ///< instructions.md
  /// `skills/<name>.md` by relative path ("skills/triage.md") -> the file's whole text. A path in
  /// the folder but not here is left as it is; a path here replaces (or adds) the file.
  std::map<std::string, std::string> skills;
  /// Field by field.
  friend bool operator==(const AgentText&, const AgentText&) = default;
};

/// Reads instructions.md (empty when the folder has none) and every skills/*.md of an agent folder
/// (the files LoadAgentFolder reads: names longer than ".md" that do not start with '.'). Errors of
/// the file system keep their code and name the file (kNotFound for a missing folder);
/// kInvalidArgument when `agent_dir` is not a folder.
Result<AgentText> ReadAgentText(FileSystem& fs, const std::string& agent_dir);

/// What the check command said about one run (docs/improve.md "Check command").
struct CheckVerdict {
  bool pass = false;  ///< the run did what the case asks
  double score = 0;   ///< optional finer grade; 0 when absent
  /// Empty when the check ran and printed a valid verdict. Otherwise why the run counts as failed:
  /// "timed out after 30s", "exited 3: <first line of stderr>", "killed by signal 9",
  /// "printed no JSON object: ...", "printed an invalid verdict: ...", "printed N bytes, more than
  /// ...", "could not start: ...", "not checked: ..." (a run with status "error" is never checked).
  /// Mend's words, but after "exited N: " it quotes the check, so it is untrusted text too.
  std::string error;
  /// What the check itself said about the run, for the editor: the verdict's "reason" when it
  /// printed a valid verdict with a string "reason"; otherwise the first lines of its stderr, or,
  /// without a valid verdict, of its stdout. At most 20 lines and 2 KiB (whole characters, invalid
  /// UTF-8 repaired, "..." when cut); "" when it said nothing. Untrusted: a check may echo the
  /// run's output, so it reaches an editor only inside an untrusted-data block.
  std::string message;
};

/// One run of one case in one arm, with everything the editor and the audit folder need.
struct CaseRun {
  std::string case_id;  ///< the case
  int repeat = 0;       ///< 0-based
  std::string run_id;   ///< "<case id>.<repeat>" in the arm's scratch store (gone after the arm)
  std::string status;   ///< "completed", "failed", "quarantined", "waiting", or "error"
  std::string output;   ///< the final answer; empty unless completed
  /// "<CODE>: <message>": the run's RunError, or mend's own error for status "error"; "" for none.
  std::string error;
  /// JSON array of {role, content, tool_calls?, tool_call_id?, name?, is_error?, hook_decision?}
  /// in conversation order (the system prompt first); "[]" when the run never started.
  std::string transcript;
  double cost_usd = 0;  ///< what the run cost
  CheckVerdict check;   ///< the check command's verdict
  /// The run as the gates score it.
  RunScore score() const { return RunScore{check.pass, check.score, cost_usd}; }
};

/// One arm's runs: for every case in the order given, its K runs by repeat.
struct ArmRuns {
  std::vector<std::vector<CaseRun>> cases;  ///< cases[i][r]: run r of case i
};

/// What EvaluateArm runs and how.
struct EvaluateOptions {
  /// clock, random, fs. fs must work on the operating system's files (a PosixFileSystem): the
  /// copies are run by real processes (tools, the check command).
  Env env;
  llm::LlmProvider* provider = nullptr;  ///< not owned; used by every run concurrently
  std::string agent_dir;                 ///< the original folder; never written
  std::string model;                     ///< overrides the folder's model when not empty
  /// Runs' copies and the arm's checkpoint store go below it. Created 0700 (with its parents) when
  /// missing; an existing one must be empty. Emptied again (and removed when EvaluateArm created
  /// it) before EvaluateArm returns.
  std::string scratch_dir;
  std::vector<std::string> check_command;  ///< argv prefix; a case's check_args are appended
  std::chrono::milliseconds check_timeout{60'000};  ///< per check command
  int repeats = 3;                                  ///< K >= 1
  int concurrency = 4;                              ///< runs at the same time, >= 1
  /// Called after every finished run (any thread, serialised by EvaluateArm): progress displays.
  std::function<void(const CaseRun&)> on_run;
  /// Where the `heal.action` events of the folder's [[checks]] go (every run gets them, after the
  /// ShadowHook); optional, not owned, must outlive the evaluation.
  obs::EventBus* events = nullptr;
  /// Optional: registers more hooks on each run's agent after the ShadowHook and the checks, with
  /// the spec loaded from the run's copy (app adds the progress guard here). Called concurrently
  /// for different runs. An error makes that run's status "error".
  std::function<Status(agent::Agent&, const agent::AgentSpec&)> add_run_hooks;
  /// Optional: the tools of the folder's MCP servers for one run (app starts them), given the
  /// spec loaded from the run's copy and the run's scratch workspace. The names it returns in
  /// `shadow_read_only` run under the ShadowHook; the others get shadow results. Called
  /// concurrently for different runs. An error makes that run's status "error".
  struct RunTools {
    std::vector<std::shared_ptr<agent::Tool>> tools;  ///< added to the run's agent
    std::vector<std::string> shadow_read_only;  ///< of those, the ones that run in shadow mode
  };
  std::function<Result<RunTools>(const agent::AgentSpec&, const std::string& workspace)>
      extra_tools;  ///< see RunTools
  /// Optional, borrowed: once it reads true no new run starts and runs in flight stop at their
  /// next checkpoint (AgentOptions::stop); EvaluateArm then returns kCancelled.
  const std::atomic<bool>* stop = nullptr;
};

/// Runs every case `options.repeats` times with the agent folder's text replaced by `text`: each
/// run in a fresh scratch copy of the agent folder (with `text` written into it) and of the case's
/// workspace fixture (an empty folder when it has none), with heal's ShadowHook on (the folder's
/// [shadow] read_only tools run, others return "not executed (shadow mode)") and the folder's
/// [[checks]] (heal/agent_checks.h), `concurrency` runs at
/// a time. Each finished run is given to the check command: argv = check_command + case.check_args,
/// stdin = one JSON object {task, status, output, error, transcript, case: {id, task, tags,
/// check_args}, repeat}, cwd = the run's workspace copy. A check that exits non-zero, times out or
/// prints anything but one JSON object with a boolean "pass" (and optional finite "score") scores
/// the run as failed with CheckVerdict::error set; a run that fails in mend itself is recorded with
/// status "error" (and not checked). Neither stops the evaluation. Copies hold only directories and
/// regular files (docs/improve.md "Evaluation" says what happens to symbolic links); each run's
/// copies are removed after its check. Results are in case order, runs by repeat, whatever the
/// concurrency.
///
/// Errors, before any run starts: kInvalidArgument for bad options (no provider, fs or clock,
/// repeats or concurrency < 1, an empty check command, a timeout <= 0, an empty agent_dir or
/// scratch_dir), a case without id or with an id used before, a case whose workspace fixture is not
/// a folder, a `text.skills` key that is not "skills/<name>.md", candidate text the agent
/// folder does not load with (or an agent.toml whose relative workspace leads out of the folder,
/// which no copy can resolve); the loader's error (kNotFound for a missing folder, kInvalidArgument
/// naming the file) when the original folder does not load; kAlreadyExists when scratch_dir is not
/// empty; file system errors creating the scratch folder or its store keep their code.
Result<ArmRuns> EvaluateArm(const AgentText& text, const std::vector<Case>& cases,
                            const EvaluateOptions& options);

/// Everything EvaluateArm checks before its first run, and nothing more: the options, the cases,
/// the folder and the copy with `text` written into it (made in scratch_dir and removed again). The
/// same errors as EvaluateArm; OK means EvaluateArm would start its runs. No run starts and no
/// model is called, so an attempt can refuse bad inputs before it records anything.
Status CheckEvaluation(const AgentText& text, const std::vector<Case>& cases,
                       const EvaluateOptions& options);

}  // namespace mend::improve
