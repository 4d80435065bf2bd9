#pragma once

// RunRecord, the durable record of one run (docs/runs.md): its status machine (RunStatus,
// CheckRunTransition), its last error and its lease holder. Plain values.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mend/base/clock.h"
#include "mend/base/result.h"

namespace mend::store {

/// The status machine of a run (docs/runs.md):
///   running ──► waiting ──► running        (a person approved, denied or answered)
///   running ──► completed | failed
///   failed | quarantined ──► running       (resume)
///   running ──► quarantined                (recovery gave up)
/// completed is terminal. A run whose process died while `running` stays `running` with an
/// expired or orphaned lease: that is what "interrupted" means.
enum class RunStatus { kRunning, kWaiting, kCompleted, kFailed, kQuarantined };
std::string_view RunStatusName(RunStatus s);  ///< "running", "waiting", ...
/// kInvalidArgument for anything but the five names above.
Result<RunStatus> ParseRunStatus(std::string_view name);

/// OK when the machine above allows `from` → `to`; kFailedPrecondition otherwise. Staying in the
/// same status is allowed except nothing leaves completed. Besides the arrows above, failed ──►
/// quarantined is allowed (recovery gives up on a run whose last attempt failed). Every store
/// validates status changes with it.
Status CheckRunTransition(RunStatus from, RunStatus to);

/// The last error of a run, as the `--json` shapes show it.
struct RunError {
  /// a StatusCode name ("UNAVAILABLE") or a detail code ("MEND_RUN_NO_PROGRESS")
  std::string code;
  std::string message;      ///< one line, secrets removed
  std::string error_class;  ///< "transient" | "permanent" | "auth" | "internal"
  bool retryable = false;   ///< whether retrying may succeed (IsRetryable)
};

/// Who holds (or asks for) a lease. On one host, a holder whose process is gone (same boot id,
/// pid not alive) does not block a claim, so a run can be resumed right after a kill -9.
struct LeaseHolder {
  std::string id;       ///< e.g. "replica-a" or "pid-1234@host"
  std::string host;     ///< the holder's host name
  std::string boot_id;  ///< /proc/sys/kernel/random/boot_id; empty when unknown
  int64_t pid = 0;      ///< the holder's process id
};

/// The durable record of one run: small, listed often.
struct RunRecord {
  std::string id;                          ///< unique; chosen by the caller
  std::string agent;                       ///< the agent's name
  std::string agent_dir;                   ///< the agent folder it was started from
  std::string task;                        ///< what the run was asked to do
  RunStatus status = RunStatus::kRunning;  ///< where it is in the status machine
  int64_t step = 0;  ///< the step of the newest checkpoint; 0 before the first
  /// Recovery bookkeeping (docs/heal.md): consecutive failed attempts, when to try again.
  int64_t attempts = 0;
  std::optional<Time> next_attempt_at;  ///< see attempts
  std::string waiting;                  ///< "" | "approval" | "question"
  std::optional<RunError> last_error;   ///< why the run last failed
  std::string parent_id;                ///< forks: the run forked from, and at which step
  int64_t parent_step = 0;              ///< see parent_id
  std::string metadata;  ///< small JSON object owned by the agent layer (kind of run, options)
  Time created_at;       ///< when the run was created
  Time updated_at;       ///< when its record last changed
  /// The current lease, if any (epoch counts every claim ever made).
  int64_t epoch = 0;
  std::optional<LeaseHolder> lease_holder;  ///< who holds the lease
  std::optional<Time> lease_expires_at;     ///< when it runs out unless renewed
};

}  // namespace mend::store
