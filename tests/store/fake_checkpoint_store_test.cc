// Keeps the in-memory store that the agent tests use honest: it passes the same conformance suite
// as the SQLite store.

#include "tests/support/fake_checkpoint_store.h"

#include <memory>

#include "tests/store/checkpoint_store_conformance.h"

namespace mend::store {
namespace {

using ::mend::store::testing::CheckpointStoreConformanceTest;
using ::mend::store::testing::StoreFactoryParam;
using ::mend::store::testing::StoreTestEnv;

std::unique_ptr<CheckpointStore> MakeFakeStore(const StoreTestEnv& env) {
  return std::make_unique<::mend::testing::FakeCheckpointStore>(env.clock, env.local,
                                                                env.process_alive);
}

INSTANTIATE_TEST_SUITE_P(Fake, CheckpointStoreConformanceTest,
                         ::testing::Values(StoreFactoryParam{"Fake", MakeFakeStore}),
                         testing::StoreParamName);

}  // namespace
}  // namespace mend::store
