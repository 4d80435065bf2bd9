// Serve chaos: runs started over the HTTP API of `mend serve`, which is killed with SIGKILL at
// random moments and started again; its recovery loop must finish every accepted run, once.
#include <random>
#include <set>
#include <thread>

#include "tests/chaos/chaos.h"
#include "tests/chaos/chaos_util.h"
#include "tests/chaos/run_fleet.h"
#include "tests/chaos/serve_fleet.h"

namespace mend::chaos {

Result<ChaosRow> RunServeKillChaos(const ChaosOptions& options) {
  std::mt19937 rng(options.seed * 15485863u + 3);
  const int runs = 8 * options.scale;
  int64_t provider_faults = 0;
  std::vector<RunPlan> plans =
      PlansWithOccasionalFault(rng, "served-run", runs, 0.25, &provider_faults);
  MEND_ASSIGN_OR_RETURN(ServedFleet served,
                        StartFleet(options, std::move(plans), /*latency_ms=*/250, /*tool_ms=*/300,
                                   {"MEND_SERVE_AGENTS_DIR=" + options.work_dir}));
  const RunFleet& fleet = served.fleet;
  const std::vector<std::string>& env = served.env;
  ServeFleet serve(options, env, 1, /*shared_home=*/true);
  MEND_RETURN_IF_ERROR(serve.Start(0));

  int64_t kills = 0;
  std::vector<std::string> ids;
  std::uniform_int_distribution<int> delay_ms(0, 900);
  auto kill = [&]() -> Status {
    // The fault schedule: a random moment while runs are under way.
    const std::chrono::milliseconds delay(delay_ms(rng));
    std::this_thread::sleep_for(delay);
    MEND_ASSIGN_OR_RETURN(bool hit, serve.KillAndRestart(0));
    kills += hit ? 1 : 0;
    Say(options, "serve killed after " + std::to_string(delay.count()) + " ms");
    return OkStatus();
  };
  for (const RunPlan& plan : fleet.plans()) {
    ids.push_back(plan.id);
    MEND_RETURN_IF_ERROR(serve.Submit(0, "agent", fleet.Task(plan), plan.id));
    if (std::bernoulli_distribution(0.5)(rng)) MEND_RETURN_IF_ERROR(kill());
  }
  for (int k = 0; k < 2 * options.scale; ++k) MEND_RETURN_IF_ERROR(kill());

  ChaosRow row;
  row.faults = kills + provider_faults;
  std::set<std::string> seen_failed;
  const std::string home = serve.Home(0);
  int64_t by_hand = 0;
  MEND_RETURN_IF_ERROR(serve.Finish(home, ids, &row, &seen_failed, &by_hand));
  row.detail = std::to_string(runs) + " runs started over HTTP, " + std::to_string(kills) +
               " kill -9 of mend serve, " + std::to_string(provider_faults) + " provider faults, " +
               std::to_string(by_hand) +
               " resumes by hand after 400/401; every accepted run completed once, one lesson per "
               "run whose task failed";
  MEND_RETURN_IF_ERROR(
      fleet.Verify(options, home, env, kills, serve.EventLogs(), seen_failed, &row));
  if (!row.problems.empty()) row.problems.push_back(serve.LogTails());
  return row;
}

}  // namespace mend::chaos
