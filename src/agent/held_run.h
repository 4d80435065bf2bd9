#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "agent/run_tools.h"
#include "mend/agent/agent_spec.h"
#include "mend/agent/run_origin.h"
#include "mend/base/status.h"
#include "mend/llm/types.h"

namespace mend::agent {

// The system prompt of a run: the instructions, then each skill, then the pre-run hooks'
// sections, separated by blank lines.
std::string SystemPrompt(const AgentSpec& spec, const std::vector<std::string>& sections);

// `stored` (a system prompt whose first `prefix_bytes` came from the instructions and skills)
// with that part replaced by `prefix`; the hooks' sections after it stay. `stored` unchanged when
// `prefix_bytes` does not fit it.
std::string RefreshSystemPrompt(const std::string& stored, size_t prefix_bytes,
                                const std::string& prefix);

// OK when every tool the conversation called still exists in `tools` with the definition the
// run recorded (`recorded` may be empty: then only existence is checked). kFailedPrecondition
// naming the run and the first tool that is gone or changed, saying how to go on.
Status CheckUsedTools(std::string_view run_id, const std::vector<llm::Message>& messages,
                      const RunTools& tools, const AgentFingerprint& recorded,
                      const AgentFingerprint& current);

}  // namespace mend::agent
