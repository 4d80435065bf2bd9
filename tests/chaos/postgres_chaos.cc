// PostgreSQL chaos: three `mend serve` replicas share one PostgreSQL store and lesson queue; runs
// are started over their HTTP APIs while replicas are killed with SIGKILL at random and the
// server is restarted under them (or, without a way to restart it, every connection is closed,
// which is what the replicas see of a restart). Every accepted run must complete once, and every
// run that failed must leave exactly one lesson in the shared memory.
#include <random>
#include <set>
#include <thread>

#include "tests/chaos/chaos.h"
#include "tests/chaos/chaos_util.h"
#include "tests/chaos/run_fleet.h"
#include "tests/chaos/serve_fleet.h"
#include "tests/e2e/scratch_database.h"

namespace mend::chaos {
namespace {

constexpr int kReplicas = 3;

Status RestartPostgres(const ChaosOptions& options, const std::string& url) {
  if (!options.postgres_restart.empty()) {
    MEND_ASSIGN_OR_RETURN(
        testing::ChildOutput out,
        testing::RunProcess({options.postgres_restart}, {"PATH=/usr/bin:/bin"}, kBound));
    if (!out.status.exited || out.status.code != 0) {
      return InternalError("restarting PostgreSQL failed: " + out.err);
    }
    return OkStatus();
  }
  return testing::ExecPostgres(
      url,
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
      "AND pid <> pg_backend_pid() AND backend_type = 'client backend'");
}

}  // namespace

Result<ChaosRow> RunPostgresChaos(const ChaosOptions& options) {
  MEND_ASSIGN_OR_RETURN(testing::ScratchDatabase db,
                        testing::ScratchDatabase::Create(options.postgres_url, "mend_chaos"));
  std::mt19937 rng(options.seed * 32452843u + 4);
  const int runs = 9 * options.scale;
  int64_t provider_faults = 0;
  std::vector<RunPlan> plans =
      PlansWithOccasionalFault(rng, "replicated-run", runs, 1.0 / 3, &provider_faults);
  // A killed replica's lesson jobs are claimed again 2 s + 5 s after their claim.
  MEND_ASSIGN_OR_RETURN(
      ServedFleet served,
      StartFleet(options, std::move(plans), /*latency_ms=*/250, /*tool_ms=*/300,
                 {"MEND_SERVE_AGENTS_DIR=" + options.work_dir, "MEND_STORE=" + db.url(),
                  "MEND_QUALITY_REFLEXION_QUEUE_BACKEND=postgres",
                  "MEND_QUALITY_REFLEXION_QUEUE_JOB_TIMEOUT=2s",
                  "MEND_QUALITY_REFLEXION_QUEUE_CLAIM_MARGIN=5s"}));
  const RunFleet& fleet = served.fleet;
  const std::vector<std::string>& env = served.env;
  ServeFleet serve(options, env, kReplicas, /*shared_home=*/false);
  for (int k = 0; k < kReplicas; ++k) MEND_RETURN_IF_ERROR(serve.Start(k));

  int64_t kills = 0;
  int64_t restarts = 0;
  std::vector<std::string> ids;
  std::uniform_int_distribution<int> delay_ms(0, 900);
  std::uniform_int_distribution<int> victim(0, kReplicas - 1);
  auto kill = [&]() -> Status {
    // The fault schedule: a random replica at a random moment while runs are under way.
    const std::chrono::milliseconds delay(delay_ms(rng));
    std::this_thread::sleep_for(delay);
    const int k = victim(rng);
    MEND_ASSIGN_OR_RETURN(bool hit, serve.KillAndRestart(k));
    kills += hit ? 1 : 0;
    Say(options,
        "replica " + std::to_string(k) + " killed after " + std::to_string(delay.count()) + " ms");
    return OkStatus();
  };
  for (size_t i = 0; i < fleet.plans().size(); ++i) {
    const RunPlan& plan = fleet.plans()[i];
    ids.push_back(plan.id);
    // A replica that lost its database connection may refuse for a moment: try the others.
    Status submitted = OkStatus();
    for (int attempt = 0; attempt < 3 * kReplicas; ++attempt) {
      submitted = serve.Submit((static_cast<int>(i) + attempt) % kReplicas, "agent",
                               fleet.Task(plan), plan.id);
      if (submitted.ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a retry's pause
    }
    MEND_RETURN_IF_ERROR(submitted);
    if (i == fleet.plans().size() / 2) {
      Say(options, "restarting PostgreSQL");
      MEND_RETURN_IF_ERROR(RestartPostgres(options, db.url()));
      ++restarts;
    }
    if (std::bernoulli_distribution(0.5)(rng)) MEND_RETURN_IF_ERROR(kill());
  }
  for (int k = 0; k < 2 * options.scale; ++k) MEND_RETURN_IF_ERROR(kill());

  ChaosRow row;
  row.faults = kills + restarts + provider_faults;
  std::set<std::string> seen_failed;
  const std::string home = options.work_dir + "/home-check";
  int64_t by_hand = 0;
  MEND_RETURN_IF_ERROR(serve.Finish(home, ids, &row, &seen_failed, &by_hand));
  row.detail = std::to_string(runs) + " runs over " + std::to_string(kReplicas) +
               " replicas on one database, " + std::to_string(kills) + " kill -9 of a replica, " +
               std::to_string(restarts) +
               (options.postgres_restart.empty() ? " server-side close of every connection, "
                                                 : " PostgreSQL restart, ") +
               std::to_string(provider_faults) + " provider faults, " + std::to_string(by_hand) +
               " resumes by hand after 400/401; every accepted run completed once, one lesson per "
               "run whose task failed";
  std::vector<std::string> logs = serve.EventLogs();
  logs.push_back(home + "/events.jsonl");
  MEND_RETURN_IF_ERROR(fleet.Verify(options, home, env, kills, logs, seen_failed, &row));
  if (!row.problems.empty()) row.problems.push_back(serve.LogTails());
  return row;
}

}  // namespace mend::chaos
