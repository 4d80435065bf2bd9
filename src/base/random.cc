#include "mend/base/random.h"

#include <limits>

namespace mend {

double Random::Uniform01() {
  // The top 53 bits fill a double's mantissa exactly: every value is a multiple of 2^-53.
  return static_cast<double>(Next64() >> 11) * 0x1.0p-53;
}

int64_t Random::UniformInt(int64_t lo, int64_t hi) {
  // Unsigned arithmetic: hi - lo may not fit in int64_t.
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == std::numeric_limits<uint64_t>::max()) return static_cast<int64_t>(Next64());
  const uint64_t n = span + 1;
  // Rejecting the lowest 2^64 mod n values leaves a multiple of n candidates, so x % n is
  // unbiased. (-n) % n is 2^64 mod n in 64-bit arithmetic.
  const uint64_t threshold = (0 - n) % n;
  uint64_t x;
  do {
    x = Next64();
  } while (x < threshold);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + x % n);
}

// std::mt19937_64 is fully specified by the standard, so a seed gives the same sequence on every
// platform and standard library.
SeededRandom::SeededRandom(uint64_t seed) : engine_(seed) {}

uint64_t SeededRandom::Next64() {
  std::lock_guard<std::mutex> guard(mu_);
  return engine_();
}

SystemRandom::SystemRandom() {
  std::random_device device;
  std::seed_seq seq{device(), device(), device(), device()};
  engine_.seed(seq);
}

uint64_t SystemRandom::Next64() {
  std::lock_guard<std::mutex> guard(mu_);
  return engine_();
}

SystemRandom* SystemRandom::Default() {
  static SystemRandom* random = new SystemRandom();
  return random;
}

}  // namespace mend
