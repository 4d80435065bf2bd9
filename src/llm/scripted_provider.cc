#include "mend/llm/scripted_provider.h"

#include <map>
#include <utility>

#include "llm/json_util.h"

namespace mend::llm {
namespace {

Result<StatusCode> CodeByName(std::string_view name) {
  static const std::map<std::string, StatusCode, std::less<>> kCodes = {
      {"unavailable", StatusCode::kUnavailable},
      {"resource_exhausted", StatusCode::kResourceExhausted},
      {"deadline_exceeded", StatusCode::kDeadlineExceeded},
      {"invalid_argument", StatusCode::kInvalidArgument},
      {"failed_precondition", StatusCode::kFailedPrecondition},
      {"unauthenticated", StatusCode::kUnauthenticated},
      {"permission_denied", StatusCode::kPermissionDenied},
      {"not_found", StatusCode::kNotFound},
      {"internal", StatusCode::kInternal},
  };
  auto it = kCodes.find(name);
  if (it == kCodes.end())
    return InvalidArgumentError("unknown error code \"" + std::string(name) + "\"");
  return it->second;
}

// Fills `out` with the scripted error described by `e`; the return value reports a malformed one.
Status ParseError(const Json& e, Status* out) {
  if (!e.is_object()) return InvalidArgumentError("\"error\" must be an object");
  auto code_name = StringMember(e, "code");
  if (!code_name) return InvalidArgumentError("\"error\" needs a string \"code\"");
  MEND_ASSIGN_OR_RETURN(StatusCode code, CodeByName(*code_name));
  Status s(code, StringMember(e, "message").value_or("scripted " + *code_name));
  if (auto ms = IntMember(e, "retry_after_ms")) {
    if (*ms < 0) return InvalidArgumentError("\"retry_after_ms\" must not be negative");
    s = s.WithRetryAfter(std::chrono::milliseconds(*ms));
  }
  *out = s;
  return OkStatus();
}

Result<std::vector<ToolCall>> ParseToolCalls(const Json& list) {
  if (!list.is_array()) return InvalidArgumentError("\"tool_calls\" must be an array");
  std::vector<ToolCall> calls;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& item = list[i];
    auto name = StringMember(item, "name");
    if (!name) {
      return InvalidArgumentError("tool call " + std::to_string(i) + " needs a string \"name\"");
    }
    ToolCall c;
    c.id = StringMember(item, "id").value_or("call_" + std::to_string(i));
    c.name = *name;
    const Json* args = Member(item, "arguments");
    if (args == nullptr) {
      c.arguments = "{}";
    } else {
      c.arguments = args->is_string() ? args->get<std::string>() : DumpJson(*args);
    }
    calls.push_back(std::move(c));
  }
  return calls;
}

Result<ScriptedStep> ParseStep(const Json& j) {
  if (!j.is_object()) return InvalidArgumentError("must be an object");
  ScriptedStep step;
  if (const Json* e = Member(j, "error")) {
    MEND_RETURN_IF_ERROR(ParseError(*e, &step.error));
    return step;
  }
  const Json* text = Member(j, "text");
  const Json* calls = Member(j, "tool_calls");
  if (text == nullptr && calls == nullptr) {
    return InvalidArgumentError("needs \"text\", \"tool_calls\" or \"error\"");
  }
  if (text != nullptr && !text->is_string())
    return InvalidArgumentError("\"text\" must be a string");
  if (text != nullptr) step.text = text->get<std::string>();
  if (calls != nullptr) {
    MEND_ASSIGN_OR_RETURN(step.tool_calls, ParseToolCalls(*calls));
  }
  for (const char* key : {"input_tokens", "output_tokens"}) {
    if (Member(j, key) != nullptr && (!IntMember(j, key) || *IntMember(j, key) < 0)) {
      return InvalidArgumentError("\"" + std::string(key) + "\" must be a non-negative integer");
    }
  }
  step.input_tokens = IntMember(j, "input_tokens").value_or(0);
  step.output_tokens = IntMember(j, "output_tokens").value_or(0);
  return step;
}

Result<std::vector<ScriptedStep>> ParseScript(std::string_view json_text) {
  Result<Json> parsed = ParseJson(json_text);
  if (!parsed.ok()) return parsed.status().Annotate("script");
  const Json* list = &*parsed;
  if (const Json* steps = Member(*parsed, "steps")) list = steps;
  if (!list->is_array()) {
    return InvalidArgumentError("script must be an array of steps or {\"steps\": [...]}");
  }
  std::vector<ScriptedStep> steps;
  for (size_t i = 0; i < list->size(); ++i) {
    Result<ScriptedStep> step = ParseStep((*list)[i]);
    if (!step.ok()) return step.status().Annotate("script step " + std::to_string(i));
    steps.push_back(std::move(step).value());
  }
  return steps;
}

}  // namespace

ScriptedProvider::ScriptedProvider(std::vector<ScriptedStep> steps,
                                   std::shared_ptr<const PriceTable> prices)
    : prices_(prices != nullptr ? std::move(prices) : std::make_shared<PriceTable>()),
      steps_(std::move(steps)) {}

Result<std::unique_ptr<ScriptedProvider>> ScriptedProvider::FromJson(
    std::string_view json_text, std::shared_ptr<const PriceTable> prices) {
  Result<std::vector<ScriptedStep>> steps = [&]() -> Result<std::vector<ScriptedStep>> {
    try {
      return ParseScript(json_text);
    } catch (const std::exception& e) {
      return InvalidArgumentError(std::string("script: ") + e.what());
    }
  }();
  if (!steps.ok()) return steps.status();
  return std::make_unique<ScriptedProvider>(std::move(steps).value(), std::move(prices));
}

Result<std::unique_ptr<ScriptedProvider>> ScriptedProvider::FromFile(
    FileSystem& fs, const std::string& path, std::shared_ptr<const PriceTable> prices) {
  Result<std::string> text = ReadFileToString(fs, path);
  if (!text.ok()) return text.status().Annotate("script file " + path);
  Result<std::unique_ptr<ScriptedProvider>> p = FromJson(*text, std::move(prices));
  if (!p.ok()) return p.status().Annotate(path);
  return p;
}

Result<Completion> ScriptedProvider::Complete(const CompletionRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  requests_.push_back(request);
  if (next_ >= steps_.size()) {
    return FailedPreconditionError("script exhausted after " + std::to_string(steps_.size()) +
                                   " responses");
  }
  const ScriptedStep& step = steps_[next_++];
  if (!step.error.ok()) return step.error;
  Completion c;
  c.id = "scripted-" + std::to_string(next_);
  c.model = request.model.empty() ? "scripted" : request.model;
  c.text = step.text;
  c.tool_calls = step.tool_calls;
  c.finish_reason = c.tool_calls.empty() ? FinishReason::kStop : FinishReason::kToolCalls;
  c.usage = {step.input_tokens, step.output_tokens};
  c.usage_reported = true;
  c.cost_usd = prices_->CostUsd(c.model, c.usage);
  return c;
}

std::vector<CompletionRequest> ScriptedProvider::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

size_t ScriptedProvider::remaining() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_.size() - next_;
}

}  // namespace mend::llm
