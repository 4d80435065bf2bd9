#include "memory/fusion.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace mend::memory {

std::vector<FusedScore> FuseReciprocalRank(const std::vector<RankedList>& lists, double k) {
  std::unordered_map<std::string, double> scores;
  for (const RankedList& list : lists) {
    // An id listed twice in one list votes once, at its best rank.
    std::unordered_set<std::string_view> seen;
    for (size_t i = 0; i < list.ids.size(); ++i) {
      if (!seen.insert(list.ids[i]).second) continue;
      scores[list.ids[i]] += list.weight / (k + static_cast<double>(i + 1));
    }
  }
  std::vector<FusedScore> fused;
  fused.reserve(scores.size());
  for (auto& [id, score] : scores) fused.push_back({id, score});
  std::sort(fused.begin(), fused.end(), [](const FusedScore& a, const FusedScore& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
  return fused;
}

std::vector<size_t> SelectDiverse(const std::vector<double>& relevance, size_t n, double lambda,
                                  const std::function<double(size_t, size_t)>& similarity) {
  size_t count = relevance.size();
  std::vector<size_t> picked;
  std::vector<bool> taken(count, false);
  // Highest similarity of each candidate to anything picked so far, updated after each pick so the
  // whole selection costs O(n × count) similarity calls.
  std::vector<double> max_sim(count, 0.0);
  size_t limit = std::min(n, count);
  while (picked.size() < limit) {
    size_t best = count;
    double best_score = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < count; ++i) {
      if (taken[i]) continue;
      double score = lambda * relevance[i] - (1.0 - lambda) * max_sim[i];
      // Strictly greater: among equal scores the earlier (better ranked) candidate wins.
      if (best == count || score > best_score) {
        best = i;
        best_score = score;
      }
    }
    taken[best] = true;
    picked.push_back(best);
    if (picked.size() == limit) break;
    for (size_t i = 0; i < count; ++i) {
      if (!taken[i]) max_sim[i] = std::max(max_sim[i], similarity(best, i));
    }
  }
  return picked;
}

}  // namespace mend::memory
