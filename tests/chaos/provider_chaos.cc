// Provider chaos: runs whose model answers 429, 5xx, proxy pages, truncated or empty bodies,
// dropped connections, late answers, 400 and 401 before answering well. Each fault fails its run
// (providers never retry); recovery resumes the transient ones, and a person (here: `mend resume`)
// the others. Every run must complete exactly once, and every run that failed must leave exactly
// one lesson.
#include <random>

#include "tests/chaos/chaos.h"
#include "tests/chaos/chaos_util.h"
#include "tests/chaos/run_fleet.h"

namespace mend::chaos {

Result<ChaosRow> RunProviderChaos(const ChaosOptions& options) {
  std::mt19937 rng(options.seed * 7919u + 1);
  std::vector<RunPlan> plans;
  const int runs = 8 * options.scale;
  int64_t faults = 0;
  for (int i = 0; i < runs; ++i) {
    RunPlan plan;
    plan.id = Tag("provider-run", i);
    for (int turn = 0; turn < kTurns; ++turn) {
      // Most turns are answered well; some get one or two faults first.
      const int count = std::discrete_distribution<int>({6, 3, 1})(rng);
      for (int k = 0; k < count; ++k) {
        bool permanent = false;
        plan.faults[turn].push_back(RandomFault(rng, /*allow_permanent=*/true, &permanent));
        plan.permanent = plan.permanent || permanent;
      }
    }
    faults += plan.FaultCount();
    plans.push_back(std::move(plan));
  }
  MEND_ASSIGN_OR_RETURN(ServedFleet served,
                        StartFleet(options, std::move(plans), /*latency_ms=*/0, /*tool_ms=*/0));
  const RunFleet& fleet = served.fleet;
  const std::vector<std::string>& env = served.env;
  const std::string home = options.work_dir + "/home";

  std::vector<std::string> ids;
  for (const RunPlan& plan : fleet.plans()) {
    ids.push_back(plan.id);
    Say(options, "run " + plan.id + " with " + std::to_string(plan.FaultCount()) + " faults");
    MEND_ASSIGN_OR_RETURN(
        MendResult run,
        RunMend(options, home, env, {"run", fleet.agent_dir(), fleet.Task(plan), "--id", plan.id}));
    if (!run.output.status.exited) {
      return InternalError("mend run " + plan.id + " died: " + run.output.err);
    }
  }
  int64_t by_hand = 0;
  std::set<std::string> seen_failed;
  ChaosRow row;
  row.faults = faults;
  const Status settled = Settle(options, home, env, ids, std::chrono::seconds(120 * options.scale),
                                &by_hand, &seen_failed);
  if (!settled.ok()) row.problems.push_back(settled.ToString());
  row.detail = std::to_string(runs) + " runs, " + std::to_string(faults) +
               " provider faults; recovery resumed the transient ones, " + std::to_string(by_hand) +
               " resumes by hand after 400/401; every run completed once, one lesson per run whose "
               "task failed";
  MEND_RETURN_IF_ERROR(
      fleet.Verify(options, home, env, /*kills=*/0, {home + "/events.jsonl"}, seen_failed, &row));
  return row;
}

}  // namespace mend::chaos
