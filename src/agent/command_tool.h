#pragma once

#include <memory>
#include <string>

#include "mend/agent/agent_spec.h"
#include "mend/agent/tool.h"

namespace mend::agent {

// An external command tool from an agent folder's tools/*.toml. Each call runs spec.command
// (argv, no shell) with the workspace as working directory, writes the arguments JSON to its
// stdin and returns its stdout. A non-zero exit is an error result carrying stdout and an
// excerpt of stderr; so are a timeout (spec.timeout, else ToolContext::timeout; the process group
// is killed; RunTools puts agent.toml's tool_options timeout into spec.timeout) and a program that
// cannot be started. Output is capped at ToolContext::max_output_bytes like run_command's.
//
// A command whose first word contains a '/' but is not absolute ("./bin/lint.sh") is taken
// relative to `agent_dir`, where the tool is defined; a bare name is looked up in PATH.
std::unique_ptr<Tool> MakeCommandTool(const CommandToolSpec& spec, std::string agent_dir);

}  // namespace mend::agent
