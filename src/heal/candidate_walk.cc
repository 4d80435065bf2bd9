#include "heal/candidate_walk.h"

#include <algorithm>
#include <utility>

namespace mend::heal {
namespace {

store::RunCursor CursorOf(const store::RunRecord& run) { return {run.created_at, run.id}; }

// Whether `run` comes after `cursor` in the candidates' order (created_at, then id as bytes).
bool After(const store::RunRecord& run, const store::RunCursor& cursor) {
  if (run.created_at != cursor.created_at) return run.created_at > cursor.created_at;
  return run.id.compare(cursor.id) > 0;
}

}  // namespace

CandidateWalk::CandidateWalk(store::CheckpointStore& store, store::RecoveryQuery query,
                             std::optional<store::RunCursor> start, size_t budget)
    : store_(store), query_(std::move(query)), start_(std::move(start)), budget_(budget) {}

Result<CandidateWalk::End> CandidateWalk::Run(
    const std::function<Step(const store::RunRecord&)>& visit) {
  const store::RecoveryCounting counting = query_.counting;
  query_.after = start_;
  bool wrapped = !start_.has_value();  // from the oldest: going round ends at the newest
  while (visited_ < budget_) {
    query_.limit = std::min(budget_ - visited_, store::kMaxRecoveryPageSize);
    query_.counting = counts_.has_value() ? store::RecoveryCounting::kOmit : counting;
    MEND_ASSIGN_OR_RETURN(store::RecoveryPage page, store_.ListRecoveryCandidates(query_));
    if (page.counts.has_value()) counts_ = page.counts;
    for (const store::RunRecord& run : page.runs) {
      // Past `start` after going round: the first part of this walk visited the rest.
      if (wrapped && start_.has_value() && After(run, *start_)) return End::kWentRound;
      ++visited_;
      last_ = CursorOf(run);
      if (visit(run) == Step::kStop) return End::kStopped;
    }
    if (page.next.has_value()) {
      query_.after = page.next;
    } else if (wrapped) {
      return End::kWentRound;
    } else {
      wrapped = true;
      query_.after.reset();
    }
  }
  return End::kBudgetUsed;
}

}  // namespace mend::heal
