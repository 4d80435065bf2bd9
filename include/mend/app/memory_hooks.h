#pragma once

// Long-term memory in a run (docs/memory.md): RecallForTask, what a run for a task receives, and
// the hooks OpenAgent registers with it: MemoryContextHook (the prompt section) and
// MemoryFeedbackHook (credits the facts with the outcome).

#include <string>
#include <string_view>

#include "mend/agent/agent.h"
#include "mend/agent/hooks.h"
#include "mend/base/result.h"
#include "mend/memory/retriever.h"

namespace mend::app {

struct Runtime;

/// What a run for `task` in `workspace` would receive from long-term memory: the retriever's
/// answer for the query {task, workspace} ("" = every fact, as for an agent folder without a
/// `workspace`). The pre-run hook and `mend memory recall` both call this, so recall shows exactly
/// what a run gets. With memory.enabled false the answer is empty. HyDE and embedding failures
/// degrade (published as `memory.degraded` events); fact store errors are returned.
Result<memory::Retrieval> RecallForTask(Runtime& runtime, const std::string& task,
                                        const std::string& workspace);

/// Pre-run hook "memory": the `## Long-term Memory` section for the run's task and workspace, and
/// a record in the fact store of which facts the run received; each call is counted in the
/// runtime's mend_memory_* metrics. A store error is returned (the agent reports it as
/// `hook.failed` and the run goes on without the section). Thread-safe as the
/// retriever and store are. `runtime` must outlive the hook.
class MemoryContextHook final : public agent::PreRunHook {
 public:
  /// `runtime` is borrowed and must outlive the hook.
  explicit MemoryContextHook(Runtime& runtime) : runtime_(runtime) {}
  std::string_view name() const override { return "memory"; }
  Result<std::string> ContextSection(const agent::RunInfo& run) override;

 private:
  Runtime& runtime_;
};

/// Post-run hook "memory-feedback": the facts a run received are credited with its outcome (helped
/// when it completed, hurt when it failed), once per run. A run that received nothing costs one
/// indexed lookup. `runtime` must outlive the hook.
class MemoryFeedbackHook final : public agent::PostRunHook {
 public:
  /// `runtime` is borrowed and must outlive the hook.
  explicit MemoryFeedbackHook(Runtime& runtime) : runtime_(runtime) {}
  std::string_view name() const override { return "memory-feedback"; }
  Status AfterRun(agent::RunOutcome& outcome) override;

 private:
  Runtime& runtime_;
};

/// Registers both hooks on `agent` (OpenAgent does when memory.enabled is true).
void AddMemoryHooks(Runtime& runtime, agent::Agent& agent);

}  // namespace mend::app
