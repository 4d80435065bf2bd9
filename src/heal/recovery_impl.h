#pragma once

#include <condition_variable>
#include <map>
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
// from the background loop never interleave); the breakers are only touched under it.
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
    kStopped,
    kUnconfigured
  };
  static std::string_view OutcomeName(Outcome outcome);  // "completed", "leased", ...

  // What giving up on a run came to.
  enum class GaveUp { kQuarantined, kHealing, kError };

  // What a pass learnt of the runs it leaves alone: the store's counts when the pass began, and
  // how many of those in backoff a probe resumed (they are not skipped, then).
  struct PassCounts {
    std::optional<store::RecoveryCounts> counts;
    int probed_in_backoff = 0;
  };

  // recovery.cc: one pass: a probe of each endpoint in an outage whose probe is due, then a normal
  // pass over every run.
  Status Pass(Time now, TickReport& report);
  // The candidates of a pass at `now`, with the counts.
  store::RecoveryQuery Query(Time now, store::RecoveryBackoff backoff) const;

  // recovery_pass.cc: the rules for one run.
  store::RecoveryClass Classify(const store::RunRecord& run, Time now) const;
  Status NormalPass(Time now, TickReport& report, PassCounts& counts);
  CandidateWalk::Step HandleCandidate(const store::RunRecord& run, Time now, TickReport& report);
  // One recovery attempt on `run` (whose endpoint is `endpoint`), as a `mend.recovery.attempt`
  // span of the run's trace.
  Outcome ResumeOne(const store::RunRecord& run, const ProviderEndpoint& endpoint,
                    TickReport& report);
  Outcome ResumeOneTraced(const store::RunRecord& run, const ProviderEndpoint& endpoint,
                          TickReport& report);
  Result<agent::RunResult> CallResume(const store::RunRecord& run);
  Outcome OutcomeOf(const agent::RunResult& result) const;
  void OnCompleted(const store::RunRecord& run, TickReport& report);
  void ChargeFailure(const store::RunRecord& run, TickReport& report);
  // Leaves a run whose recorded provider this process cannot reach to another process: `why`
  // becomes its last_error (written when it changed), no attempt is charged.
  void LeaveUnconfigured(const store::RunRecord& run, const Status& why, TickReport& report);
  // A run at max_attempts: fork it for a diagnosed retry, wait for its fork, or quarantine it.
  GaveUp GiveUp(const store::RunRecord& run, TickReport& report);
  bool CreateHealFork(const store::RunRecord& run);
  bool Quarantine(const std::string& run_id, TickReport& report);
  void FinishHealed(const std::string& original_id);

  // recovery_outage.cc: the breakers, one per endpoint.
  ProviderEndpoint EndpointOf(const store::RunRecord& run);
  bool InOutage(const ProviderEndpoint& endpoint) const;
  // Probes each endpoint in `due` (in an outage, probe due) with its first run that would be
  // resumed, also one still in backoff.
  Status ProbePass(Time now, std::set<ProviderEndpoint> due, TickReport& report,
                   PassCounts& counts);
  // Resumes `run` as its endpoint's probe when the endpoint is in `due` and the run would be
  // resumed; the endpoint leaves `due` once its probe happened, and the walk stops when none is
  // left.
  CandidateWalk::Step ProbeWith(const store::RunRecord& run, Time now,
                                std::set<ProviderEndpoint>& due, TickReport& report,
                                PassCounts& counts);
  // Tells the endpoint's breaker what the resume came to; true when the failure is the outage's
  // (it opened it, or came while it was open): then nobody is charged for it.
  bool RecordProviderFailure(const store::RunRecord& run, const ProviderEndpoint& endpoint,
                             const store::RunError& error, TickReport& report);
  void RecordOtherResult(const ProviderEndpoint& endpoint);
  // The endpoints whose probe is due at `now`.
  std::set<ProviderEndpoint> ProbesDue(Time now) const;
  // Fills report.outages and report.outage; forgets breakers with nothing to remember.
  void ReportOutages(TickReport& report);

  // recovery.cc: callbacks, events and errors, all of which must never stop the loop.
  void Publish(obs::Event event);
  void ReportError(const Status& error, const std::string& run_id);
  void SafeOnError(const Status& error);
  template <typename F>
  void Guarded(std::string_view name, F&& f);
  void NotifyRecovered(const std::string& run_id);
  void NotifyQuarantined(const std::string& run_id);
  void NotifyOutage(const ProviderEndpoint& endpoint, bool in_outage);
  void Loop();

  const RecoveryOptions options_;

  std::mutex pass_mu_;
  std::map<ProviderEndpoint, OutageBreaker> breakers_;
  std::set<std::string> attempted_;  // runs the current pass already handed to the driver
  // Where the next normal pass starts: after the last run of a pass that stopped at
  // max_runs_per_pass; unset: at the oldest. Kept in the store (CheckpointStore::RecoveryCursor),
  // read before the first pass and written when a pass moves it, so that a process started later
  // goes on from where this one stopped.
  std::optional<store::RunCursor> cursor_;
  bool cursor_read_ = false;
  // Reads cursor_ from the store before the first pass; writes it after a pass that moved it.
  void ReadCursor();
  void WriteCursor(const std::optional<store::RunCursor>& before);

  std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace mend::heal
