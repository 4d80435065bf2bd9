#pragma once

// Canaries of accepted proposals (docs/improve.md, "Canary"): a queued proposal tried on a share
// of an agent's live runs, each run's outcome counted for its arm, and the proposal promoted or
// rolled back by improve's decision rule (improve/canary.h), on its own (--auto) or by a person.

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "mend/base/result.h"
#include "mend/improve/canary.h"
#include "mend/improve/canary_store.h"

namespace mend::app {

struct Runtime;

/// The runtime's canary store: on PostgreSQL when store.url is postgres:// (shared by replicas),
/// else in `<home>/mend.db`. Opened on first use; its errors come back to each caller.
Result<improve::CanaryStore*> Canaries(Runtime& runtime);

/// The rule of new canaries, from the improve.canary.* keys.
improve::CanaryRule CanaryRuleFromConfig(const Runtime& runtime);

/// Starts a canary of the queued proposal `proposal_id` on `percent` percent of its agent's new
/// runs: records it (one per agent), keeps the proposal's files under the attempt's audit folder
/// (`improve/<id>/canary/`, the agent folder is not touched), writes the first line of
/// `improve/<id>/canary.jsonl` and publishes `canary.started`. Errors: those of the stores;
/// kFailedPrecondition for a proposal that is not queued; kAlreadyExists when the agent already has
/// a running canary; kInvalidArgument for a percent outside (0, 100].
Result<improve::Canary> StartCanary(Runtime& runtime, std::string_view proposal_id, double percent,
                                    bool auto_decide);

/// One arm of a canary as `mend improve canary` shows it.
struct CanaryArmReport {
  std::string arm;                ///< "baseline" or the proposal id
  improve::ArmOutcomes outcomes;  ///< summed from the recorded runs
  double failure_rate = 0;        ///< 1 - successes / runs; 0 without runs
  ///@{
  /// The 95% interval of the failure rate (Wilson score); [0, 1] without runs.
  double failure_low = 0;
  double failure_high = 1;
  ///@}
  double cost_per_success = 0;  ///< cost / successes; 0 without a success
};

/// A canary, its arms and what the rule says now.
struct CanaryReport {
  improve::Canary canary;        ///< as stored
  CanaryArmReport baseline;      ///< the current instructions
  CanaryArmReport proposal;      ///< the proposal's
  improve::CanaryDecision rule;  ///< the rule on the outcomes recorded so far
};

/// kNotFound for an unknown canary; the stores' errors.
Result<CanaryReport> ReadCanary(Runtime& runtime, std::string_view proposal_id);

/// The report as `mend improve canary --json` and GET /api/v1/improve/{id}/canary print it.
nlohmann::json CanaryReportJson(const CanaryReport& report);

/// The report for a terminal: arms, counts, rates with intervals, recommendation, decision.
std::string CanaryReportText(const CanaryReport& report);

/// A person promotes a running canary: writes the proposal's files into the agent folder exactly as
/// `improve apply` does (over unchanged files, with a backup) and marks both the proposal applied
/// and the canary promoted, with the rule's verdict when it says promote on the outcomes recorded
/// then, "promote_manual" otherwise. The decision is a `canary.decided` event, a `heal.action`
/// event and a line in `improve/<id>/canary.jsonl`. kFailedPrecondition for a canary that is not
/// running, or a changed agent file (the canary then keeps running).
Result<improve::Canary> PromoteCanary(Runtime& runtime, std::string_view proposal_id);

/// A person rolls a running canary back: no new run takes the proposal, the proposal is rejected
/// (its note says why), the agent folder is left as it is; "roll_back_manual" unless the rule says
/// roll back. Recorded as PromoteCanary's decision is.
Result<improve::Canary> RollbackCanary(Runtime& runtime, std::string_view proposal_id);

/// Applies the rule to a running --auto canary: promotes or rolls back when it says so and returns
/// the decided canary; std::nullopt when it says continue, or the canary is not --auto or no
/// longer running (another process decided it).
Result<std::optional<improve::Canary>> SettleCanary(Runtime& runtime, std::string_view proposal_id);

/// Records what a run of a canaried agent came to, then settles an --auto canary. A canary no
/// longer running takes no outcome (OK, nothing recorded).
Status RecordCanaryRun(Runtime& runtime, const improve::CanaryRunOutcome& outcome);

/// Records that recovery quarantined run `run_id`, when the run is part of a canary (RunOrigin::
/// canary), keeping the steps, tokens and cost its last ending recorded; OK and nothing recorded
/// for any other run. RecoveryOptionsFor calls it for every quarantine.
Status RecordQuarantinedCanaryRun(Runtime& runtime, const std::string& run_id);

/// kFailedPrecondition when the agent folder `agent_dir` has a running canary: of `proposal_id`
/// itself (promote or roll it back instead) or of another proposal (one canary per agent). OK
/// otherwise. `improve apply` and auto mode call it before writing a proposal's files.
Status RefuseWhileCanary(Runtime& runtime, const std::string& agent_dir,
                         std::string_view proposal_id);

}  // namespace mend::app
