#pragma once

#include "mend/base/status.h"

namespace mend::app {
struct Runtime;
namespace internal {

// Builds runtime.lessons from the reflexion.* keys (OpenRuntime calls it once the provider, the
// fact store, the events and the metrics exist).
Status OpenLessons(Runtime& runtime);

}  // namespace internal
}  // namespace mend::app
