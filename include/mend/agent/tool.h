#pragma once

// Tool, the interface of everything a model can call, with ToolSpec, ToolContext and ToolResult
// (docs/tools.md). A tool that fails returns an error result for the model; a non-OK Status is for
// failures of mend itself.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/env.h"
#include "mend/base/result.h"

namespace mend::agent {

/// What a tool declares about itself. `parameters` is a JSON Schema object (JSON text); the
/// registry validates a call's arguments against it before the tool runs.
struct ToolSpec {
  std::string name;         ///< unique within a registry
  std::string description;  ///< what the model reads about it
  std::string parameters =
      R"({"type":"object","properties":{}})";  ///< JSON Schema of the arguments
  bool read_only = false;                      ///< never changes the workspace or the world
  bool requires_approval = false;              ///< a person must approve each call
  /// False for a schema from elsewhere (an MCP server) that the checker cannot use ($ref, say):
  /// the model still sees it, and arguments only have to be a JSON object.
  bool check_arguments = true;
};

/// The outcome of one tool call, as the model will see it. A failing tool is not a failing run:
/// `is_error` results go back to the model.
struct ToolResult {
  std::string content;    ///< the text the model gets
  bool is_error = false;  ///< the call failed
  /// Set by the run when a post-tool hook replaced the tool's result (PostToolAction::replacement):
  /// what the model sees is the hook's text, not the tool's. Persisted with the tool message and
  /// reported on the `tool.called` event; tools leave it false.
  bool replaced_by_hook = false;
  /// Set by a tool that gave up because the run is stopping (ToolContext::stop): the run records
  /// no result, the call stays pending, and it runs again when the run resumes, as after a crash.
  bool interrupted = false;

  /// A successful result.
  static ToolResult Ok(std::string content) { return {std::move(content), false}; }
  /// An error result: the call failed, the run goes on.
  static ToolResult Error(std::string content) { return {std::move(content), true}; }
};

/// Where and for whom a tool runs.
struct ToolContext {
  std::string workspace;  ///< absolute path; file tools refuse paths that leave it
  std::string run_id;     ///< the run making the call
  std::string call_id;    ///< the model's id of the call
  Env env;                ///< the seams the tool uses
  std::chrono::milliseconds timeout{60'000};  ///< run_command and external tools
  size_t max_output_bytes = 256 * 1024;       ///< larger outputs are cut, saying so
  /// Optional, not owned: reads true once the run is asked to stop (AgentOptions::stop). A tool
  /// that waits long may give up then with ToolResult::interrupted (an MCP call is cancelled).
  const std::atomic<bool>* stop = nullptr;
};

/// A tool. Execute() receives arguments already validated against spec().parameters (JSON text of
/// an object). It returns a ToolResult for every outcome the model should see (a missing file, a
/// non-zero exit); a non-OK Status only for failures of mend itself. Implementations are
/// thread-compatible; the registry owns them.
class Tool {
 public:
  virtual ~Tool() = default;
  /// What the tool declares; the same object for the tool's lifetime.
  virtual const ToolSpec& spec() const = 0;
  /// Runs one call with validated `arguments_json` in `ctx`.
  virtual Result<ToolResult> Execute(std::string_view arguments_json, const ToolContext& ctx) = 0;
};

}  // namespace mend::agent
