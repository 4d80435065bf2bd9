#pragma once

// What a person needs to know about a run beyond its record (docs/runs.md): whether a `running` run
// is interrupted (InterruptionOf), and RunInspector's overviews of workspace, model and agent
// folder changes for `mend pending` and `mend show`.

#include <map>
#include <optional>
#include <string>

#include "mend/agent/run_origin.h"
#include "mend/base/result.h"
#include "mend/store/checkpoint_store.h"
#include "mend/store/lease_state.h"

namespace mend::app {

struct Runtime;

/// Why a `running` run has no process driving it: it was interrupted (its process was killed, or
/// stopped at a checkpoint), and `mend recover` or `mend resume` continues it (docs/runs.md).
struct Interruption {
  store::LeaseState lease = store::LeaseState::kNone;  ///< kNone, kHolderGone or kExpired
  std::optional<store::LeaseHolder> holder;            ///< the holder of the lease, when it has one
  std::optional<Time> lease_expires_at;                ///< when the lease ran or runs out

  /// "its process (pid 4242 on host-a) is gone", "its lease expired at 2025-01-02T10:04:00Z",
  /// "no process holds it".
  std::string Describe() const;
};

/// The interruption of `run` at the runtime's clock, judged as this process's store judges a claim
/// (store::LeaseStateOf with the runtime's lease holder and store::ProcessAlive); nullopt when the
/// run is not `running`, was never claimed (a fresh fork) or a live holder has it.
std::optional<Interruption> InterruptionOf(const Runtime& runtime, const store::RunRecord& run);

/// What a person needs to know about a run beyond its record: where it runs, on which model, and
/// whether its agent folder changed since it started (docs/runs.md; `mend pending`, `mend show`).
struct RunOverview {
  agent::RunOrigin origin;   ///< empty when the metadata does not parse (see origin_error)
  std::string origin_error;  ///< why the metadata did not parse
  /// How the folder differs from the run's recorded fingerprint; nullopt when the folder could
  /// not be loaded (folder_error says why) or the run recorded no fingerprint.
  std::optional<agent::AgentChanges> changes;
  std::string folder_error;  ///< why the agent folder could not be loaded
  /// Set when the run is `running` but nobody drives it (InterruptionOf).
  std::optional<Interruption> interruption;

  /// "" when nothing is known to have changed; otherwise one phrase for a table or a message:
  /// "agent changed: instructions, tool grep changed" or "agent folder unusable: <why>".
  std::string AgentChangedText() const;
};

/// Builds RunOverviews, loading each agent folder once. Not thread-safe; one per command.
class RunInspector {
 public:
  /// `runtime` is borrowed and must outlive the inspector.
  explicit RunInspector(Runtime& runtime) : runtime_(runtime) {}

  /// The overview of `run`; errors end up in its *_error fields.
  RunOverview Inspect(const store::RunRecord& run);

 private:
  Runtime& runtime_;
  std::map<std::string, Result<agent::AgentFingerprint>> folders_;  // by agent folder
};

}  // namespace mend::app
