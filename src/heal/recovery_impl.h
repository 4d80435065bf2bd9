#pragma once

#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "heal/outage_breaker.h"
#include "mend/heal/recovery.h"

namespace mend::heal {

// The Recovery of recovery.h. Passes are serialised by pass_mu_ (a Tick() from a caller and one
// from the background loop never interleave); the breaker is only touched under it.
class RecoveryImpl final : public Recovery {
 public:
  explicit RecoveryImpl(RecoveryOptions options);
  ~RecoveryImpl() override;

  Result<TickReport> Tick() override;
  void Start() override;
  void Stop() override;

 private:
  // What a pass does with one listed run.
  enum class Decision { kResume, kWaiting, kNonRetryable, kBackoff, kLeaveAlone, kGivenUp };
  // How one call to the driver went.
  // kStopped: the attempt ended at a checkpoint because this process is shutting down (the run is
  // still running); nothing failed and nothing is charged.
  enum class Outcome {
    kCompleted,
    kWaiting,
    kProviderFailure,
    kOtherFailure,
    kLeased,
    kError,
    kStopped
  };
  static std::string_view OutcomeName(Outcome outcome);  // "completed", "leased", ...

  // recovery_pass.cc: the rules for one run.
  Decision Classify(const store::RunRecord& run, Time now) const;
  void NormalPass(const std::vector<store::RunRecord>& runs, Time now, TickReport& report);
  // Returns true when the probe ended the outage.
  bool ProbePass(const std::vector<store::RunRecord>& runs, Time now, TickReport& report);
  // One recovery attempt on `run`, as a `mend.recovery.attempt` span of the run's trace.
  Outcome ResumeOne(const store::RunRecord& run, TickReport& report);
  Outcome ResumeOneTraced(const store::RunRecord& run, TickReport& report);
  Result<agent::RunResult> CallResume(const store::RunRecord& run);
  Outcome OutcomeOf(const agent::RunResult& result) const;
  void OnCompleted(const store::RunRecord& run, TickReport& report);
  void ChargeFailure(const store::RunRecord& run, TickReport& report);
  // A run at max_attempts: fork it for a diagnosed retry, wait for its fork, or quarantine it.
  void GiveUp(const store::RunRecord& run, TickReport& report);
  void CreateHealFork(const store::RunRecord& run);
  void Quarantine(const std::string& run_id, TickReport& report);
  void FinishHealed(const std::string& original_id);

  // recovery.cc: callbacks, events and errors, all of which must never stop the loop.
  void Publish(obs::Event event);
  void ReportError(const Status& error, const std::string& run_id);
  void SafeOnError(const Status& error);
  template <typename F>
  void Guarded(std::string_view name, F&& f);
  void NotifyRecovered(const std::string& run_id);
  void NotifyQuarantined(const std::string& run_id);
  void NotifyOutage(bool in_outage);
  void Loop();

  const RecoveryOptions options_;

  std::mutex pass_mu_;
  OutageBreaker breaker_;
  std::set<std::string> attempted_;  // runs the current pass already handed to the driver

  std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace mend::heal
