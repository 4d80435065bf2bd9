// The origin of a run and whether its agent changed, for the commands that show runs.
#include "mend/app/run_inspector.h"

#include <utility>

#include "mend/agent/agent_spec.h"
#include "mend/app/runtime.h"

namespace mend::app {

std::string RunOverview::AgentChangedText() const {
  if (!folder_error.empty()) return "agent folder unusable: " + folder_error;
  if (!changes.has_value() || !changes->any()) return "";
  return "agent changed: " + changes->Describe();
}

RunOverview RunInspector::Inspect(const store::RunRecord& run) {
  RunOverview overview;
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
