#include "tests/chaos/chaos.h"

namespace mend::chaos {

Result<ChaosRow> RunPowerCutChaos(const ChaosOptions&) {
  return UnimplementedError("not written yet");
}

}  // namespace mend::chaos
