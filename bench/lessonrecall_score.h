#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

// The LessonRecall metrics, computed exactly as the evaluation's reference scorer (score.py in
// the evaluation folder) computes them, including its rounding, so the figures printed here and
// the scorer's agree to the last digit. Pure functions; thread-safe.
namespace mend::lessonrecall {

struct Query {
  std::string id;
  std::string kind;  // task_only, task_with_error, paraphrase_hard, no_match
  std::string text;
  std::vector<std::string> relevant;  // empty for no_match
};

// What a system answered for one query: fact ids best first and whether it would inject.
struct Prediction {
  std::vector<std::string> ranked;
  bool injected = false;
};

struct KindScores {
  size_t n = 0;
  double recall_at_1 = 0;  // all values rounded to 4 decimals, as the scorer does
  double recall_at_3 = 0;
  double recall_at_5 = 0;
  double mrr_at_10 = 0;
};

struct Scores {
  std::map<std::string, KindScores> by_kind;  // per kind and "all"
  std::optional<double> false_injection_rate;
  std::optional<double> false_injection_rate_lesson_facts;
  size_t no_match_n = 0;
  std::optional<double> injection_rate_positive;
  std::optional<double> injected_and_hit_at_5;
  size_t missing_predictions = 0;
};

// Scores `predictions` (by query id; a query without one counts as an empty ranking that is not
// injected). `lesson_fact_ids` are the ids of lesson-category facts (the FIR variant).
Scores Score(const std::vector<Query>& queries,
             const std::map<std::string, Prediction>& predictions,
             const std::set<std::string>& lesson_fact_ids);

// The scorer's text report: the per-kind table, the FIR line and the injection line, each
// followed by a newline; `title` (when not empty) comes first.
std::string FormatReport(const Scores& scores, std::string_view title);

// `value` rounded to 4 decimals and printed the way Python prints a float ("1.0", "0.5652").
std::string PythonFloat(double value);

// The injection threshold the baseline picks on dev: over every distinct top score `t`, the one
// maximising (share of positive top scores >= t + share of no_match top scores < t) / 2, the
// larger `t` on ties. Queries without results count as a top score of 0.
double PickThreshold(const std::vector<Query>& queries, const std::map<std::string, double>& top);

}  // namespace mend::lessonrecall
