#include "tests/chaos/chaos.h"

namespace mend::chaos {

Result<ChaosRow> RunServeKillChaos(const ChaosOptions&) {
  return UnimplementedError("not written yet");
}

}  // namespace mend::chaos
