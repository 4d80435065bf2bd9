#pragma once

// The decision rule of a canary (docs/improve.md, "Canary"): live runs of an
// agent split between its current instructions (the baseline arm) and an accepted proposal, and a
// sequential, beta-binomial comparison of their failure rates and costs that says when to promote
// the proposal, roll it back, or keep going. This header holds the rule only: pure functions of the
// recorded outcomes, so a decision can be recomputed from them (as improve's gates can).

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"
#include "mend/improve/evaluate.h"
#include "mend/store/run_record.h"

namespace mend::improve {

/// What one arm's runs came to.
struct ArmOutcomes {
  int64_t runs = 0;           ///< runs that ended (completed, failed, stopped or quarantined)
  int64_t successes = 0;      ///< of them, runs that succeeded; at most `runs`
  double cost_usd = 0.0;      ///< what all of them cost
  int64_t completed = 0;      ///< runs that completed (a success unless a check failed)
  int64_t checks_failed = 0;  ///< completed runs whose checks did not pass
  int64_t failed = 0;         ///< runs that failed, but for the progress guard's stops
  int64_t no_progress = 0;    ///< runs the progress guard stopped (MEND_RUN_NO_PROGRESS)
  int64_t quarantined = 0;    ///< runs recovery gave up on
  int64_t steps = 0;          ///< model turns, over every counted run
  int64_t input_tokens = 0;   ///< over every counted run
  int64_t output_tokens = 0;  ///< over every counted run
};

/// One run of an arm, as its outcome counts.
struct ArmRun {
  store::RunStatus status = store::RunStatus::kRunning;  ///< its status now
  std::string error_code;     ///< RunError::code of its last error, e.g. "MEND_RUN_NO_PROGRESS"
  bool checks_passed = true;  ///< the agent's checks (and the canary's) passed; true without any
  double cost_usd = 0.0;      ///< what it cost
  int64_t steps = 0;          ///< model turns taken
  int64_t input_tokens = 0;   ///< over the whole run
  int64_t output_tokens = 0;  ///< over the whole run
  /// Field by field.
  friend bool operator==(const ArmRun&, const ArmRun&) = default;
};

/// Adds `run` to `arm` and returns true when the run has ended; a running or waiting run does not
/// count yet (false, `arm` unchanged). A run succeeds when it completed and its checks passed; a
/// failed run whose error is MEND_RUN_NO_PROGRESS counts as stopped by the progress guard.
bool CountRun(const ArmRun& run, ArmOutcomes& arm);

/// The rule's settings (the improve.canary.* keys).
struct CanaryRule {
  int64_t min_runs = 20;     ///< per arm, before any decision
  int64_t max_runs = 200;    ///< per arm; reached undecided: rolled back as unproven
  double confidence = 0.95;  ///< posterior probability a decision needs, in (0.5, 1)
  /// The proposal's cost per success may be the baseline's × (1 + this) (improve's cost gate,
  /// GateOptions::max_cost_increase).
  double max_cost_increase = 0.5;
};

/// kInvalidArgument naming the first setting out of range.
Status ValidateCanaryRule(const CanaryRule& rule);

/// What the rule says to do.
enum class CanaryVerdict {
  kContinue,          ///< not settled: keep assigning runs to both arms
  kPromote,           ///< the proposal is at least as good, with the rule's confidence
  kRollBack,          ///< the proposal is worse (failure rate, or cost per success)
  kRollBackUnproven,  ///< max_runs reached without either
};

/// "continue", "promote", "roll_back", "roll_back_unproven".
std::string_view CanaryVerdictName(CanaryVerdict verdict);

/// A decision and what it rests on.
struct CanaryDecision {
  CanaryVerdict verdict = CanaryVerdict::kContinue;  ///< what to do
  /// P(the proposal's failure rate > the baseline's | outcomes), with uniform Beta(1, 1) priors.
  double probability_worse = 0.5;
  /// The baseline's cost per success; 0 without a success.
  double baseline_cost_per_success = 0.0;
  /// The proposal's cost per success; 0 without a success.
  double proposal_cost_per_success = 0.0;
  std::string reason;  ///< one sentence, for the card, the event and the audit line
};

/// P(q_b > q_a) where q_a ~ Beta(a_alpha, a_beta) and q_b ~ Beta(b_alpha, b_beta), all parameters
/// positive integers: the closed form (a sum over b_alpha terms of log-beta functions), exact to
/// rounding. kInvalidArgument for a parameter below 1.
Result<double> ProbabilityGreater(int64_t a_alpha, int64_t a_beta, int64_t b_alpha, int64_t b_beta);

/// The arm of a canaried agent's new run: true (the proposal) for `percent` percent of run ids,
/// false (the baseline) for the rest. Decided by a hash of the proposal id and the run id only, so
/// a replica, a resume and a rerun of the same run agree, and the runs a proposal takes do not
/// depend on another proposal's. `percent` is clamped to [0, 100]: 0 takes no run, 100 every run.
bool TakesProposal(std::string_view proposal_id, std::string_view run_id, double percent);

/// The rule, in this order: below min_runs in either arm, continue; roll back when the proposal's
/// failure rate is worse with posterior probability >= confidence, or when both arms have
/// successes and the proposal's cost per success exceeds the baseline's × (1 +
/// max_cost_increase); promote when it is not worse (P(worse) <= 1 - confidence); at max_runs in
/// both arms, roll back as unproven; otherwise continue. kInvalidArgument for an invalid rule or
/// outcomes (successes above runs, a negative count or cost).
Result<CanaryDecision> DecideCanary(const ArmOutcomes& baseline, const ArmOutcomes& proposal,
                                    const CanaryRule& rule);

/// A live run as an agent folder's `[canary] check` command reads it on stdin (improve's check
/// protocol, docs/improve.md "Check command", without a case).
struct CanaryCheckInput {
  std::string run_id;  ///< the run
  std::string arm;     ///< "baseline" or the proposal id
  std::string task;    ///< what the run was asked
  std::string status;  ///< "completed" or "failed"
  std::string output;  ///< the final answer; "" when it failed
  std::string error;   ///< why it failed; "" when it completed
};

/// Runs the `[canary] check` command `argv` in `cwd` on `input` (a JSON object on stdin), killed
/// after `timeout`, and reads its verdict as improve reads a case's (CheckVerdict: a timeout, a
/// non-zero exit or an unreadable verdict is a failed one, with `error` saying why).
CheckVerdict RunCanaryCheck(const std::vector<std::string>& argv, const std::string& cwd,
                            const CanaryCheckInput& input, std::chrono::milliseconds timeout);

}  // namespace mend::improve
