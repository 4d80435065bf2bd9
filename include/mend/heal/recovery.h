#pragma once

// Recovery, the loop that resumes interrupted and failed runs (docs/heal.md): backoff, quarantine,
// retry with diagnosis and provider outages. RunDriver is what it needs from the agent layer; app
// implements it. Thread-safe.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/agent/agent.h"
#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/heal/provider_endpoint.h"
#include "mend/obs/events.h"
#include "mend/obs/trace.h"
#include "mend/store/checkpoint_store.h"

namespace mend::heal {

/// The detail code of a Resume that this process cannot make: the provider the run recorded is
/// not configured here (no key for it). Recovery then leaves the run to a process where it is,
/// writes the error as the run's last_error, charges no attempt and counts it in
/// TickReport::Skipped::unconfigured.
inline constexpr std::string_view kProviderNotConfiguredDetail = "MEND_PROVIDER_NOT_CONFIGURED";

/// What recovery needs from the agent layer. `app` implements it by opening the agent folder each
/// run was started from (RunRecord::agent_dir). Implementations are thread-safe.
class RunDriver {
 public:
  virtual ~RunDriver() = default;
  /// Agent::Resume of the run: continues it from its newest checkpoint under a lease.
  /// kUnavailable when another live holder has the run; kFailedPrecondition with
  /// kProviderNotConfiguredDetail when this process cannot reach the run's provider.
  virtual Result<agent::RunResult> Resume(const store::RunRecord& run) = 0;
  /// Forks the run at its newest checkpoint into `new_id` and appends `note` (a user message) to
  /// the fork's conversation, without driving it. kAlreadyExists when `new_id` exists.
  virtual Status ForkWithNote(const store::RunRecord& run, const std::string& new_id,
                              const std::string& note) = 0;
  /// The endpoint Resume(run) will send the run's model requests to: what the outage breaker of
  /// the run is. By default the provider and base URL the run recorded (agent::RunOrigin; an empty
  /// endpoint for a run that recorded none); a driver that switches runs to another model says so.
  virtual ProviderEndpoint EndpointFor(const store::RunRecord& run);
};

/// An endpoint's outage began or ended (RecoveryOptions::on_outage).
struct OutageChange {
  ProviderEndpoint endpoint;          ///< the endpoint whose outage changed
  bool in_outage = false;             ///< true: it began; false: it ended
  std::optional<Time> next_probe_at;  ///< while in the outage: when its first probe is due
  size_t endpoints_in_outage = 0;     ///< after this change, over every endpoint
};

/// What Recovery works on, and its policy (docs/heal.md).
struct RecoveryOptions {
  store::CheckpointStore* store = nullptr;  ///< required, not owned
  RunDriver* driver = nullptr;              ///< required, not owned
  Clock* clock = nullptr;                   ///< required, not owned
  obs::EventBus* events = nullptr;          ///< optional: recovery.* events
  /// Optional: each attempt is a `mend.recovery.attempt` span in the run's trace, the parent of
  /// the resumed attempt's spans (docs/observe.md).
  obs::Tracer* tracer = nullptr;
  Duration interval = std::chrono::seconds(30);     ///< between passes of Run()
  Duration max_backoff = std::chrono::minutes(15);  ///< cap of the pause after a failed attempt
  int max_attempts = 10;                            ///< failed attempts before a run is quarantined
  bool retry_with_diagnosis = false;  ///< at the limit, fork the run with a note on its error
  int outage_threshold = 3;  ///< consecutive provider failures of one endpoint, across its runs
  /// The most runs one pass reads and handles (at least 1). A pass starts where the previous one
  /// stopped and goes round to the oldest run, so the runs it did not reach come first next time.
  size_t max_runs_per_pass = 1000;
  size_t max_note_bytes = 2000;  ///< the error quoted in a `.heal` fork's note
  /// Callbacks; one that throws or misbehaves never stops the loop (it becomes on_error /
  /// an event).
  std::function<void(const std::string& run_id)> on_recovered;    ///< a run came back and completed
  std::function<void(const std::string& run_id)> on_quarantined;  ///< once per quarantine
  std::function<void(const OutageChange& change)> on_outage;      ///< an outage began or ended
  std::function<void(const Status& error)> on_error;  ///< the driver or the store failed
};

/// An endpoint in its outage pause.
struct EndpointOutage {
  ProviderEndpoint endpoint;  ///< the endpoint in its pause
  Time since;                 ///< when the outage began
  Time next_probe_at;         ///< when a pass may probe it next
};

/// What one pass did (the `mend recover --once --json` shape of docs/cli.md). Every unfinished run
/// that was not quarantined before the pass is counted once: in `resumed` (its outcome then also in
/// `completed` or `failed`, and in `quarantined` when that failure was its last attempt), in
/// `quarantined` when it gave up without being resumed, or in one of the `skipped` counts.
struct TickReport {
  std::vector<std::string> resumed;      ///< runs resumed in this pass
  std::vector<std::string> completed;    ///< ... of which completed
  std::vector<std::string> failed;       ///< ... of which failed again (or stopped waiting)
  std::vector<std::string> quarantined;  ///< runs quarantined in this pass
  /// Of `resumed`, the runs that were `running`, had been claimed before (not a fresh fork) and had
  /// no live holder: their process died or stopped (a claim of a run held by a live process fails,
  /// and the run is `skipped.leased` instead).
  std::vector<std::string> interrupted;
  bool outage = false;                  ///< some endpoint is in an outage pause after this pass
  std::vector<EndpointOutage> outages;  ///< every endpoint in an outage pause after this pass
  /// The runs a pass left alone. backoff, waiting and non_retryable count every unfinished run in
  /// that state when the pass began, whether or not the pass read it (counted in the store, not
  /// read).
  struct Skipped {
    int backoff = 0;        ///< failed, its next attempt not due yet
    int waiting = 0;        ///< waiting for a person
    int non_retryable = 0;  ///< failed with an error retrying cannot fix
    int leased = 0;         ///< held by another live process when the pass tried it
    int deferred = 0;       ///< due but not reached: the pass stopped at max_runs_per_pass
    int outage = 0;         ///< due, but its endpoint is in an outage pause
    int error = 0;          ///< the driver or the store failed on it (on_error says how)
    int healing = 0;        ///< at the limit, waiting for (or replaced by) its `.heal` fork
    /// due, but the provider it recorded is not configured in this process (its last_error
    /// says which)
    int unconfigured = 0;
  } skipped;  ///< runs the pass left alone, by reason
};

/// The recovery loop (docs/heal.md): resumes interrupted and failed runs with backoff, quarantine,
/// optional retry-with-diagnosis, outage detection, and leaves waiting and non-retryable runs
/// alone. All timing goes through the clock. Thread-safe.
class Recovery {
 public:
  /// kInvalidArgument when store, driver or clock is missing.
  static Result<std::unique_ptr<Recovery>> Create(RecoveryOptions options);
  virtual ~Recovery() = default;

  /// One pass now (`mend recover --once`): the runs to act on, read from the store in pages, at
  /// most max_runs_per_pass of them, from where the previous pass stopped. An endpoint in an outage
  /// pause gets one probe run when its probe is due, and its other runs wait; the runs of every
  /// other endpoint are handled as usual. Store errors end the pass and are returned.
  virtual Result<TickReport> Tick() = 0;
  /// Runs Tick() every interval on a background thread until Stop() (errors go to on_error).
  virtual void Start() = 0;
  /// Stops the background loop (waits for the pass in progress). Idempotent.
  virtual void Stop() = 0;
};

/// docs/heal.md: the note a `.heal` fork gets, quoting `error` as escaped, bounded data.
std::string DiagnosisNote(const store::RunRecord& run, size_t max_error_bytes);

}  // namespace mend::heal
