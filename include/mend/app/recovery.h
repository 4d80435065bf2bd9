#pragma once

// Recovery wired to the runtime (docs/heal.md): RuntimeRunDriver resumes each run through
// OpenAgentForRun on the model it recorded; RecoveryOptionsFor reads the recover.* keys.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "mend/app/runtime.h"
#include "mend/heal/recovery.h"

namespace mend::app {

/// The recovery loop's view of the agent layer: each run is resumed by an Agent opened from the
/// folder it was started from, on the model the run recorded (OpenAgentForRun; a flag of this
/// invocation switches it only under ProviderFlagScope::kEveryRun), kept open for later runs of the
/// same folder and model. Thread-safe.
class RuntimeRunDriver final : public heal::RunDriver {
 public:
  /// `stop` (optional, borrowed, must outlive the driver): once it reads true, runs this driver
  /// resumes stop at their next checkpoint (AgentOptions::stop); recovery charges nothing for that.
  explicit RuntimeRunDriver(Runtime& runtime, const std::atomic<bool>* stop = nullptr)
      : runtime_(runtime), stop_(stop) {}

  Result<agent::RunResult> Resume(const store::RunRecord& run) override;
  Status ForkWithNote(const store::RunRecord& run, const std::string& new_id,
                      const std::string& note) override;
  /// The provider and base URL of the model Resume uses (RunModelFor): the recorded ones, or
  /// those of the flags when the runtime's provider_flag_scope lets them switch runs.
  heal::ProviderEndpoint EndpointFor(const store::RunRecord& run) override;

 private:
  Result<agent::Agent*> AgentFor(const store::RunRecord& run);

  Runtime& runtime_;
  const std::atomic<bool>* const stop_;
  std::mutex mu_;
  // By agent folder and recorded model.
  std::map<std::string, std::unique_ptr<agent::Agent>> agents_;
};

/// Recovery options from the configuration (recover.interval, recover.max_attempts,
/// recover.retry_with_diagnosis, recover.max_runs_per_pass) and the runtime (store, clock, events);
/// on_quarantined counts a quarantined run of a canary for its arm (RecordQuarantinedCanaryRun): a
/// caller that sets its own calls the one it replaces. The caller sets the driver and the other
/// callbacks.
heal::RecoveryOptions RecoveryOptionsFor(Runtime& runtime);

}  // namespace mend::app
