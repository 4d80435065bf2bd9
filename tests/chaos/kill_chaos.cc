// Kill chaos: `mend run` and then `mend recover` processes are killed with SIGKILL at random
// moments: inside model requests, tool calls, checkpoint writes and lesson requests. Recovery
// must finish every run that was started, never asking a checkpointed turn again or running a
// recorded tool call again (one in flight at the kill may run again, with the same call id), and
// every run that failed must leave exactly one lesson.
#include <signal.h>

#include <random>
#include <thread>

#include "tests/chaos/chaos.h"
#include "tests/chaos/chaos_util.h"
#include "tests/chaos/run_fleet.h"

namespace mend::chaos {
namespace {

// Starts `argv`, and after `delay` kills it with SIGKILL if it is still running. Returns whether
// the kill hit a live process.
Result<bool> RunAndKill(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                        std::chrono::milliseconds delay) {
  MEND_ASSIGN_OR_RETURN(auto child, testing::ChildProcess::Spawn(argv, env));
  // The fault schedule: a random moment in the child's life, not a synchronisation.
  std::this_thread::sleep_for(delay);
  const Status killed = child->Kill(SIGKILL);
  MEND_ASSIGN_OR_RETURN(testing::ChildOutput output, child->Finish(kBound));
  return killed.ok() && !output.status.exited && output.status.signal == SIGKILL;
}

}  // namespace

Result<ChaosRow> RunKillChaos(const ChaosOptions& options) {
  std::mt19937 rng(options.seed * 104729u + 2);
  const int runs = 6 * options.scale;
  int64_t provider_faults = 0;
  std::vector<RunPlan> plans =
      PlansWithOccasionalFault(rng, "killed-run", runs, 1.0 / 3, &provider_faults);
  MEND_ASSIGN_OR_RETURN(ServedFleet served,
                        StartFleet(options, std::move(plans), /*latency_ms=*/250, /*tool_ms=*/300));
  const RunFleet& fleet = served.fleet;
  const std::vector<std::string>& env = served.env;
  const std::string home = options.work_dir + "/home";

  int64_t kills = 0;
  int64_t restarted = 0;
  std::set<std::string> seen_failed;
  std::vector<std::string> ids;
  std::uniform_int_distribution<int> run_delay(0, 1600);
  for (const RunPlan& plan : fleet.plans()) {
    ids.push_back(plan.id);
    const std::vector<std::string> argv =
        MendArgv(options, home, {"run", fleet.agent_dir(), fleet.Task(plan), "--id", plan.id});
    if (std::bernoulli_distribution(0.8)(rng)) {
      const std::chrono::milliseconds delay(run_delay(rng));
      MEND_ASSIGN_OR_RETURN(bool hit, RunAndKill(argv, env, delay));
      Say(options, "run " + plan.id + (hit ? " killed after " : " ended before its kill at ") +
                       std::to_string(delay.count()) + " ms");
      kills += hit ? 1 : 0;
    } else {
      MEND_ASSIGN_OR_RETURN(MendResult run,
                            RunMend(options, home, env,
                                    {"run", fleet.agent_dir(), fleet.Task(plan), "--id", plan.id}));
      if (!run.output.status.exited) {
        return InternalError("mend run " + plan.id + " died: " + run.output.err);
      }
    }
    // A run killed before it was stored was never started: start it again, as its user would.
    MEND_ASSIGN_OR_RETURN(MendResult shown, RunMend(options, home, env, {"show", plan.id}));
    if (shown.json.is_object() && shown.json.value("status", "") == "failed" &&
        TaskFailure(shown.json["error"])) {
      seen_failed.insert(plan.id);
    }
    if (!shown.json.is_object() || !shown.json.contains("status")) {
      Say(options, "run " + plan.id + " was killed before it was stored; starting it again");
      ++restarted;
      MEND_ASSIGN_OR_RETURN(MendResult run,
                            RunMend(options, home, env,
                                    {"run", fleet.agent_dir(), fleet.Task(plan), "--id", plan.id}));
      (void)run;
    }
  }
  // Recovery processes killed in their turn.
  std::uniform_int_distribution<int> recover_delay(200, 1500);
  for (int k = 0; k < 3 * options.scale; ++k) {
    const std::chrono::milliseconds delay(recover_delay(rng));
    MEND_ASSIGN_OR_RETURN(bool hit, RunAndKill(MendArgv(options, home, {"recover"}), env, delay));
    Say(options, std::string("recover ") + (hit ? "killed after " : "ended before its kill at ") +
                     std::to_string(delay.count()) + " ms");
    kills += hit ? 1 : 0;
    MEND_RETURN_IF_ERROR(NoteFailedRuns(options, home, env, &seen_failed));
  }

  int64_t by_hand = 0;
  ChaosRow row;
  row.faults = kills + provider_faults;
  const Status settled = Settle(options, home, env, ids, std::chrono::seconds(120 * options.scale),
                                &by_hand, &seen_failed);
  if (!settled.ok()) row.problems.push_back(settled.ToString());
  row.detail = std::to_string(runs) + " runs, " + std::to_string(kills) +
               " kill -9 of mend run and mend recover, " + std::to_string(provider_faults) +
               " provider faults, " + std::to_string(restarted) +
               " runs killed before they were stored and started again; every run completed once, "
               "one lesson per run whose task failed";
  MEND_RETURN_IF_ERROR(
      fleet.Verify(options, home, env, kills, {home + "/events.jsonl"}, seen_failed, &row));
  return row;
}

}  // namespace mend::chaos
