#include "mend/base/env.h"

namespace mend {

Env Env::Default() {
  Env env;
  env.fs = PosixFileSystem::Default();
  env.clock = SystemClock::Default();
  env.random = SystemRandom::Default();
  return env;
}

}  // namespace mend
