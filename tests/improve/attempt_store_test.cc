// The local attempt store (the audit folders of one home) through the conformance suite.
#include <memory>
#include <string>
#include <vector>

#include "tests/improve/attempt_store_conformance.h"

namespace mend::improve::testing {
namespace {

class LocalHarness : public AttemptStoreHarness {
 public:
  Result<std::unique_ptr<AttemptStore>> Open(FileSystem& fs, const std::string& home,
                                             const std::string& /*host*/) override {
    return OpenLocalAttemptStore(fs, home);
  }
};

}  // namespace

INSTANTIATE_TEST_SUITE_P(Local, AttemptStoreConformanceTest,
                         ::testing::Values(AttemptStoreParam{
                             "Local", [] { return std::make_unique<LocalHarness>(); }}),
                         AttemptStoreParamName);

}  // namespace mend::improve::testing
