#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mend/base/env.h"
#include "mend/base/result.h"
#include "mend/improve/cases.h"
#include "mend/improve/gates.h"
#include "mend/llm/provider.h"

namespace mend::improve {

// The editable part of an agent folder: what a candidate changes (DESIGN.md §9). Everything else in
// the folder (agent.toml, tools/, limits) is copied as it is.
struct AgentText {
  std::string instructions;  // instructions.md
  // skills/<name>.md by relative path ("skills/triage.md") -> the file's whole text. A path in
  // the folder but not here is left as it is; a path here replaces (or adds) the file.
  std::map<std::string, std::string> skills;
  friend bool operator==(const AgentText&, const AgentText&) = default;
};

// Reads instructions.md and every skills/*.md of an agent folder. Errors of the file system keep
// their code and name the file.
Result<AgentText> ReadAgentText(FileSystem& fs, const std::string& agent_dir);

// What the check command said about one run (docs/improve.md "Check command").
struct CheckVerdict {
  bool pass = false;
  double score = 0;
  // Empty when the check ran and printed a valid verdict. Otherwise why the run counts as failed:
  // "timed out after 30s", "exited 3", "printed no JSON object: ...", "could not start: ..."
  std::string error;
};

// One run of one case in one arm, with everything the editor and the audit folder need.
struct CaseRun {
  std::string case_id;
  int repeat = 0;          // 0-based
  std::string run_id;      // in the evaluation's own scratch store
  std::string status;      // "completed", "failed", "quarantined", "waiting", or "error"
  std::string output;      // the final answer; empty unless completed
  std::string error;       // the run's error code and message (RunError) or mend's own error
  std::string transcript;  // JSON array of {role, content, tool_calls?, tool_call_id?, name?,
                           // hook_decision?} in conversation order
  double cost_usd = 0;
  CheckVerdict check;
  RunScore score() const { return RunScore{check.pass, check.score, cost_usd}; }
};

// One arm's runs: for every case in the order given, its K runs by repeat.
struct ArmRuns {
  std::vector<std::vector<CaseRun>> cases;
};

struct EvaluateOptions {
  Env env;                                 // clock, random, fs (a PosixFileSystem in the CLI)
  llm::LlmProvider* provider = nullptr;    // not owned; used by every run concurrently
  std::string agent_dir;                   // the original folder; never written
  std::string model;                       // overrides the folder's model when not empty
  std::string scratch_dir;                 // runs' copies go below it; created 0700
  std::vector<std::string> check_command;  // argv prefix; a case's check_args are appended
  std::chrono::milliseconds check_timeout{30'000};
  int repeats = 3;      // K >= 1
  int concurrency = 4;  // runs at the same time, >= 1
  // Called after every finished run (any thread, serialised by Evaluate): progress displays.
  std::function<void(const CaseRun&)> on_run;
};

// Runs every case `options.repeats` times with the agent folder's text replaced by `text`: each
// run in a fresh scratch copy of the agent folder (with `text` written into it) and of the case's
// workspace fixture (an empty folder when it has none), with heal's ShadowHook on (the folder's
// [shadow] read_only tools run, others return "not executed (shadow mode)"), `concurrency` runs at
// a time. Each finished run is given to the check command: argv = check_command + case.check_args,
// stdin = one JSON object {task, status, output, error, transcript, case: {id, task, tags,
// check_args}, repeat}, cwd = the run's workspace copy. A check that exits non-zero, times out or
// prints anything but one JSON object with a boolean "pass" (and optional finite "score") scores
// the run as failed with CheckVerdict::error set; a run that fails in mend itself is recorded with
// status "error". Neither stops the evaluation. Errors (kInvalidArgument) only for bad options
// or an agent folder that does not load.
Result<ArmRuns> EvaluateArm(const AgentText& text, const std::vector<Case>& cases,
                            const EvaluateOptions& options);

}  // namespace mend::improve
