#pragma once

// mend's memory and lessons as an MCP server (docs/mcp.md, "mend as an MCP server"): the tools
// recall, search, add_fact, add_lesson, report_failure, lesson_feedback, runs and run, and the
// resources LESSONS.md and a run's transcript, all acting on the runtime's home.

#include <memory>
#include <string>

#include "mend/mcp/server.h"

namespace mend::app {

struct Runtime;

/// The server for `runtime` (borrowed; it must outlive the server). `version` is mend's, sent as
/// the server's version.
std::unique_ptr<mcp::McpServer> MakeMendMcpServer(Runtime& runtime, const std::string& version);

}  // namespace mend::app
