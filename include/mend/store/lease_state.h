#pragma once

// LeaseState and LeaseStateOf: who drives a run, by the rule every store's Claim applies
// (docs/runs.md, "Leases"). A `running` run whose lease is not live is interrupted. Pure.

#include <cstdint>
#include <functional>
#include <string_view>

#include "mend/base/clock.h"
#include "mend/store/run_record.h"

namespace mend::store {

/// What a run's lease says about who drives it, by the rule every store's Claim applies
/// (docs/runs.md, "Leases"). A `running` run in any state but kLive is interrupted: no process
/// drives it, and `mend recover` or `mend resume` can claim it at once.
enum class LeaseState {
  kLive,  ///< held by a holder whose lease has not expired and who is not known to be gone
  /// no lease: released (stopped at a checkpoint, waiting, finished) or never claimed
  kNone,
  kHolderGone,  ///< the holder is a process on this host (same host and boot id) that is gone
  kExpired,     ///< the lease expired: its holder stopped renewing it
};

/// "live", "none", "holder_gone", "expired".
std::string_view LeaseStateName(LeaseState state);

/// The state of `run`'s lease at `now`, seen from `local` (this process's identity; an empty boot
/// id never decides that a holder is gone) with `process_alive` telling whether a pid on this host
/// is alive. A holder that is gone wins over an expiry.
LeaseState LeaseStateOf(const RunRecord& run, Time now, const LeaseHolder& local,
                        const std::function<bool(int64_t)>& process_alive);

}  // namespace mend::store
