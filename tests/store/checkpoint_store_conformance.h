#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/store/checkpoint_store.h"

namespace mend::store::testing {

// What a store under test is built with: the test's clock, the identity of "this process" on
// "this host", and the liveness probe for pids on this host.
struct StoreTestEnv {
  Clock& clock;
  LeaseHolder local;
  std::function<bool(int64_t pid)> process_alive;
};

// Builds a fresh, empty store for one test. It must keep its data for the store's lifetime.
using StoreFactory = std::function<std::unique_ptr<CheckpointStore>(const StoreTestEnv&)>;

struct StoreFactoryParam {
  std::string name;  // a valid test-name suffix, e.g. "Sqlite"
  StoreFactory factory;
};

inline void PrintTo(const StoreFactoryParam& p, std::ostream* os) { *os << p.name; }

// The conformance suite every CheckpointStore passes. An implementation instantiates it with
//   INSTANTIATE_TEST_SUITE_P(Sqlite, CheckpointStoreConformanceTest,
//                            ::testing::Values(StoreFactoryParam{"Sqlite", factory}),
//                            StoreParamName);
class CheckpointStoreConformanceTest : public ::testing::TestWithParam<StoreFactoryParam> {
 protected:
  void SetUp() override;

  // Creates run `id` with the given task (agent "a", agent_dir "agents/a").
  void MakeRun(const std::string& id, const std::string& task = "do it");
  Lease MustClaim(const std::string& id, const LeaseHolder& holder);
  Lease MustClaim(const std::string& id) { return MustClaim(id, local_); }
  static Checkpoint Cp(int64_t step, std::vector<std::string> messages, std::string state);
  void MarkDead(int64_t pid);

  ManualClock clock_;
  LeaseHolder local_{"me", "host-a", "boot-1", 100};
  std::unique_ptr<CheckpointStore> store_;

 private:
  std::mutex mu_;
  std::set<int64_t> dead_pids_;
};

inline std::string StoreParamName(const ::testing::TestParamInfo<StoreFactoryParam>& info) {
  return info.param.name;
}

}  // namespace mend::store::testing
