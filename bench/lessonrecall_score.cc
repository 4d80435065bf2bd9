#include "bench/lessonrecall_score.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace mend::lessonrecall {
namespace {

constexpr size_t kRanked = 10;

// Python's round(value, 4): printing with four decimals rounds the exact binary value the same
// way, and reading it back gives the double Python's round returns.
double Round4(double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4f", value);
  return std::strtod(buf, nullptr);
}

std::optional<double> Ratio(size_t part, size_t total) {
  if (total == 0) return std::nullopt;
  return Round4(static_cast<double>(part) / static_cast<double>(total));
}

// The first 10 distinct ids, in order (the scorer de-duplicates before cutting).
std::vector<std::string> TopDistinct(const std::vector<std::string>& ranked) {
  std::vector<std::string> out;
  for (const std::string& id : ranked) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  if (out.size() > kRanked) out.resize(kRanked);
  return out;
}

bool AnyIn(const std::vector<std::string>& ranked, size_t k, const std::set<std::string>& ids) {
  for (size_t i = 0; i < std::min(k, ranked.size()); ++i) {
    if (ids.count(ranked[i]) > 0) return true;
  }
  return false;
}

// Sums per kind, in query order, before the division and rounding.
struct Sums {
  size_t n = 0;
  double recall[3] = {0, 0, 0};
  double mrr = 0;
};

void AddPositive(const std::vector<std::string>& ranked, const std::set<std::string>& rel,
                 Sums& sums) {
  static constexpr size_t kKs[3] = {1, 3, 5};
  sums.n += 1;
  for (int i = 0; i < 3; ++i) {
    size_t hits = 0;
    std::set<std::string> top(ranked.begin(),
                              ranked.begin() + static_cast<long>(std::min(kKs[i], ranked.size())));
    for (const std::string& r : rel) hits += top.count(r);
    sums.recall[i] += static_cast<double>(hits) / static_cast<double>(rel.size());
  }
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (rel.count(ranked[i]) > 0) {
      sums.mrr += 1.0 / static_cast<double>(i + 1);
      break;
    }
  }
}

std::string Optional(const std::optional<double>& v) { return v ? PythonFloat(*v) : "None"; }

}  // namespace

std::string PythonFloat(double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4f", value);
  std::string s = buf;
  while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  return s;
}

Scores Score(const std::vector<Query>& queries,
             const std::map<std::string, Prediction>& predictions,
             const std::set<std::string>& lesson_fact_ids) {
  Scores out;
  std::map<std::string, Sums> sums;
  size_t nm_inj = 0, nm_inj_lesson = 0, pos_total = 0, pos_inj = 0, pos_inj_hit5 = 0;
  for (const Query& q : queries) {
    auto it = predictions.find(q.id);
    if (it == predictions.end()) ++out.missing_predictions;
    const Prediction empty;
    const Prediction& p = it == predictions.end() ? empty : it->second;
    const std::vector<std::string> ranked = TopDistinct(p.ranked);
    const std::set<std::string> rel(q.relevant.begin(), q.relevant.end());
    if (rel.empty()) {
      out.no_match_n += 1;
      nm_inj += p.injected;
      nm_inj_lesson += p.injected && AnyIn(ranked, 5, lesson_fact_ids);
      continue;
    }
    pos_total += 1;
    pos_inj += p.injected;
    pos_inj_hit5 += p.injected && AnyIn(ranked, 5, rel);
    AddPositive(ranked, rel, sums[q.kind]);
    AddPositive(ranked, rel, sums["all"]);
  }
  for (const auto& [kind, s] : sums) {
    const double n = static_cast<double>(s.n);
    out.by_kind[kind] = {s.n, Round4(s.recall[0] / n), Round4(s.recall[1] / n),
                         Round4(s.recall[2] / n), Round4(s.mrr / n)};
  }
  out.false_injection_rate = Ratio(nm_inj, out.no_match_n);
  out.false_injection_rate_lesson_facts = Ratio(nm_inj_lesson, out.no_match_n);
  out.injection_rate_positive = Ratio(pos_inj, pos_total);
  out.injected_and_hit_at_5 = Ratio(pos_inj_hit5, pos_total);
  return out;
}

std::string FormatReport(const Scores& scores, std::string_view title) {
  std::string out;
  if (!title.empty()) out.append(title).append("\n");
  char line[160];
  std::snprintf(line, sizeof(line), "%-16s %4s %7s %7s %7s %7s\n", "kind", "n", "R@1", "R@3", "R@5",
                "MRR@10");
  out += line;
  std::vector<std::string> order = {"all", "task_only", "task_with_error", "paraphrase_hard"};
  for (const auto& [kind, unused] : scores.by_kind) {
    if (std::find(order.begin(), order.end(), kind) == order.end()) order.push_back(kind);
  }
  for (const std::string& kind : order) {
    auto it = scores.by_kind.find(kind);
    if (it == scores.by_kind.end()) continue;
    const KindScores& m = it->second;
    std::snprintf(line, sizeof(line), "%-16s %4zu %7.3f %7.3f %7.3f %7.3f\n", kind.c_str(), m.n,
                  m.recall_at_1, m.recall_at_3, m.recall_at_5, m.mrr_at_10);
    out += line;
  }
  out += "false-injection rate: " + Optional(scores.false_injection_rate) +
         " (lesson facts: " + Optional(scores.false_injection_rate_lesson_facts) + ") over " +
         std::to_string(scores.no_match_n) + " no_match queries\n";
  out += "injection rate on positive queries: " + Optional(scores.injection_rate_positive) +
         "; injected & hit@5: " + Optional(scores.injected_and_hit_at_5) + "\n";
  if (scores.missing_predictions > 0) {
    out += "WARNING: " + std::to_string(scores.missing_predictions) +
           " queries without a prediction\n";
  }
  return out;
}

double PickThreshold(const std::vector<Query>& queries, const std::map<std::string, double>& top) {
  std::vector<double> pos, neg;
  for (const Query& q : queries) {
    auto it = top.find(q.id);
    const double s = it == top.end() ? 0.0 : it->second;
    (q.relevant.empty() ? neg : pos).push_back(s);
  }
  std::vector<double> candidates = pos;
  candidates.insert(candidates.end(), neg.begin(), neg.end());
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  double best_score = -1.0, best_t = 0.0;
  if (pos.empty() || neg.empty()) return best_t;
  for (double t : candidates) {
    const double tpr = static_cast<double>(std::count_if(pos.begin(), pos.end(),
                                                         [t](double s) { return s >= t; })) /
                       static_cast<double>(pos.size());
    const double tnr = static_cast<double>(
                           std::count_if(neg.begin(), neg.end(), [t](double s) { return s < t; })) /
                       static_cast<double>(neg.size());
    const double balanced = (tpr + tnr) / 2;
    // Python's max over (balanced, t) tuples: the larger t wins a tie on balanced accuracy.
    if (balanced > best_score || (balanced == best_score && t > best_t)) {
      best_score = balanced;
      best_t = t;
    }
  }
  return best_t;
}

}  // namespace mend::lessonrecall
