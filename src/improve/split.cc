#include "mend/improve/split.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <set>
#include <string>
#include <utility>

#include "mend/base/hash.h"

namespace mend::improve {
namespace {

bool FractionInRange(double fraction) { return fraction >= 0.0 && fraction < 1.0; }

std::size_t HeldOutCount(std::size_t n, double fraction) {
  if (n == 0 || !(fraction > 0.0)) return 0;
  const double wanted = std::floor(std::min(fraction, 1.0) * static_cast<double>(n) + 0.5);
  return std::min(static_cast<std::size_t>(wanted), n - 1);
}

}  // namespace

Split SplitCases(const std::vector<Case>& cases, double held_out_fraction, std::uint64_t seed) {
  Split split;
  split.held_out_fraction = held_out_fraction;
  split.seed = seed;

  // Ranking by a hash of (seed, id) rather than shuffling the list keeps a case's side stable when
  // the file is reordered, and the index tie-break keeps the result total even for equal ids.
  struct Ranked {
    Sha256Digest key;
    const std::string* id;
    std::size_t index;
  };
  std::vector<Ranked> ranked;
  ranked.reserve(cases.size());
  const std::string prefix = std::to_string(seed) + ":";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ranked.push_back({Sha256(prefix + cases[i].id), &cases[i].id, i});
  }
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.key != b.key) return a.key < b.key;
    if (*a.id != *b.id) return *a.id < *b.id;
    return a.index < b.index;
  });

  std::vector<bool> held(cases.size(), false);
  const std::size_t k = HeldOutCount(cases.size(), held_out_fraction);
  for (std::size_t r = 0; r < k; ++r) held[ranked[r].index] = true;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    (held[i] ? split.held_out : split.training).push_back(cases[i]);
  }
  return split;
}

Result<Split> CheckedSplitCases(const std::vector<Case>& cases, double held_out_fraction,
                                std::uint64_t seed) {
  if (!FractionInRange(held_out_fraction)) {
    return InvalidArgumentError("held-out fraction must be at least 0 and below 1, got " +
                                std::to_string(held_out_fraction));
  }
  std::set<std::string, std::less<>> ids;
  for (const Case& c : cases) {
    if (!ids.insert(c.id).second) {
      return InvalidArgumentError("two cases have the id \"" + c.id + "\"");
    }
  }
  return SplitCases(cases, held_out_fraction, seed);
}

}  // namespace mend::improve
