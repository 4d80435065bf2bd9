#include "tests/chaos/chaos.h"

namespace mend::chaos {

Result<ChaosRow> RunPostgresChaos(const ChaosOptions&) {
  return UnimplementedError("not written yet");
}

}  // namespace mend::chaos
