#pragma once

// agent.toml's [[checks]] and [shadow] tables (docs/agent_folder.md). Included only by
// agent_folder*.cc.

#include <toml++/toml.h>

#include <string>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/base/result.h"

namespace mend::agent::folder_internal {

// The [[checks]] of `agent_toml` (the parsed agent.toml at `path`), in the file's order; none when
// absent. `enabled` is AgentSpec::tools: a check names one of them or "*". Errors are
// kInvalidArgument "<path>:<line>: checks[<index>]...".
Result<std::vector<CheckSpec>> ParseChecks(const toml::table& agent_toml, const std::string& path,
                                           const std::vector<std::string>& enabled);

// The [shadow] table of `agent_toml`, or its default when the table or its read_only key is absent.
// Needs `spec.tools` and `spec.command_tools` loaded.
Result<ShadowSpec> ParseShadow(const toml::table& agent_toml, const std::string& path,
                               const AgentSpec& spec);

// The [canary] table of `agent_toml`: the command that judges a canaried run; empty when absent.
// Errors are kInvalidArgument "<path>:<line>: canary.check ...".
Result<CanarySpec> ParseCanary(const toml::table& agent_toml, const std::string& path);

// The [improve] table of `agent_toml`: the check command and the cases file of an attempt started
// by naming the folder; empty when absent. Errors are kInvalidArgument
// "<path>:<line>: improve.cases ...".
Result<ImproveSpec> ParseImprove(const toml::table& agent_toml, const std::string& path);

}  // namespace mend::agent::folder_internal
