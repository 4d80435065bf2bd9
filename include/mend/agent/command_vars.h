#pragma once

// The variables an agent folder's commands (tools/*.toml `command`, [[checks]] `command`) may use
// (docs/agent_folder.md): ${AGENT_DIR}, the agent folder, and ${WORKSPACE}, the run's workspace.

#include <string>
#include <string_view>
#include <vector>

#include "mend/base/status.h"

namespace mend::agent {

/// OK when every "${" in `arg` starts ${AGENT_DIR} or ${WORKSPACE}; otherwise kInvalidArgument
/// saying what is wrong ("unknown variable ${AGENTDIR} (did you mean ${AGENT_DIR}?) ..."). "$"
/// without a brace is left alone: commands run without a shell.
Status CheckCommandVariables(std::string_view arg);

/// `argv` with ${AGENT_DIR} and ${WORKSPACE} replaced in every element. The program (argv[0]) when
/// relative and holding a '/' ("tools/wc.sh") is taken relative to the agent folder; a bare name
/// ("python3") is looked up in PATH; with an empty `agent_dir` it is left as is. Elements are
/// assumed to have passed CheckCommandVariables.
std::vector<std::string> ExpandCommand(const std::vector<std::string>& argv,
                                       std::string_view agent_dir, std::string_view workspace);

}  // namespace mend::agent
