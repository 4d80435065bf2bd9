#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "mend/base/clock.h"
#include "mend/base/status.h"
#include "mend/store/checkpoint_store.h"

namespace mend::store::internal {

// The lease rules every store applies the same way (DESIGN.md §6).

// `id` in double quotes, for messages.
std::string Quote(const std::string& id);

// Whether `holder` is a process on this host (same host and boot id as `local`) that is gone.
bool HolderGone(const LeaseHolder& local, const std::function<bool(int64_t)>& process_alive,
                const LeaseHolder& holder);

// Whether `run` is held by a lease that has not expired at `now` and whose holder is not gone.
bool LeaseIsLive(const RunRecord& run, Time now, const LeaseHolder& local,
                 const std::function<bool(int64_t)>& process_alive);

// OK when `lease` is the run's current, unexpired lease at `now`; kAborted saying why otherwise.
Status CheckFence(const RunRecord& run, const Lease& lease, Time now);

}  // namespace mend::store::internal
