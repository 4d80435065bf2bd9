#pragma once

// What the SQLite and PostgreSQL canary stores (canary_store.h) check and decide alike: a new
// canary's fields, an outcome's arm, the refusal of a canary that is no longer running, and what a
// decision may change. Pure functions; thread-safe.

#include <cstdint>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/improve/canary_store.h"

namespace mend::improve::internal {

/// kInvalidArgument for an empty proposal id or agent folder, a percent outside (0, 100] or a rule
/// ValidateCanaryRule refuses.
Status CheckNewCanary(const Canary& canary);

/// `canary` as Start stores it: running, started at `now`, nothing decided.
Canary NewRunningCanary(const Canary& canary, Time now);

/// kInvalidArgument for an empty run id or an arm that is neither kBaselineArm nor the proposal
/// id of `canary`; kFailedPrecondition when `canary` is not running.
Status CheckOutcome(const Canary& canary, const CanaryRunOutcome& outcome);

/// kFailedPrecondition: "canary X was already promoted" (or rolled back).
Status NotRunningError(const Canary& canary);

/// `before` with the decision `decided` made of it: its state, decided_at (`now` when left empty),
/// verdict and reason; nothing else a decider changed. kInvalidArgument when `decided` is still
/// running.
Result<Canary> TakeDecision(const Canary& before, const Canary& decided, Time now);

/// Nanoseconds since the Unix epoch: the order of List.
int64_t UnixNanos(Time t);

}  // namespace mend::improve::internal
