#include "mend/base/random.h"

#include <gtest/gtest.h>

#include <deque>
#include <limits>
#include <set>

#include "mend/base/env.h"

namespace mend {
namespace {

TEST(SeededRandomTest, SameSeedGivesTheSameSequence) {
  SeededRandom a(42);
  SeededRandom b(42);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.Next64(), b.Next64());
}

TEST(SeededRandomTest, DifferentSeedsGiveDifferentSequences) {
  SeededRandom a(1);
  SeededRandom b(2);
  EXPECT_NE(a.Next64(), b.Next64());
}

TEST(SeededRandomTest, SequenceIsTheStandardMersenneTwister) {
  // The C++ standard fixes the 10000th output of mt19937_64 with its default seed 5489.
  SeededRandom r(5489);
  uint64_t v = 0;
  for (int i = 0; i < 10000; ++i) v = r.Next64();
  EXPECT_EQ(v, 9981545732273789042ull);
}

TEST(RandomTest, UniformIntStaysInBoundsAndCoversThem) {
  SeededRandom r(7);
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const int64_t v = r.UniformInt(-3, 3);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(r.UniformInt(5, 5), 5);
}

TEST(RandomTest, UniformIntHandlesTheFullRange) {
  SeededRandom r(9);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  bool negative = false;
  bool positive = false;
  for (int i = 0; i < 64; ++i) {
    const int64_t v = r.UniformInt(kMin, kMax);
    negative |= v < 0;
    positive |= v > 0;
  }
  EXPECT_TRUE(negative && positive);
  const int64_t near_max = r.UniformInt(kMax - 1, kMax);
  EXPECT_GE(near_max, kMax - 1);
}

// Returns scripted values, to check which raw draws UniformInt rejects.
class ScriptedRandom final : public Random {
 public:
  explicit ScriptedRandom(std::deque<uint64_t> values) : values_(std::move(values)) {}
  uint64_t Next64() override {
    const uint64_t v = values_.front();
    values_.pop_front();
    return v;
  }
  size_t left() const { return values_.size(); }

 private:
  std::deque<uint64_t> values_;
};

TEST(RandomTest, UniformIntRejectsTheBiasedLowDraws) {
  // 2^64 mod 3 == 1: the draw 0 would make residue 0 more likely than the others.
  ScriptedRandom r({0, 5, 99});
  EXPECT_EQ(r.UniformInt(10, 12), 12);  // 5 % 3 == 2
  EXPECT_EQ(r.left(), 1u);
}

TEST(RandomTest, Uniform01IsInTheHalfOpenUnitInterval) {
  ScriptedRandom edges({0, std::numeric_limits<uint64_t>::max()});
  EXPECT_EQ(edges.Uniform01(), 0.0);
  EXPECT_LT(edges.Uniform01(), 1.0);
  SeededRandom r(3);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    const double u = r.Uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

TEST(SystemRandomTest, DefaultIsASingletonThatProducesValues) {
  SystemRandom* r = SystemRandom::Default();
  EXPECT_EQ(r, SystemRandom::Default());
  EXPECT_NE(r->Next64(), r->Next64());  // Equal with probability 2^-64.
}

TEST(EnvTest, DefaultWiresTheRealSeams) {
  Env env = Env::Default();
  EXPECT_EQ(env.fs, PosixFileSystem::Default());
  EXPECT_EQ(env.clock, SystemClock::Default());
  EXPECT_EQ(env.random, SystemRandom::Default());
}

}  // namespace
}  // namespace mend
