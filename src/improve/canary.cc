// The canary's decision rule (mend/improve/canary.h, docs/improve.md "Canary").
#include "mend/improve/canary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "improve/evaluate_check.h"
#include "mend/base/hash.h"
#include "mend/base/json.h"

namespace mend::improve {
namespace {

double LogBeta(double x, double y) { return std::lgamma(x) + std::lgamma(y) - std::lgamma(x + y); }

double CostPerSuccess(const ArmOutcomes& arm) {
  return arm.successes > 0 ? arm.cost_usd / static_cast<double>(arm.successes) : 0.0;
}

Status ValidateArm(const ArmOutcomes& arm, const char* name) {
  if (arm.runs < 0 || arm.successes < 0 || arm.successes > arm.runs) {
    return InvalidArgumentError(std::string(name) + ": successes must be between 0 and runs");
  }
  if (!(arm.cost_usd >= 0.0) || !std::isfinite(arm.cost_usd)) {
    return InvalidArgumentError(std::string(name) + ": cost must be finite and >= 0");
  }
  return OkStatus();
}

std::string Percent(double p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f%%", 100.0 * p);
  return text;
}

std::string Rate(const ArmOutcomes& arm) {
  return std::to_string(arm.runs - arm.successes) + "/" + std::to_string(arm.runs) + " failed";
}

}  // namespace

bool CountRun(const ArmRun& run, ArmOutcomes& arm) {
  switch (run.status) {
    case store::RunStatus::kRunning:
    case store::RunStatus::kWaiting:
      return false;
    case store::RunStatus::kCompleted:
      ++arm.completed;
      if (run.checks_passed) {
        ++arm.successes;
      } else {
        ++arm.checks_failed;
      }
      break;
    case store::RunStatus::kFailed:
      ++(run.error_code == "MEND_RUN_NO_PROGRESS" ? arm.no_progress : arm.failed);
      break;
    case store::RunStatus::kQuarantined:
      ++arm.quarantined;
      break;
  }
  ++arm.runs;
  arm.cost_usd += run.cost_usd;
  arm.steps += run.steps;
  arm.input_tokens += run.input_tokens;
  arm.output_tokens += run.output_tokens;
  return true;
}

Status ValidateCanaryRule(const CanaryRule& rule) {
  if (rule.min_runs < 1) return InvalidArgumentError("canary min_runs must be at least 1");
  if (rule.max_runs < rule.min_runs) {
    return InvalidArgumentError("canary max_runs must be at least min_runs");
  }
  if (!(rule.confidence > 0.5 && rule.confidence < 1.0)) {
    return InvalidArgumentError("canary confidence must be above 0.5 and below 1");
  }
  if (!(rule.max_cost_increase >= 0.0) || !std::isfinite(rule.max_cost_increase)) {
    return InvalidArgumentError("canary max_cost_increase must be finite and >= 0");
  }
  return OkStatus();
}

std::string_view CanaryVerdictName(CanaryVerdict verdict) {
  switch (verdict) {
    case CanaryVerdict::kContinue:
      return "continue";
    case CanaryVerdict::kPromote:
      return "promote";
    case CanaryVerdict::kRollBack:
      return "roll_back";
    case CanaryVerdict::kRollBackUnproven:
      return "roll_back_unproven";
  }
  return "continue";
}

Result<double> ProbabilityGreater(int64_t a_alpha, int64_t a_beta, int64_t b_alpha,
                                  int64_t b_beta) {
  if (a_alpha < 1 || a_beta < 1 || b_alpha < 1 || b_beta < 1) {
    return InvalidArgumentError("beta parameters must be at least 1");
  }
  // P(q_b > q_a) = sum_{i=0}^{b_alpha-1} B(a_alpha+i, a_beta+b_beta) /
  //                ((b_beta+i) B(1+i, b_beta) B(a_alpha, a_beta)), each term in logs.
  const double aa = static_cast<double>(a_alpha), ab = static_cast<double>(a_beta);
  const double bb = static_cast<double>(b_beta);
  const double base = LogBeta(aa, ab);
  double total = 0.0;
  for (int64_t i = 0; i < b_alpha; ++i) {
    const double k = static_cast<double>(i);
    total += std::exp(LogBeta(aa + k, ab + bb) - std::log(bb + k) - LogBeta(1.0 + k, bb) - base);
  }
  return std::min(1.0, std::max(0.0, total));
}

bool TakesProposal(std::string_view proposal_id, std::string_view run_id, double percent) {
  if (!(percent > 0.0)) return false;
  if (percent >= 100.0) return true;
  // The first 8 bytes of SHA-256(proposal id, NUL, run id) as a number in [0, 1).
  std::string key(proposal_id);
  key.push_back('\0');
  key.append(run_id);
  const Sha256Digest digest = Sha256(key);
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | digest[static_cast<size_t>(i)];
  const double unit = static_cast<double>(value >> 11) * 0x1.0p-53;
  return unit * 100.0 < percent;
}

Result<CanaryDecision> DecideCanary(const ArmOutcomes& baseline, const ArmOutcomes& proposal,
                                    const CanaryRule& rule) {
  MEND_RETURN_IF_ERROR(ValidateCanaryRule(rule));
  MEND_RETURN_IF_ERROR(ValidateArm(baseline, "baseline"));
  MEND_RETURN_IF_ERROR(ValidateArm(proposal, "proposal"));
  CanaryDecision decision;
  decision.baseline_cost_per_success = CostPerSuccess(baseline);
  decision.proposal_cost_per_success = CostPerSuccess(proposal);
  // Failure rates with uniform priors: q ~ Beta(1 + failures, 1 + successes).
  MEND_ASSIGN_OR_RETURN(
      decision.probability_worse,
      ProbabilityGreater(1 + baseline.runs - baseline.successes, 1 + baseline.successes,
                         1 + proposal.runs - proposal.successes, 1 + proposal.successes));
  const std::string counts =
      "baseline " + Rate(baseline) + ", proposal " + Rate(proposal) +
      "; P(proposal fails more often) = " + Percent(decision.probability_worse);
  if (baseline.runs < rule.min_runs || proposal.runs < rule.min_runs) {
    decision.verdict = CanaryVerdict::kContinue;
    decision.reason = counts + "; fewer than " + std::to_string(rule.min_runs) +
                      " runs in an arm, so nothing is decided yet";
    return decision;
  }
  if (decision.probability_worse >= rule.confidence) {
    decision.verdict = CanaryVerdict::kRollBack;
    decision.reason = counts + " >= " + Percent(rule.confidence) + ": roll back";
    return decision;
  }
  const double cost_limit = decision.baseline_cost_per_success * (1.0 + rule.max_cost_increase);
  if (baseline.successes > 0 && proposal.successes > 0 &&
      decision.proposal_cost_per_success > cost_limit) {
    char text[160];
    std::snprintf(text, sizeof(text),
                  "; the proposal's cost per success $%.4f is above the baseline's $%.4f x %.2f: "
                  "roll back",
                  decision.proposal_cost_per_success, decision.baseline_cost_per_success,
                  1.0 + rule.max_cost_increase);
    decision.verdict = CanaryVerdict::kRollBack;
    decision.reason = counts + text;
    return decision;
  }
  if (decision.probability_worse <= 1.0 - rule.confidence) {
    decision.verdict = CanaryVerdict::kPromote;
    decision.reason = counts + " <= " + Percent(1.0 - rule.confidence) + ": promote";
    return decision;
  }
  if (baseline.runs >= rule.max_runs && proposal.runs >= rule.max_runs) {
    decision.verdict = CanaryVerdict::kRollBackUnproven;
    decision.reason = counts + "; " + std::to_string(rule.max_runs) +
                      " runs in each arm without a decision: roll back as unproven";
    return decision;
  }
  decision.verdict = CanaryVerdict::kContinue;
  decision.reason = counts + "; not settled yet";
  return decision;
}

CheckVerdict RunCanaryCheck(const std::vector<std::string>& argv, const std::string& cwd,
                            const CanaryCheckInput& input, std::chrono::milliseconds timeout) {
  nlohmann::json j = {{"run_id", input.run_id}, {"arm", input.arm},       {"task", input.task},
                      {"status", input.status}, {"output", input.output}, {"error", input.error}};
  return internal::RunCheck(argv, cwd, DumpJson(j), timeout);
}

}  // namespace mend::improve
