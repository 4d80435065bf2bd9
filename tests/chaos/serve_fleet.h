#pragma once

// `mend serve` replicas for the chaos scenarios: started with their output appended to a log (a
// pipe nobody reads could fill and stall them), killed with SIGKILL and started again, and asked
// over HTTP to start runs.

#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mend/base/result.h"
#include "tests/chaos/chaos.h"
#include "tests/e2e/child_process.h"

namespace mend::chaos {

class ServeFleet {
 public:
  // `count` replicas; replica k has home `work_dir`/`home_prefix`k (or `work_dir`/home for
  // every replica when `shared_home`), its log `work_dir`/serve-k.log, and `env`.
  ServeFleet(const ChaosOptions& options, std::vector<std::string> env, int count,
             bool shared_home);
  ~ServeFleet();
  ServeFleet(const ServeFleet&) = delete;
  ServeFleet& operator=(const ServeFleet&) = delete;

  int count() const { return static_cast<int>(replicas_.size()); }
  std::string Home(int k) const;
  // Every home's events.jsonl.
  std::vector<std::string> EventLogs() const;

  // Starts replica k and waits (polling its log) until it listens.
  Status Start(int k);
  // SIGKILL to replica k, reaped; then started again. Returns whether it was alive.
  Result<bool> KillAndRestart(int k);
  // SIGTERM to every replica, then waits for each to stop.
  Status StopAll();
  // The end of a served scenario: waits (through `home`, with the replicas' `env`) until the
  // replicas have finished every run of `ids` or failed it for good, stops them, and settles
  // what is left as Settle does. A deadline passed is a problem in `row`, not an error.
  Status Finish(const std::string& home, const std::vector<std::string>& ids, ChaosRow* row,
                std::set<std::string>* seen_failed, int64_t* resumed_by_hand);

  // POST /api/v1/runs to replica k. OK when the run was accepted (202) or already exists (409);
  // kUnavailable when the replica did not answer (it may have been killed meanwhile).
  Status Submit(int k, const std::string& agent, const std::string& task, const std::string& id);

  // The last lines of every replica's log, for a problem report.
  std::string LogTails() const;

 private:
  struct Replica {
    std::unique_ptr<testing::ChildProcess> process;
    int port = 0;
    size_t log_offset = 0;  // where the current process's output begins
  };
  std::string Log(int k) const;

  const ChaosOptions& options_;
  std::vector<std::string> env_;
  bool shared_home_;
  std::vector<Replica> replicas_;
};

}  // namespace mend::chaos
