#pragma once

// The agent.toml surface of OutputCheck (docs/agent_folder.md, docs/heal.md): the agent module
// loads and validates [[checks]] without knowing heal (it sits below it); these turn them into
// checks, so every caller that builds an agent from a folder (a run, an improve evaluation)
// gets the same ones.

#include <memory>

#include "mend/agent/agent_spec.h"
#include "mend/base/result.h"
#include "mend/heal/output_check.h"

namespace mend::heal {

/// heal's form of one agent.toml check: a regex check becomes kMustMatch or kMustNotMatch after
/// its must_match; the timeout of a command check stays OutputCheckSpec's default when the folder
/// sets none. Pure.
OutputCheckSpec ToOutputCheckSpec(const agent::CheckSpec& check);

/// The post-tool hook over `spec.checks`, or null when the folder has none. kInvalidArgument from
/// OutputCheck::Create for a check LoadAgentFolder would have refused.
Result<std::unique_ptr<OutputCheck>> OutputCheckForAgent(const agent::AgentSpec& spec,
                                                         OutputCheckOptions options = {});

}  // namespace mend::heal
