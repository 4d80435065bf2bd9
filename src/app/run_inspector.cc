// The origin of a run and whether its agent changed, for the commands that show runs.
#include "mend/app/run_inspector.h"

#include <utility>

#include "mend/agent/agent_spec.h"
#include "mend/app/runtime.h"
#include "mend/base/time_format.h"
#include "mend/store/sqlite_store.h"

namespace mend::app {

std::string Interruption::Describe() const {
  switch (lease) {
    case store::LeaseState::kHolderGone:
      return "its process (pid " + std::to_string(holder.has_value() ? holder->pid : 0) + " on " +
             (holder.has_value() ? holder->host : std::string("?")) + ") is gone";
    case store::LeaseState::kExpired:
      return lease_expires_at.has_value()
                 ? "its lease expired at " + FormatRfc3339Seconds(*lease_expires_at)
                 : "its lease expired";
    case store::LeaseState::kNone:
    case store::LeaseState::kLive:
      break;
  }
  return "no process holds it";
}

std::optional<Interruption> InterruptionOf(const Runtime& runtime, const store::RunRecord& run) {
  // A run never claimed (epoch 0: a fork nobody resumed yet) was not interrupted: it has not
  // started.
  if (run.status != store::RunStatus::kRunning || run.epoch == 0) return std::nullopt;
  const store::LeaseState lease =
      store::LeaseStateOf(run, runtime.env.clock->Now(), runtime.holder, store::ProcessAlive);
  if (lease == store::LeaseState::kLive) return std::nullopt;
  return Interruption{lease, run.lease_holder, run.lease_expires_at};
}

std::string RunOverview::AgentChangedText() const {
  if (!folder_error.empty()) return "agent folder unusable: " + folder_error;
  if (!changes.has_value() || !changes->any()) return "";
  return "agent changed: " + changes->Describe();
}

RunOverview RunInspector::Inspect(const store::RunRecord& run) {
  RunOverview overview;
  overview.interruption = InterruptionOf(runtime_, run);
  Result<agent::RunOrigin> origin = agent::ParseRunOrigin(run.metadata, run.id);
  if (!origin.ok()) {
    overview.origin_error = std::string(origin.status().message());
    return overview;
  }
  overview.origin = std::move(origin).value();
  if (run.agent_dir.empty() || overview.origin.fingerprint.empty()) return overview;
  auto it = folders_.find(run.agent_dir);
  if (it == folders_.end()) {
    Result<agent::AgentFingerprint> fingerprint = [&]() -> Result<agent::AgentFingerprint> {
      MEND_ASSIGN_OR_RETURN(agent::AgentSpec spec,
                            agent::LoadAgentFolder(*runtime_.env.fs, run.agent_dir));
      return agent::FingerprintAgentFolder(spec);
    }();
    it = folders_.emplace(run.agent_dir, std::move(fingerprint)).first;
  }
  if (!it->second.ok()) {
    overview.folder_error = std::string(it->second.status().message());
    return overview;
  }
  overview.changes = agent::CompareFingerprints(overview.origin.fingerprint, *it->second);
  return overview;
}

}  // namespace mend::app
