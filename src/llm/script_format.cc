#include "llm/script_format.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "llm/json_util.h"

namespace mend::llm {
namespace {

struct NamedCode {
  std::string_view name;
  StatusCode code;
};

// Every code a provider returns (provider.h), by its script name.
constexpr std::array<NamedCode, 10> kCodes = {{
    {"unavailable", StatusCode::kUnavailable},
    {"resource_exhausted", StatusCode::kResourceExhausted},
    {"deadline_exceeded", StatusCode::kDeadlineExceeded},
    {"invalid_argument", StatusCode::kInvalidArgument},
    {"failed_precondition", StatusCode::kFailedPrecondition},
    {"unauthenticated", StatusCode::kUnauthenticated},
    {"permission_denied", StatusCode::kPermissionDenied},
    {"not_found", StatusCode::kNotFound},
    {"cancelled", StatusCode::kCancelled},
    {"internal", StatusCode::kInternal},
}};

constexpr std::array<ErrorClass, 4> kClasses = {ErrorClass::kTransient, ErrorClass::kPermanent,
                                                ErrorClass::kAuth, ErrorClass::kInternal};

Result<StatusCode> CodeByName(std::string_view name) {
  for (const NamedCode& c : kCodes) {
    if (c.name == name) return c.code;
  }
  return InvalidArgumentError("unknown error code \"" + std::string(name) + "\"");
}

std::optional<std::string_view> NameOfCode(StatusCode code) {
  for (const NamedCode& c : kCodes) {
    if (c.code == code) return c.name;
  }
  return std::nullopt;
}

Result<ErrorClass> ClassByName(std::string_view name) {
  for (ErrorClass c : kClasses) {
    if (ErrorClassName(c) == name) return c;
  }
  return InvalidArgumentError("unknown error class \"" + std::string(name) +
                              "\"; expected one of: transient, permanent, auth, internal");
}

// Refines `*s` with the optional keys of an error step beyond its code and message.
Status ParseErrorDetails(const Json& e, Status* s) {
  if (std::optional<int64_t> ms = IntMember(e, "retry_after_ms")) {
    if (*ms < 0) return InvalidArgumentError("\"retry_after_ms\" must not be negative");
    *s = s->WithRetryAfter(std::chrono::milliseconds(*ms));
  }
  if (const Json* detail = Member(e, "detail_code")) {
    if (!detail->is_string()) return InvalidArgumentError("\"detail_code\" must be a string");
    *s = s->WithDetailCode(detail->get<std::string>());
  }
  if (const Json* cls = Member(e, "class")) {
    if (!cls->is_string()) return InvalidArgumentError("\"class\" must be a string");
    MEND_ASSIGN_OR_RETURN(ErrorClass c, ClassByName(cls->get<std::string>()));
    *s = s->WithClass(c);
  }
  return OkStatus();
}

// Fills `out` with the scripted error described by `e`; the return value reports a malformed one.
Status ParseError(const Json& e, Status* out) {
  if (!e.is_object()) return InvalidArgumentError("\"error\" must be an object");
  auto code_name = StringMember(e, "code");
  if (!code_name) return InvalidArgumentError("\"error\" needs a string \"code\"");
  MEND_ASSIGN_OR_RETURN(StatusCode code, CodeByName(*code_name));
  Status s(code, StringMember(e, "message").value_or("scripted " + *code_name));
  MEND_RETURN_IF_ERROR(ParseErrorDetails(e, &s));
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

Result<std::vector<ScriptedStep>> ParseSteps(std::string_view json_text) {
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

Json ErrorToJson(const Status& s) {
  Json e = Json::object();
  std::optional<std::string_view> name = NameOfCode(s.code());
  e["code"] = std::string(name.value_or("internal"));
  e["message"] = std::string(s.message());
  if (s.retry_after()) e["retry_after_ms"] = s.retry_after()->count();
  if (!s.detail_code().empty()) e["detail_code"] = std::string(s.detail_code());
  // Without a name for the code, "internal" would change how recovery treats the error unless
  // the class goes with it.
  if (s.class_override() || !name) e["class"] = std::string(ErrorClassName(ClassOf(s)));
  return Json{{"error", std::move(e)}};
}

Json AnswerToJson(const ScriptedStep& step) {
  Json calls = Json::array();
  for (const ToolCall& c : step.tool_calls) {
    calls.push_back(Json{{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
  }
  return Json{{"text", step.text},
              {"tool_calls", std::move(calls)},
              {"input_tokens", step.input_tokens},
              {"output_tokens", step.output_tokens}};
}

}  // namespace

size_t ConversationTurn(const CompletionRequest& request) {
  return static_cast<size_t>(
      std::count_if(request.messages.begin(), request.messages.end(),
                    [](const Message& m) { return m.role == Role::kAssistant; }));
}

Result<std::vector<ScriptedStep>> ParseScript(std::string_view json_text) {
  // The helpers of json_util do not throw; this guards the few direct nlohmann calls above.
  try {
    return ParseSteps(json_text);
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("script: ") + e.what());
  }
}

std::string SerializeScript(const std::vector<ScriptedStep>& steps) {
  std::string out = "{\"steps\": [";
  for (size_t i = 0; i < steps.size(); ++i) {
    const ScriptedStep& step = steps[i];
    out += i == 0 ? "\n  " : ",\n  ";
    out += DumpJson(step.error.ok() ? AnswerToJson(step) : ErrorToJson(step.error));
  }
  out += steps.empty() ? "]}\n" : "\n]}\n";
  return out;
}

}  // namespace mend::llm
