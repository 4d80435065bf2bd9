#pragma once

#include <map>
#include <optional>
#include <string>

#include "mend/agent/run_origin.h"
#include "mend/base/result.h"
#include "mend/store/checkpoint_store.h"

namespace mend::app {

struct Runtime;

// What a person needs to know about a run beyond its record: where it runs, on which model, and
// whether its agent folder changed since it started (DESIGN.md §6; `mend pending`, `mend show`).
struct RunOverview {
  agent::RunOrigin origin;  // empty when the metadata does not parse (see origin_error)
  std::string origin_error;
  // How the folder differs from the run's recorded fingerprint; nullopt when the folder could
  // not be loaded (folder_error says why) or the run recorded no fingerprint.
  std::optional<agent::AgentChanges> changes;
  std::string folder_error;

  // "" when nothing is known to have changed; otherwise one phrase for a table or a message:
  // "agent changed: instructions, tool grep changed" or "agent folder unusable: <why>".
  std::string AgentChangedText() const;
};

// Builds RunOverviews, loading each agent folder once. Not thread-safe; one per command.
class RunInspector {
 public:
  explicit RunInspector(Runtime& runtime) : runtime_(runtime) {}

  RunOverview Inspect(const store::RunRecord& run);

 private:
  Runtime& runtime_;
  std::map<std::string, Result<agent::AgentFingerprint>> folders_;  // by agent folder
};

}  // namespace mend::app
