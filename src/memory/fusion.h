#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace mend::memory {

// One ranked list of candidate ids (best first) and the weight of its votes.
struct RankedList {
  std::vector<std::string> ids;
  double weight = 1.0;
};

struct FusedScore {
  std::string id;
  double score = 0;
};

// Weighted reciprocal-rank fusion: score(id) = Σ weight / (k + rank), rank starting at 1. Best
// first; ties broken by id so the order is deterministic.
std::vector<FusedScore> FuseReciprocalRank(const std::vector<RankedList>& lists, double k = 60);

// Maximal marginal relevance: picks up to `n` of `candidates` (relevance in [0, 1], best first),
// each maximising lambda × relevance − (1 − lambda) × max similarity to those already picked.
// `similarity(i, j)` compares candidates i and j, in [0, 1]. Returns indices into `candidates`.
std::vector<size_t> SelectDiverse(const std::vector<double>& relevance, size_t n, double lambda,
                                  const std::function<double(size_t, size_t)>& similarity);

}  // namespace mend::memory
