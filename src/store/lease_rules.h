#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/base/status.h"
#include "mend/store/checkpoint_store.h"

namespace mend::store::internal {

// The lease rules every store applies the same way (docs/runs.md).

// `id` in double quotes, for messages.
std::string Quote(const std::string& id);

// Whether `holder` is a process on this host (same host and boot id as `local`) that is gone.
bool HolderGone(const LeaseHolder& local, const std::function<bool(int64_t)>& process_alive,
                const LeaseHolder& holder);

// Whether `run` is held by a lease that has not expired at `now` and whose holder is not gone.
bool LeaseIsLive(const RunRecord& run, Time now, const LeaseHolder& local,
                 const std::function<bool(int64_t)>& process_alive);

// kUnavailable "run "<id>" is leased by <holder> (pid N on host) until <time>" for a live lease.
Status LeasedError(const RunRecord& run);

// Claim's rule on a run read under the claim's lock, given whether its lease is live: a completed
// run is kFailedPrecondition, a live lease LeasedError; otherwise the epoch moves on, `holder`
// holds the run until now + ttl, and the new lease is returned. The caller writes `run` back.
Result<Lease> GrantLease(RunRecord& run, bool lease_live, const LeaseHolder& holder, Duration ttl,
                         Time now);

// OK when `lease` is the run's current, unexpired lease at `now`; kAborted saying why otherwise.
Status CheckFence(const RunRecord& run, const Lease& lease, Time now);

}  // namespace mend::store::internal
