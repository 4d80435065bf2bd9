#pragma once

#include "mend/base/clock.h"
#include "mend/base/file_system.h"
#include "mend/base/random.h"

namespace mend {

// The seams through which mend touches the world. Passed explicitly (never a global) so tests can
// substitute an in-memory or fault-injecting filesystem, a manual clock and seeded randomness.
// The pointers are not owned and must outlive every user of the Env.
struct Env {
  FileSystem* fs = nullptr;
  Clock* clock = nullptr;
  Random* random = nullptr;

  // The real filesystem, the system clock and system randomness. For main() and defaults only.
  static Env Default();
};

}  // namespace mend
