#include <string>
#include <string_view>

#include "mend/store/checkpoint_store.h"

namespace mend::store {

std::string_view RunStatusName(RunStatus s) {
  switch (s) {
    case RunStatus::kRunning:
      return "running";
    case RunStatus::kWaiting:
      return "waiting";
    case RunStatus::kCompleted:
      return "completed";
    case RunStatus::kFailed:
      return "failed";
    case RunStatus::kQuarantined:
      return "quarantined";
  }
  return "unknown";
}

Result<RunStatus> ParseRunStatus(std::string_view name) {
  for (RunStatus s : {RunStatus::kRunning, RunStatus::kWaiting, RunStatus::kCompleted,
                      RunStatus::kFailed, RunStatus::kQuarantined}) {
    if (RunStatusName(s) == name) return s;
  }
  return InvalidArgumentError("unknown run status \"" + std::string(name) + "\"");
}

Status CheckRunTransition(RunStatus from, RunStatus to) {
  if (from == to) return OkStatus();
  bool allowed = false;
  switch (from) {
    case RunStatus::kRunning:
      allowed = true;  // to waiting, completed, failed or quarantined
      break;
    case RunStatus::kWaiting:
      allowed = to == RunStatus::kRunning;
      break;
    case RunStatus::kFailed:
      allowed = to == RunStatus::kRunning || to == RunStatus::kQuarantined;
      break;
    case RunStatus::kQuarantined:
      allowed = to == RunStatus::kRunning;
      break;
    case RunStatus::kCompleted:
      break;  // terminal
  }
  if (allowed) return OkStatus();
  return FailedPreconditionError("a run cannot go from " + std::string(RunStatusName(from)) +
                                 " to " + std::string(RunStatusName(to)));
}

}  // namespace mend::store
