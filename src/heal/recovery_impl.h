#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "heal/candidate_walk.h"
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

  // What a pass learnt of the runs it leaves alone: the store's counts when the pass began, and
  // how many of those in backoff a probe resumed (they are not skipped, then).
  struct PassCounts {
    std::optional<store::RecoveryCounts> counts;
    int probed_in_backoff = 0;
  };

  // recovery.cc: one pass; a probe during an outage, then a normal pass unless the outage goes on.
  Status Pass(Time now, TickReport& report);
  // The candidates of a pass at `now`, with the counts.
  store::RecoveryQuery Query(Time now, store::RecoveryBackoff backoff) const;

  // recovery_pass.cc: the rules for one run.
  store::RecoveryClass Classify(const store::RunRecord& run, Time now) const;
  Status NormalPass(Time now, TickReport& report, PassCounts& counts);
  CandidateWalk::Step HandleCandidate(const store::RunRecord& run, Time now, TickReport& report);
  // Returns true when the probe ended the outage.
  Result<bool> ProbePass(Time now, TickReport& report, PassCounts& counts);
  // Resumes `run` as the probe when it would be resumed; kStop once a probe happened.
  CandidateWalk::Step ProbeWith(const store::RunRecord& run, Time now, TickReport& report,
                                PassCounts& counts);
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
  // Where the next normal pass starts: after the last run of a pass that stopped at
  // max_runs_per_pass; unset: at the oldest.
  std::optional<store::RunCursor> cursor_;

  std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace mend::heal
