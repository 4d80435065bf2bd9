#include "mend/store/lease_state.h"

#include "store/lease_rules.h"

namespace mend::store {

std::string_view LeaseStateName(LeaseState state) {
  switch (state) {
    case LeaseState::kLive:
      return "live";
    case LeaseState::kNone:
      return "none";
    case LeaseState::kHolderGone:
      return "holder_gone";
    case LeaseState::kExpired:
      return "expired";
  }
  return "none";
}

LeaseState LeaseStateOf(const RunRecord& run, Time now, const LeaseHolder& local,
                        const std::function<bool(int64_t)>& process_alive) {
  if (!run.lease_holder.has_value() || !run.lease_expires_at.has_value()) return LeaseState::kNone;
  if (internal::HolderGone(local, process_alive, *run.lease_holder)) return LeaseState::kHolderGone;
  if (*run.lease_expires_at <= now) return LeaseState::kExpired;
  return LeaseState::kLive;
}

}  // namespace mend::store
