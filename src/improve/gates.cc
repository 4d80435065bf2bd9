#include "mend/improve/gates.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "mend/base/status.h"

namespace mend::improve {
namespace {

// Rounding in sums of many small costs must not turn "exactly at the limit" into "above it".
constexpr double kCostTolerance = 1e-9;

std::string Usd(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "$%.6g", value);
  return buffer;
}

Status CheckArm(const CaseScores& c, const std::vector<RunScore>& arm, std::string_view name,
                const GateOptions& options) {
  if (static_cast<int>(arm.size()) < options.min_repeats) {
    return InvalidArgumentError("case \"" + c.case_id + "\": the " + std::string(name) + " has " +
                                std::to_string(arm.size()) + " runs, at least " +
                                std::to_string(options.min_repeats) + " are required");
  }
  for (const RunScore& run : arm) {
    if (!std::isfinite(run.cost_usd) || run.cost_usd < 0 || !std::isfinite(run.score)) {
      return InvalidArgumentError("case \"" + c.case_id + "\": a " + std::string(name) +
                                  " run has a negative or non-finite cost or score");
    }
  }
  return OkStatus();
}

Status Validate(const std::vector<CaseScores>& cases, const GateOptions& options) {
  if (!std::isfinite(options.max_cost_increase) || options.max_cost_increase < 0) {
    return InvalidArgumentError("max cost increase must be a finite number >= 0");
  }
  if (options.min_repeats < 1) return InvalidArgumentError("min repeats must be at least 1");
  if (cases.empty()) return InvalidArgumentError("no case to decide on");
  std::set<std::string> ids;
  for (const CaseScores& c : cases) {
    if (c.case_id.empty()) return InvalidArgumentError("a case has an empty id");
    if (!ids.insert(c.case_id).second) {
      return InvalidArgumentError("two cases have the id \"" + c.case_id + "\"");
    }
    MEND_RETURN_IF_ERROR(CheckArm(c, c.baseline, "baseline", options));
    MEND_RETURN_IF_ERROR(CheckArm(c, c.candidate, "candidate", options));
    if (c.baseline.size() != c.candidate.size()) {
      return InvalidArgumentError("case \"" + c.case_id + "\": the baseline has " +
                                  std::to_string(c.baseline.size()) + " runs, the candidate " +
                                  std::to_string(c.candidate.size()));
    }
  }
  return OkStatus();
}

int Passes(const std::vector<RunScore>& arm) {
  int passes = 0;
  for (const RunScore& run : arm) passes += run.pass ? 1 : 0;
  return passes;
}

void AddToCost(const std::vector<RunScore>& arm, ArmCost& cost) {
  for (const RunScore& run : arm) {
    cost.total_usd += run.cost_usd;
    ++cost.runs;
    cost.passes += run.pass ? 1 : 0;
  }
}

void FinishCost(ArmCost& cost) {
  if (cost.passes > 0) cost.per_success_usd = cost.total_usd / cost.passes;
}

CaseResult Judge(const CaseScores& c) {
  CaseResult result;
  result.case_id = c.case_id;
  result.held_out = c.held_out;
  result.runs = static_cast<int>(c.baseline.size());
  result.baseline_passes = Passes(c.baseline);
  result.candidate_passes = Passes(c.candidate);
  const int margin = VerdictMargin(result.runs);
  if (result.candidate_passes - result.baseline_passes >= margin) {
    result.verdict = CaseVerdict::kBetter;
  } else if (result.baseline_passes - result.candidate_passes >= margin) {
    result.verdict = CaseVerdict::kWorse;
  }
  return result;
}

// Fills outcome, refused_by and reason from the per-case verdicts and the costs.
void ApplyGates(GateDecision& d) {
  std::string worse;
  int better_training = 0;
  for (const CaseResult& c : d.cases) {
    if (c.verdict == CaseVerdict::kWorse) {
      worse += (worse.empty() ? "" : ", ") + c.case_id + (c.held_out ? " (held-out)" : "");
    }
    if (c.verdict == CaseVerdict::kBetter && !c.held_out) ++better_training;
  }
  if (!worse.empty()) {
    d.outcome = GateOutcome::kRejected;
    d.refused_by = Gate::kWorseCase;
    d.reason = "worse on " + worse;
    return;
  }
  if (better_training == 0) {
    d.outcome = GateOutcome::kNoImprovement;
    d.reason = "no training case is better";
    return;
  }
  // A better training case has at least one passing candidate run, so its cost is defined.
  const double candidate = d.candidate_cost.per_success_usd.value_or(0.0);
  if (d.cost_limit_usd.has_value() &&
      candidate > *d.cost_limit_usd + kCostTolerance * std::max(1.0, *d.cost_limit_usd)) {
    d.outcome = GateOutcome::kRejected;
    d.refused_by = Gate::kCost;
    d.reason = "cost per successful run " + Usd(candidate) + " is above the limit " +
               Usd(*d.cost_limit_usd);
    return;
  }
  d.outcome = GateOutcome::kProposal;
  d.reason = std::to_string(better_training) + " training case" +
             (better_training == 1 ? " is" : "s are") + " better and none is worse";
}

}  // namespace

std::string_view GateOutcomeName(GateOutcome outcome) {
  switch (outcome) {
    case GateOutcome::kProposal:
      return "proposal";
    case GateOutcome::kNoImprovement:
      return "no_improvement";
    case GateOutcome::kRejected:
      return "rejected";
  }
  return "unknown";
}

std::string_view GateName(Gate gate) {
  switch (gate) {
    case Gate::kWorseCase:
      return "worse_case";
    case Gate::kCost:
      return "cost";
  }
  return "unknown";
}

std::string_view CaseVerdictName(CaseVerdict verdict) {
  switch (verdict) {
    case CaseVerdict::kBetter:
      return "better";
    case CaseVerdict::kWorse:
      return "worse";
    case CaseVerdict::kSame:
      return "same";
  }
  return "unknown";
}

int VerdictMargin(int runs) { return runs / 2 + 1; }

Result<GateDecision> Decide(const std::vector<CaseScores>& cases, const GateOptions& options) {
  MEND_RETURN_IF_ERROR(Validate(cases, options));
  GateDecision d;
  d.max_cost_increase = options.max_cost_increase;
  for (const CaseScores& c : cases) {
    d.cases.push_back(Judge(c));
    AddToCost(c.baseline, d.baseline_cost);
    AddToCost(c.candidate, d.candidate_cost);
  }
  FinishCost(d.baseline_cost);
  FinishCost(d.candidate_cost);
  if (d.baseline_cost.per_success_usd.has_value()) {
    d.cost_limit_usd = *d.baseline_cost.per_success_usd * (1.0 + options.max_cost_increase);
  }
  ApplyGates(d);
  return d;
}

}  // namespace mend::improve
