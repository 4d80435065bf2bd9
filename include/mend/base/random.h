#pragma once

// The randomness seam: Random (jitter, ids, sampling), SeededRandom for reproducible tests and
// SystemRandom for production. Thread-safe.

#include <cstdint>
#include <memory>
#include <mutex>
#include <random>

namespace mend {

/// A source of randomness (jitter, ids, sampling). Thread-safe.
class Random {
 public:
  virtual ~Random() = default;
  /// The next 64 random bits.
  virtual uint64_t Next64() = 0;
  /// Uniform in [0, 1).
  double Uniform01();
  /// Uniform in [lo, hi] (inclusive); lo <= hi.
  int64_t UniformInt(int64_t lo, int64_t hi);
};

/// Deterministic for a given seed: the same seed gives the same sequence on every platform.
class SeededRandom final : public Random {
 public:
  /// The sequence of `seed`.
  explicit SeededRandom(uint64_t seed);
  uint64_t Next64() override;

 private:
  std::mutex mu_;
  std::mt19937_64 engine_;
};

/// Seeded from std::random_device; for production use.
class SystemRandom final : public Random {
 public:
  SystemRandom();
  uint64_t Next64() override;
  /// A process-wide instance; only main() and defaults should use it.
  static SystemRandom* Default();

 private:
  std::mutex mu_;
  std::mt19937_64 engine_;
};

}  // namespace mend
