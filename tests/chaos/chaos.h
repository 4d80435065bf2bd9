#pragma once

// mend_chaos: faults injected into real processes and a real disk image, with a tally of what
// survived. Each scenario returns one row of the table scripts/chaos prints.

#include <cstdint>
#include <string>
#include <vector>

#include "mend/base/result.h"

namespace mend::chaos {

struct ChaosOptions {
  uint32_t seed = 1;
  // 1 is the short configuration CI runs; larger values (up to 100) scale the number of runs,
  // jobs and cuts.
  int scale = 1;
  std::string work_dir;  // an empty 0700 directory the scenario may fill
  std::string mend_binary;
  std::string fake_server_binary;
  std::string postgres_url;      // empty: the PostgreSQL scenario is skipped
  std::string postgres_restart;  // a command that restarts that server in place; may be empty
  bool verbose = false;          // progress lines on stderr
};

// One row of the table. `lost` and `duplicated` must end at 0; every item counted in them is
// described in `problems`.
struct ChaosRow {
  std::string scenario;
  int64_t faults = 0;          // faults injected (kills, cuts, failed calls, provider errors...)
  int64_t runs_completed = 0;  // runs that ended completed (0 where the scenario has no runs)
  int64_t lessons_stored = 0;  // lessons (or queued jobs) found durable at the end
  int64_t lost = 0;            // acknowledged work missing at the end
  int64_t duplicated = 0;      // work found twice, or done again where mend promises once
  std::string detail;          // one short line: what was checked
  std::vector<std::string> problems;
};

// The scenarios. Each returns an error only when it could not run (a missing binary, a server that
// did not start); what the faults did is in the row.
Result<ChaosRow> RunProviderChaos(const ChaosOptions& options);
Result<ChaosRow> RunKillChaos(const ChaosOptions& options);
Result<ChaosRow> RunServeKillChaos(const ChaosOptions& options);
Result<ChaosRow> RunPowerCutChaos(const ChaosOptions& options);
Result<ChaosRow> RunPostgresChaos(const ChaosOptions& options);
Result<ChaosRow> RunProxyChaos(const ChaosOptions& options);
Result<ChaosRow> RunMcpChaos(const ChaosOptions& options);

}  // namespace mend::chaos
