#pragma once

// How a canaried agent runs (docs/improve.md, "Canary"): the proposal's files seen over the agent
// folder, the Agent that sends each new run to its arm, and the hook that records each run's
// outcome. Not a public API: OpenAgent and OpenAgentForRun use it.

#include <map>
#include <memory>
#include <string>

#include "mend/agent/agent.h"
#include "mend/agent/agent_spec.h"
#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/improve/canary_store.h"

namespace mend::app {
struct Runtime;
}  // namespace mend::app

namespace mend::app::internal {

// The agent folder of a canary's proposal arm: `canary.agent_dir` read through a file system that
// shows the proposal's files (from the attempt store) in place of the folder's, so the spec keeps
// the real folder as its `dir` and nothing is written there.
Result<agent::AgentSpec> LoadProposalSpec(Runtime& runtime, const improve::Canary& canary);

// The post-run hook that counts each run of arm `arm` of canary `proposal_id`: runs the agent's
// `[canary] check` when it has one and records the outcome (RecordCanaryRun). Register it after
// the check hooks, whose flag it reads.
std::shared_ptr<agent::PostRunHook> NewCanaryOutcomeHook(Runtime& runtime, std::string proposal_id,
                                                         std::string arm, agent::CanarySpec check);

// An Agent over the two arms of a running canary: Send gives a new run to the proposal's Agent
// for canary.percent percent of run ids (improve::TakesProposal), to the baseline's otherwise;
// every other call goes to the Agent of the arm the run recorded.
std::unique_ptr<agent::Agent> NewCanaryAgent(Runtime& runtime, const improve::Canary& canary,
                                             std::unique_ptr<agent::Agent> baseline,
                                             std::unique_ptr<agent::Agent> proposal);

}  // namespace mend::app::internal
