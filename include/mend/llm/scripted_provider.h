#pragma once

// ScriptedProvider, a provider that answers from a JSON script: `mend demo`, tests and the replay
// of recorded cassettes (docs/scripted_provider_format.md). Thread-safe.

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/llm/prices.h"
#include "mend/llm/provider.h"

namespace mend::llm {

/// One scripted answer: a completion (text and/or tool calls) or an error.
struct ScriptedStep {
  std::string text;                  ///< the answer text
  std::vector<ToolCall> tool_calls;  ///< the tool calls the answer asks for
  ///@{
  /// The token counts the answer reports.
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  ///@}
  Status error;  ///< not OK: Complete() returns this instead of a completion
};

/// A provider that answers from a script, for `mend demo`, in-process tests and replaying a
/// recorded cassette (RecordingProvider). Thread-safe. Format and rules in
/// docs/scripted_provider_format.md; in short:
///
/// Script format (JSON): an array of steps, or {"steps": [...]}. Each step is an object with any of
///   "text": string, "tool_calls": [{"id", "name", "arguments"}] (arguments: JSON text, or any JSON
///   value which is serialised), "input_tokens"/"output_tokens": integers, or
///   "error": {"code": "unavailable"|"resource_exhausted"|"deadline_exceeded"|"invalid_argument"|
///             "failed_precondition"|"unauthenticated"|"permission_denied"|"not_found"|
///             "cancelled"|"internal", "message": string, "retry_after_ms": integer,
///             "detail_code": string, "class": "transient"|"permanent"|"auth"|"internal"}.
///
/// Answering by conversation position: turn group p is the p-th answer step (0-based, counting
/// answers only) with the error steps directly before it. A request whose messages hold `a`
/// assistant messages first moves the cursor (the next unused step) forward to the answer of group
/// `a` when it is behind the group (the errors before that answer were for attempts an earlier
/// process made); then the step at the cursor answers and the cursor advances. So a conversation
/// continued by a fresh provider (another process) continues its script, several
/// conversations served one after another share the script in order, and a retry after an error
/// step gets the next step. Past the last step Complete() returns kFailedPrecondition ("script
/// exhausted after N responses"). Every request is recorded.
class ScriptedProvider final : public LlmProvider {
 public:
  /// Answers with `steps`; `prices` (optional) gives each completion its cost.
  explicit ScriptedProvider(std::vector<ScriptedStep> steps,
                            std::shared_ptr<const PriceTable> prices = nullptr);

  /// kInvalidArgument naming the step index and the problem for a malformed script.
  static Result<std::unique_ptr<ScriptedProvider>> FromJson(
      std::string_view json_text, std::shared_ptr<const PriceTable> prices = nullptr);
  /// Reads the script from `path` (errors from the file system are annotated with the path).
  static Result<std::unique_ptr<ScriptedProvider>> FromFile(
      FileSystem& fs, const std::string& path, std::shared_ptr<const PriceTable> prices = nullptr);

  Result<Completion> Complete(const CompletionRequest& request) override;
  std::string_view name() const override { return "scripted"; }

  /// Every request received so far, in order (including those answered with an error).
  std::vector<CompletionRequest> requests() const;
  /// Steps after the cursor (steps skipped by a jump to a later turn count as used).
  size_t remaining() const;

 private:
  std::shared_ptr<const PriceTable> prices_;
  mutable std::mutex mu_;
  std::vector<ScriptedStep> steps_;
  // group_starts_[p]: the first step of turn group p; the last entry starts the error steps after
  // the last answer.
  std::vector<size_t> group_starts_;
  size_t next_ = 0;
  std::vector<CompletionRequest> requests_;
};

}  // namespace mend::llm
