#include "store/lease_rules.h"

#include "mend/base/time_format.h"
#include "mend/store/lease_state.h"

namespace mend::store::internal {

std::string Quote(const std::string& id) { return "\"" + id + "\""; }

bool HolderGone(const LeaseHolder& local, const std::function<bool(int64_t)>& process_alive,
                const LeaseHolder& holder) {
  if (local.boot_id.empty() || holder.boot_id != local.boot_id || holder.host != local.host) {
    return false;
  }
  if (holder.pid <= 0) return false;
  return !process_alive(holder.pid);
}

bool LeaseIsLive(const RunRecord& run, Time now, const LeaseHolder& local,
                 const std::function<bool(int64_t)>& process_alive) {
  return LeaseStateOf(run, now, local, process_alive) == LeaseState::kLive;
}

Status LeasedError(const RunRecord& run) {
  std::string who = run.lease_holder.has_value() ? run.lease_holder->id : "(unknown)";
  if (run.lease_holder.has_value()) {
    who += " (pid " + std::to_string(run.lease_holder->pid) + " on " + run.lease_holder->host + ")";
  }
  if (run.lease_expires_at.has_value()) who += " until " + FormatRfc3339(*run.lease_expires_at);
  return UnavailableError("run " + Quote(run.id) + " is leased by " + who);
}

Result<Lease> GrantLease(RunRecord& run, bool lease_live, const LeaseHolder& holder, Duration ttl,
                         Time now) {
  if (run.status == RunStatus::kCompleted) {
    return FailedPreconditionError("run " + Quote(run.id) + " is completed");
  }
  if (lease_live) return LeasedError(run);
  run.epoch += 1;
  run.lease_holder = holder;
  run.lease_expires_at = now + ttl;
  run.updated_at = now;
  return Lease{run.id, run.epoch, holder, *run.lease_expires_at};
}

Status CheckFence(const RunRecord& run, const Lease& lease, Time now) {
  if (run.epoch != lease.epoch) {
    return AbortedError("lease on run " + Quote(run.id) + " is stale (epoch " +
                        std::to_string(lease.epoch) + ", current " + std::to_string(run.epoch) +
                        ")");
  }
  if (!run.lease_holder.has_value() || !run.lease_expires_at.has_value()) {
    return AbortedError("lease on run " + Quote(run.id) + " was released");
  }
  if (*run.lease_expires_at <= now) {
    return AbortedError("lease on run " + Quote(run.id) + " expired at " +
                        FormatRfc3339(*run.lease_expires_at));
  }
  return OkStatus();
}

}  // namespace mend::store::internal
