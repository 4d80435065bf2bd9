#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mend/agent/agent.h"
#include "mend/base/result.h"
#include "mend/heal/recovery.h"
#include "mend/lessonq/lesson_queue.h"

namespace mend::cli {

// One line of the demo's story, in the order things happened.
struct DemoEvent {
  std::string phase;  // "run", "crash", "resume", "memory", "heal"
  std::string text;
};

// What the crash-and-resume scenario did, for the text and JSON reports.
struct DemoReport {
  std::string home;
  std::string agent_dir;
  std::string run_id;
  std::vector<DemoEvent> events;
  int64_t crash_step = 0;          // the newest checkpoint when the process "died"
  std::string status_after_crash;  // what the store says about the run then
  size_t requests_before_crash = 0;
  size_t requests_after_resume = 0;
  size_t scripted_responses = 0;  // the script's length: each response can be used once
  std::map<std::string, int> tool_executions;  // call id -> times executed
  int tool_failures = 0;
  agent::RunResult final;

  // Reflexion: a run that fails, the lesson job its hook wrote to the WAL, and what the replay in
  // the next process did with it.
  std::string failing_task;
  agent::RunResult failing;
  std::string lesson_job_id;
  lessonq::DrainReport lesson_drain;

  // Long-term memory: the lesson the failed run left, a similar task that receives it, and an
  // unrelated task that receives nothing.
  std::string lesson_id;
  std::string lesson;
  std::string similar_task;
  std::string similar_section;  // the "## Long-term Memory" section of its system prompt
  agent::RunResult similar;
  int similar_tool_failures = 0;
  std::string unrelated_task;
  bool unrelated_received_memory = false;
  agent::RunResult unrelated;
  int64_t lesson_helped = 0;  // runs that received the lesson and completed

  // Self-healing: a run looping on a failing tool is stopped by the progress guard, and a run
  // failed by a provider outage comes back through one pass of the recovery loop.
  std::string looping_task;
  agent::RunResult looping;
  std::vector<std::string> heal_actions;  // "hint: ...", "deny: ...", "stop: ..."
  int looping_tool_executions = 0;
  std::string outage_task;
  agent::RunResult outage_failed;  // the run as the outage left it
  int outage_retries = 0;          // times the outage run asked the model again before failing
  heal::TickReport recovery;       // the pass of the recovery loop
  store::RunStatus outage_final = store::RunStatus::kRunning;

  // Improve (layer 2): the failed runs become cases, the editor proposes an instruction fix, every
  // case reruns in shadow mode with the baseline and the candidate, and the gates decide.
  std::vector<std::string> improve_cases;  // "<id>: <task>", from failures and by hand
  std::string improve_held_out;            // the held-out case's id
  std::string improve_attempt;             // the attempt id (improve/<id>/)
  std::string improve_outcome;             // "proposal" when the demo goes as designed
  std::string improve_card;                // FormatImproveResult's card
  int improve_runs = 0;                    // agent runs evaluated
};

// Runs the demo scenario in `home` (created when missing) on the real filesystem: writes a small
// agent folder, runs it on a scripted model (the model's first tool call fails, it corrects
// itself), simulates a crash of the process right after a checkpoint, and resumes the run with a
// new store handle and a new agent. Then a run that keeps guessing a wrong file name fails; its
// reflexion hook writes a lesson job to the WAL and the process ends before the job ran; the next
// process replays the WAL and its lesson worker stores the lesson, a similar task receives it under
// "## Long-term Memory" and makes no wrong guess, and an unrelated one receives nothing. Last, a
// run that keeps calling a failing tool is stopped by the progress guard, and a run failed by a
// provider outage is brought back by one pass of the recovery loop, which leaves the stopped run
// alone. Then improve turns the failed runs into cases, an editor proposes an instruction fix,
// and the gates judge it on every case (one held out), leaving a queued proposal. Errors are
// failures of mend itself (the store, the disk), or kInternal when the scenario
// did not go as scripted.
Result<DemoReport> RunDemoScenario(const std::string& home);

}  // namespace mend::cli
