#pragma once

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

// One scripted answer: a completion (text and/or tool calls) or an error.
struct ScriptedStep {
  std::string text;
  std::vector<ToolCall> tool_calls;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  Status error;  // not OK: Complete() returns this instead of a completion
};

// A provider that replays a script of answers in order, for `mend demo` and in-process tests.
// Past the end of the script Complete() returns kFailedPrecondition ("script exhausted after N
// responses"). Records every request it receives. Thread-safe.
//
// Script format (JSON): an array of steps, or {"steps": [...]}. Each step is an object with any of
//   "text": string, "tool_calls": [{"id", "name", "arguments"}] (arguments: JSON text, or any JSON
//   value which is serialised), "input_tokens"/"output_tokens": integers, or
//   "error": {"code": "unavailable"|"resource_exhausted"|"deadline_exceeded"|"invalid_argument"|
//             "failed_precondition"|"unauthenticated"|"permission_denied"|"not_found"|"internal",
//             "message": string, "retry_after_ms": integer (optional)}.
class ScriptedProvider final : public LlmProvider {
 public:
  explicit ScriptedProvider(std::vector<ScriptedStep> steps,
                            std::shared_ptr<const PriceTable> prices = nullptr);

  // kInvalidArgument naming the step index and the problem for a malformed script.
  static Result<std::unique_ptr<ScriptedProvider>> FromJson(
      std::string_view json_text, std::shared_ptr<const PriceTable> prices = nullptr);
  // Reads the script from `path` (errors from the file system are annotated with the path).
  static Result<std::unique_ptr<ScriptedProvider>> FromFile(
      FileSystem& fs, const std::string& path, std::shared_ptr<const PriceTable> prices = nullptr);

  Result<Completion> Complete(const CompletionRequest& request) override;
  std::string_view name() const override { return "scripted"; }

  // Every request received so far, in order (including those answered with an error).
  std::vector<CompletionRequest> requests() const;
  // Steps not yet consumed.
  size_t remaining() const;

 private:
  std::shared_ptr<const PriceTable> prices_;
  mutable std::mutex mu_;
  std::vector<ScriptedStep> steps_;
  size_t next_ = 0;
  std::vector<CompletionRequest> requests_;
};

}  // namespace mend::llm
