#pragma once

// Env, the seams through which mend touches the world (file system, clock, randomness), passed
// explicitly so tests can substitute fakes (docs/testing.md). Env::Default() is for main() only; an
// Env borrows its pointers.

#include "mend/base/clock.h"
#include "mend/base/file_system.h"
#include "mend/base/random.h"

namespace mend {

/// The seams through which mend touches the world. Passed explicitly (never a global) so tests can
/// substitute an in-memory or fault-injecting filesystem, a manual clock and seeded randomness.
/// The pointers are not owned and must outlive every user of the Env.
struct Env {
  FileSystem* fs = nullptr;  ///< every file and directory access
  Clock* clock = nullptr;    ///< every time read and timed wait
  Random* random = nullptr;  ///< ids, jitter and sampling

  /// The real filesystem, the system clock and system randomness. For main() and defaults only.
  static Env Default();
};

}  // namespace mend
