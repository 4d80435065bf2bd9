// What every canary store shares (canary_store.h): the state names, the sums of the recorded
// outcomes, and the checks both stores make before they write (canary_store_checks.h).
#include "mend/improve/canary_store.h"

#include <chrono>
#include <string>
#include <string_view>

#include "improve/canary_store_checks.h"
#include "mend/base/time_format.h"
#include "mend/improve/canary.h"

namespace mend::improve {

bool operator==(const Canary& a, const Canary& b) {
  const CanaryRule& x = a.rule;
  const CanaryRule& y = b.rule;
  return a.proposal_id == b.proposal_id && a.agent_dir == b.agent_dir && a.percent == b.percent &&
         a.auto_decide == b.auto_decide && x.min_runs == y.min_runs && x.max_runs == y.max_runs &&
         x.confidence == y.confidence && x.max_cost_increase == y.max_cost_increase &&
         a.state == b.state && a.started_at == b.started_at && a.decided_at == b.decided_at &&
         a.verdict == b.verdict && a.reason == b.reason;
}

std::string_view CanaryStateName(CanaryState state) {
  switch (state) {
    case CanaryState::kRunning:
      return "running";
    case CanaryState::kPromoted:
      return "promoted";
    case CanaryState::kRolledBack:
      return "rolled_back";
  }
  return "running";
}

Result<CanaryState> ParseCanaryState(std::string_view name) {
  if (name == "running") return CanaryState::kRunning;
  if (name == "promoted") return CanaryState::kPromoted;
  if (name == "rolled_back") return CanaryState::kRolledBack;
  return InvalidArgumentError("unknown canary state \"" + std::string(name) + "\"");
}

void SumOutcomes(const std::vector<CanaryRunOutcome>& outcomes, ArmOutcomes& baseline,
                 ArmOutcomes& proposal) {
  baseline = ArmOutcomes{};
  proposal = ArmOutcomes{};
  for (const CanaryRunOutcome& o : outcomes) {
    CountRun(o.run, o.arm == kBaselineArm ? baseline : proposal);
  }
}

namespace internal {

Status CheckNewCanary(const Canary& canary) {
  if (canary.proposal_id.empty()) return InvalidArgumentError("a canary needs a proposal id");
  if (canary.agent_dir.empty()) {
    return InvalidArgumentError("canary " + canary.proposal_id + " needs an agent folder");
  }
  // Written so that NaN is refused too.
  if (!(canary.percent > 0 && canary.percent <= 100)) {
    return InvalidArgumentError("canary " + canary.proposal_id + ": percent " +
                                std::to_string(canary.percent) + " is outside (0, 100]");
  }
  Status rule = ValidateCanaryRule(canary.rule);
  if (!rule.ok()) {
    return InvalidArgumentError("canary " + canary.proposal_id + ": " +
                                std::string(rule.message()));
  }
  return OkStatus();
}

Canary NewRunningCanary(const Canary& canary, Time now) {
  Canary row = canary;
  row.state = CanaryState::kRunning;
  row.started_at = FormatRfc3339(now);
  row.decided_at.clear();
  row.verdict.clear();
  row.reason.clear();
  return row;
}

Status CheckOutcome(const Canary& canary, const CanaryRunOutcome& outcome) {
  if (outcome.run_id.empty()) {
    return InvalidArgumentError("an outcome of canary " + canary.proposal_id + " needs a run id");
  }
  if (outcome.arm != kBaselineArm && outcome.arm != canary.proposal_id) {
    return InvalidArgumentError("run " + outcome.run_id + " of canary " + canary.proposal_id +
                                ": arm \"" + outcome.arm + "\" is neither \"" +
                                std::string(kBaselineArm) + "\" nor the proposal id");
  }
  if (canary.state != CanaryState::kRunning) return NotRunningError(canary);
  return OkStatus();
}

Status NotRunningError(const Canary& canary) {
  const std::string_view state =
      canary.state == CanaryState::kPromoted ? "promoted" : "rolled back";
  return FailedPreconditionError("canary " + canary.proposal_id + " was already " +
                                 std::string(state));
}

Result<Canary> TakeDecision(const Canary& before, const Canary& decided, Time now) {
  if (decided.state == CanaryState::kRunning) {
    return InvalidArgumentError("deciding canary " + before.proposal_id +
                                " left it running; nothing was stored");
  }
  Canary after = before;
  after.state = decided.state;
  after.decided_at = decided.decided_at.empty() ? FormatRfc3339(now) : decided.decided_at;
  after.verdict = decided.verdict;
  after.reason = decided.reason;
  return after;
}

int64_t UnixNanos(Time t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace internal
}  // namespace mend::improve
