// Checking a recorded decision against what its recorded scores give (audit.h,
// docs/improve.md "Audit folder"): every field decision.json holds is recomputed and compared, so
// an edit of scores.jsonl or decision.json that changes any of them is found and named.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "mend/base/json.h"
#include "mend/improve/audit.h"

namespace mend::improve {
namespace {

// Sums of the same costs in the same order agree exactly; the tolerance only keeps a reader that
// rounds the last digit from reporting a difference no gate could see.
constexpr double kCostTolerance = 1e-9;

bool SameCost(double a, double b) {
  return std::abs(a - b) <= kCostTolerance * std::max(std::abs(a), std::abs(b));
}

// The shortest text that reads back as `v`.
std::string Number(double v) { return DumpJson(v); }

std::string OptionalNumber(const std::optional<double>& v) {
  return v.has_value() ? Number(*v) : std::string("null");
}

std::string Differs(const std::string& field, const std::string& recorded,
                    const std::string& recomputed) {
  return field + ": recorded " + recorded + ", recomputed " + recomputed;
}

std::string GateText(const std::optional<Gate>& gate) {
  return gate.has_value() ? std::string(GateName(*gate)) : std::string("null");
}

std::optional<std::string> CompareCost(const std::string& field,
                                       const std::optional<double>& recorded,
                                       const std::optional<double>& recomputed) {
  if (recorded.has_value() == recomputed.has_value() &&
      (!recorded.has_value() || SameCost(*recorded, *recomputed))) {
    return std::nullopt;
  }
  return Differs(field, OptionalNumber(recorded), OptionalNumber(recomputed));
}

std::optional<std::string> CompareArmCost(const std::string& arm, const ArmCost& recorded,
                                          const ArmCost& recomputed) {
  if (auto d = CompareCost(arm + ".total_usd", recorded.total_usd, recomputed.total_usd)) return d;
  if (recorded.runs != recomputed.runs) {
    return Differs(arm + ".runs", std::to_string(recorded.runs), std::to_string(recomputed.runs));
  }
  if (recorded.passes != recomputed.passes) {
    return Differs(arm + ".passes", std::to_string(recorded.passes),
                   std::to_string(recomputed.passes));
  }
  return CompareCost(arm + ".per_success_usd", recorded.per_success_usd,
                     recomputed.per_success_usd);
}

std::optional<std::string> CompareCosts(const RecordedCosts& recorded, const GateDecision& again) {
  if (auto d = CompareArmCost("baseline_cost", recorded.baseline, again.baseline_cost)) return d;
  if (auto d = CompareArmCost("candidate_cost", recorded.candidate, again.candidate_cost)) return d;
  if (auto d =
          CompareCost("max_cost_increase", recorded.max_cost_increase, again.max_cost_increase)) {
    return d;
  }
  return CompareCost("cost_limit_usd", recorded.cost_limit_usd, again.cost_limit_usd);
}

std::string CaseField(std::size_t i, const char* field) {
  return "cases[" + std::to_string(i) + "]." + field;
}

// The cases' identity: how many, which, on which side, with how many runs.
std::optional<std::string> CompareCaseIds(const RecordedDecision& recorded,
                                          const GateDecision& again) {
  if (recorded.cases.size() != again.cases.size()) {
    return Differs("cases", std::to_string(recorded.cases.size()) + " cases",
                   std::to_string(again.cases.size()) + " cases");
  }
  for (std::size_t i = 0; i < recorded.cases.size(); ++i) {
    const CaseResult& a = recorded.cases[i];
    const CaseResult& b = again.cases[i];
    if (a.case_id != b.case_id) return Differs(CaseField(i, "case_id"), a.case_id, b.case_id);
    if (a.held_out != b.held_out) {
      return Differs(CaseField(i, "held_out"), a.held_out ? "true" : "false",
                     b.held_out ? "true" : "false");
    }
    if (a.runs != b.runs) {
      return Differs(CaseField(i, "runs"), std::to_string(a.runs), std::to_string(b.runs));
    }
  }
  return std::nullopt;
}

// What each case came to, verdicts first: they are what the outcome rests on.
std::optional<std::string> CompareCaseResults(const RecordedDecision& recorded,
                                              const GateDecision& again) {
  const std::size_t n = recorded.cases.size();
  auto named = [&](std::size_t i, const std::string& text) {
    return text + " (case " + recorded.cases[i].case_id + ")";
  };
  for (std::size_t i = 0; i < n; ++i) {
    const CaseVerdict a = recorded.cases[i].verdict;
    const CaseVerdict b = again.cases[i].verdict;
    if (a != b) {
      return named(i, Differs(CaseField(i, "verdict"), std::string(CaseVerdictName(a)),
                              std::string(CaseVerdictName(b))));
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const CaseResult& a = recorded.cases[i];
    const CaseResult& b = again.cases[i];
    if (a.baseline_passes != b.baseline_passes) {
      return named(i, Differs(CaseField(i, "baseline_passes"), std::to_string(a.baseline_passes),
                              std::to_string(b.baseline_passes)));
    }
    if (a.candidate_passes != b.candidate_passes) {
      return named(i, Differs(CaseField(i, "candidate_passes"), std::to_string(a.candidate_passes),
                              std::to_string(b.candidate_passes)));
    }
    const int gain = b.candidate_passes - b.baseline_passes;
    if (!recorded.gains.empty() && recorded.gains[i] != gain) {
      return named(i, Differs(CaseField(i, "gain"), std::to_string(recorded.gains[i]),
                              std::to_string(gain)));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> FirstDecisionMismatch(const RecordedDecision& recorded,
                                                 const GateDecision& again) {
  if (recorded.outcome != again.outcome) {
    return Differs("outcome", std::string(GateOutcomeName(recorded.outcome)),
                   std::string(GateOutcomeName(again.outcome)));
  }
  if (recorded.refused_by != again.refused_by) {
    return Differs("gate", GateText(recorded.refused_by), GateText(again.refused_by));
  }
  if (auto d = CompareCaseIds(recorded, again)) return d;
  if (auto d = CompareCaseResults(recorded, again)) return d;
  if (recorded.costs.has_value()) {
    if (auto d = CompareCosts(*recorded.costs, again)) return d;
  }
  if (recorded.reason != again.reason) {
    return Differs("reason", DumpJson(recorded.reason), DumpJson(again.reason));
  }
  return std::nullopt;
}

Result<AuditCheck> CheckRecordedDecision(const AuditRecord& record) {
  if (!record.decision.has_value()) {
    return FailedPreconditionError("attempt " + record.attempt_id + " has no decision");
  }
  AuditCheck check;
  Result<GateDecision> again = RecomputeDecision(record, record.inputs.options.gates);
  if (!again.ok()) {
    check.mismatch = "the recorded scores do not decide: " + std::string(again.status().message());
    return check;
  }
  std::optional<std::string> mismatch = FirstDecisionMismatch(*record.decision, *again);
  check.matches = !mismatch.has_value();
  check.mismatch = mismatch.value_or("");
  return check;
}

}  // namespace mend::improve
