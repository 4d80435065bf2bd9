// The decision of an improve attempt and its record in the audit folder (attempt_stages.h).
#include <string>
#include <vector>

#include "improve/attempt_stages.h"
#include "mend/improve/proposal_diff.h"

namespace mend::improve::internal {
namespace {

std::vector<FileDiff> Diffs(const AgentText& before, const AgentText& after) {
  std::vector<FileDiff> diffs;
  if (before.instructions != after.instructions) {
    diffs.push_back({"instructions.md",
                     UnifiedDiff("instructions.md", before.instructions, after.instructions)});
  }
  for (const auto& [path, content] : after.skills) {
    auto it = before.skills.find(path);
    const std::string old = it == before.skills.end() ? std::string() : it->second;
    if (old != content) diffs.push_back({path, UnifiedDiff(path, old, content)});
  }
  return diffs;
}

}  // namespace

// The card's subject: the best proposal, else the best candidate better on a training case but
// refused by a gate, else the best of the others; nullptr when none was evaluated.
const CandidateRecord* Attempt::Subject() const {
  const CandidateRecord* best_proposal = nullptr;
  const CandidateRecord* best_rejected = nullptr;
  const CandidateRecord* best_other = nullptr;
  for (const CandidateRecord& c : report_.candidates) {
    if (c.n == 0) continue;
    const CandidateRecord** slot = &best_other;
    if (c.decision.outcome == GateOutcome::kProposal) {
      slot = &best_proposal;
    } else if (c.decision.outcome == GateOutcome::kRejected && BetterTraining(c.decision) > 0) {
      slot = &best_rejected;
    }
    if (*slot == nullptr || Preferred(c, **slot)) *slot = &c;
  }
  return best_proposal != nullptr   ? best_proposal
         : best_rejected != nullptr ? best_rejected
                                    : best_other;
}

Status Attempt::Decide() {
  ImproveResult& result = report_.result;
  if (const CandidateRecord* chosen = Subject(); chosen != nullptr) {
    report_.chosen = *chosen;
    // The gates' decision as Decide gave it, so decision.json recomputes from scores.jsonl: a
    // candidate worse somewhere is `rejected (worse_case)` even when it is better nowhere.
    result.decision = chosen->decision;
    result.rationale = chosen->rationale;
    result.diffs = Diffs(report_.base, chosen->text);
  } else {
    // No candidate could be evaluated: the baseline against itself is the honest card.
    MEND_ASSIGN_OR_RETURN(
        result.decision,
        improve::Decide(ScoresOf(cases_, held_, baseline_.runs, baseline_.runs), options_.gates));
    result.decision.reason = report_.editor_errors.empty() ? "the editor proposed no change"
                                                           : "no candidate could be evaluated: " +
                                                                 report_.editor_errors.front();
  }
  for (const CandidateRecord& c : report_.candidates) {
    for (const RefusedEdit& refused : c.refused) result.refused_edits.push_back(refused);
  }
  report_.card = FormatImproveResult(result);
  return OkStatus();
}

Status Attempt::Record() {
  if (report_.chosen.has_value()) {
    MEND_RETURN_IF_ERROR(audit_.WriteDecision(report_.chosen->n, report_.result.decision));
  }
  return audit_.WriteCard(report_.card);
}

}  // namespace mend::improve::internal
