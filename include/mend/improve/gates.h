#pragma once

// The acceptance gates of one candidate (docs/improve.md, "Gates"): the candidate and the baseline
// each ran every case K times; the gates compare the two arms case by case and on cost per
// successful run. Decide applies them.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"

namespace mend::improve {

/// One scored run: the check command's verdict plus what the run cost.
struct RunScore {
  bool pass = false;      ///< the check's verdict
  double score = 0.0;     ///< reported only; the gates decide on `pass`
  double cost_usd = 0.0;  ///< what the run cost
};

/// Every run of one case in both arms. Both arms hold the same number of runs K >= 1 (K may differ
/// from case to case).
struct CaseScores {
  std::string case_id;              ///< the case
  bool held_out = false;            ///< a case only the gates see
  std::vector<RunScore> baseline;   ///< the K runs of the unchanged agent
  std::vector<RunScore> candidate;  ///< the K runs of the candidate
};

/// The limits the gates apply.
struct GateOptions {
  /// Cost per successful run may grow to baseline × (1 + max_cost_increase). Finite and >= 0.
  double max_cost_increase = 0.5;
  /// Fewer runs per arm than this is kInvalidArgument: with one run, one noisy result decides.
  int min_repeats = 2;
};

/// What the gates decided about a candidate.
enum class GateOutcome { kProposal, kNoImprovement, kRejected };

/// The gate that refused a candidate.
enum class Gate {
  kWorseCase,  ///< some case (training or held-out) got worse
  kCost,       ///< cost per successful run above the limit
};

/// How the candidate did on one case against the baseline.
enum class CaseVerdict { kBetter, kWorse, kSame };

///@{
/// "proposal", "no_improvement", "rejected" / "worse_case", "cost" / "better", "worse", "same":
/// stable names for the audit log and the card.
std::string_view GateOutcomeName(GateOutcome outcome);
std::string_view GateName(Gate gate);
std::string_view CaseVerdictName(CaseVerdict verdict);
///@}

/// The repeat rule: a difference counts only when it is at least a strict majority of the runs.
/// Returns floor(runs / 2) + 1 for runs >= 1.
int VerdictMargin(int runs);

/// The verdict on one case.
struct CaseResult {
  std::string case_id;                       ///< the case
  bool held_out = false;                     ///< a case only the gates see
  int runs = 0;                              ///< K, per arm
  int baseline_passes = 0;                   ///< passing runs of the baseline
  int candidate_passes = 0;                  ///< passing runs of the candidate
  CaseVerdict verdict = CaseVerdict::kSame;  ///< by the repeat rule (VerdictMargin)
};

/// One arm's cost over every case (training and held-out).
struct ArmCost {
  double total_usd = 0.0;  ///< spent by every run
  int runs = 0;            ///< runs of the arm
  int passes = 0;          ///< passing runs
  /// total_usd / passes; std::nullopt when no run passed (the figure is undefined, not zero).
  std::optional<double> per_success_usd;
};

/// What Decide concluded about one candidate.
struct GateDecision {
  GateOutcome outcome = GateOutcome::kNoImprovement;  ///< the decision
  std::optional<Gate> refused_by;                     ///< set exactly when outcome is kRejected
  std::string reason;                                 ///< one sentence for a person; never parse it
  std::vector<CaseResult> cases;                      ///< in input order
  ArmCost baseline_cost;                              ///< the baseline arm's cost
  ArmCost candidate_cost;                             ///< the candidate arm's cost
  double max_cost_increase = 0.5;                     ///< the option the decision used
  /// baseline per-success cost × (1 + max_cost_increase); std::nullopt when the baseline never
  /// passed, so any candidate cost is within the limit.
  std::optional<double> cost_limit_usd;
};

/// Applies the gates in this order: any case worse → kRejected (kWorseCase, the reason names every
/// worse case); no training case better → kNoImprovement; candidate cost per successful run above
/// the limit → kRejected (kCost); otherwise kProposal. Costs within a relative 1e-9 of the limit
/// count as at the limit (rounding in the sums must not refuse a candidate exactly at it).
/// kInvalidArgument for: no case, an empty or repeated case id, an arm with fewer than
/// options.min_repeats runs or arms of different sizes, a negative or non-finite cost or score,
/// a max_cost_increase that is negative or not finite, min_repeats < 1. Pure and thread-safe.
Result<GateDecision> Decide(const std::vector<CaseScores>& cases, const GateOptions& options);

}  // namespace mend::improve
