#pragma once

// AddCheckHooks, the wiring of an agent folder's [[checks]] and shadow mode onto an Agent
// (docs/heal.md). OpenAgent calls it; an embedder that creates its own Agent may too.

#include "mend/agent/agent.h"
#include "mend/agent/agent_spec.h"
#include "mend/base/status.h"
#include "mend/heal/output_check.h"

namespace mend::app {

struct Runtime;

/// Whether a run gets heal's ShadowHook.
enum class ShadowMode { kOff, kOn };

/// Registers the agent folder's checks and shadow mode on `agent` (docs/heal.md):
///   - with ShadowMode::kOn (heal.shadow, or a run started in shadow mode), a heal::ShadowHook with
///   spec.shadow.read_only
///     as a pre-tool hook: tools not listed do not run and the model gets a simulated result;
///   - when spec.checks is not empty, a heal::OutputCheck over them as a post-tool hook (its
///     command checks run as subprocesses in the run's workspace).
/// Both publish `heal.action` on runtime.events. Call it right after creating the agent: the
/// ShadowHook must be the first pre-tool hook, so no other hook acts on a call that will not run.
/// kInvalidArgument from heal::OutputCheck::Create for a check LoadAgentFolder would have refused.
/// `runtime` must outlive `agent`.
Status AddCheckHooks(Runtime& runtime, agent::Agent& agent, const agent::AgentSpec& spec,
                     ShadowMode shadow);

}  // namespace mend::app
