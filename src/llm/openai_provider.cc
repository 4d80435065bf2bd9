#include "llm/openai_provider.h"

#include <utility>

namespace mend::llm {
namespace {

constexpr std::string_view kProvider = "openai";

Json ToolCallsJson(const std::vector<ToolCall>& calls) {
  Json out = Json::array();
  for (const ToolCall& c : calls) {
    out.push_back({{"id", c.id},
                   {"type", "function"},
                   {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  }
  return out;
}

Json MessageJson(const Message& m) {
  switch (m.role) {
    case Role::kSystem:
      return {{"role", "system"}, {"content", m.content}};
    case Role::kUser:
      return {{"role", "user"}, {"content", m.content}};
    case Role::kAssistant: {
      Json j = {{"role", "assistant"}};
      // With tool calls and no text, OpenAI expects a null content rather than "".
      j["content"] = (m.content.empty() && !m.tool_calls.empty()) ? Json(nullptr) : Json(m.content);
      if (!m.tool_calls.empty()) j["tool_calls"] = ToolCallsJson(m.tool_calls);
      return j;
    }
    case Role::kTool:
      return {{"role", "tool"}, {"tool_call_id", m.tool_call_id}, {"content", m.content}};
  }
  return Json::object();
}

Result<Json> ToolsJson(const std::vector<ToolDefinition>& tools) {
  Json out = Json::array();
  for (const ToolDefinition& t : tools) {
    Result<Json> params = ParseJson(t.parameters);
    if (!params.ok() || !params->is_object()) {
      return InvalidArgumentError("tool \"" + t.name + "\": parameters is not a JSON object");
    }
    out.push_back({{"type", "function"},
                   {"function",
                    {{"name", t.name}, {"description", t.description}, {"parameters", *params}}}});
  }
  return out;
}

Result<std::string> RequestBody(const CompletionRequest& request, const std::string& model) {
  Json body = {{"model", model}, {"messages", Json::array()}};
  for (const Message& m : request.messages) body["messages"].push_back(MessageJson(m));
  if (!request.tools.empty()) {
    MEND_ASSIGN_OR_RETURN(body["tools"], ToolsJson(request.tools));
  }
  if (request.max_tokens > 0) body["max_tokens"] = request.max_tokens;
  if (request.temperature) body["temperature"] = *request.temperature;
  if (!request.stop.empty()) body["stop"] = request.stop;
  return DumpJson(body);
}

FinishReason ParseFinishReason(std::string_view r, bool has_tool_calls) {
  if (r == "stop") return has_tool_calls ? FinishReason::kToolCalls : FinishReason::kStop;
  if (r == "tool_calls" || r == "function_call") return FinishReason::kToolCalls;
  if (r == "length") return FinishReason::kLength;
  if (r == "content_filter") return FinishReason::kContentFilter;
  if (r.empty()) return has_tool_calls ? FinishReason::kToolCalls : FinishReason::kStop;
  return FinishReason::kOther;
}

std::vector<ToolCall> ParseToolCalls(const Json& message) {
  std::vector<ToolCall> calls;
  const Json* list = Member(message, "tool_calls");
  if (list == nullptr || !list->is_array()) return calls;
  for (const Json& item : *list) {
    const Json* fn = Member(item, "function");
    if (fn == nullptr) continue;
    ToolCall c;
    c.id = StringMember(item, "id").value_or("");
    c.name = StringMember(*fn, "name").value_or("");
    // Some compatible servers send the arguments as an object instead of JSON text.
    if (const Json* args = Member(*fn, "arguments"); args != nullptr) {
      c.arguments = args->is_string() ? args->get<std::string>() : DumpJson(*args);
    }
    calls.push_back(std::move(c));
  }
  return calls;
}

// Content is a string, null (tool calls only), or a list of parts with "text" in some servers.
std::string ParseContent(const Json& message) {
  const Json* content = Member(message, "content");
  if (content == nullptr || content->is_null()) return "";
  if (content->is_string()) return content->get<std::string>();
  std::string text;
  if (content->is_array()) {
    for (const Json& part : *content) text += StringMember(part, "text").value_or("");
  }
  return text;
}

Result<Completion> ParseCompletion(const HttpResponse& response, const Json& j,
                                   const std::string& model, const PriceTable& prices) {
  const Json* choices = Member(j, "choices");
  if (choices == nullptr || !choices->is_array() || choices->empty()) {
    if (const Json* err = Member(j, "error"); err != nullptr) {
      std::string msg = err->is_object() ? StringMember(*err, "message").value_or("")
                                         : (err->is_string() ? err->get<std::string>() : "");
      return BadResponseError(kProvider, response,
                              "an error in a 2xx response: " + ForMessage(msg, 300));
    }
    return BadResponseError(kProvider, response, "no choices");
  }
  const Json* message = Member((*choices)[0], "message");
  if (message == nullptr || !message->is_object()) {
    return BadResponseError(kProvider, response, "choice without a message");
  }
  Completion c;
  c.id = StringMember(j, "id").value_or("");
  c.model = StringMember(j, "model").value_or(model);
  c.text = ParseContent(*message);
  c.tool_calls = ParseToolCalls(*message);
  c.finish_reason = ParseFinishReason(StringMember((*choices)[0], "finish_reason").value_or(""),
                                      !c.tool_calls.empty());
  if (const Json* usage = Member(j, "usage"); usage != nullptr && usage->is_object()) {
    c.usage.input_tokens = CountMember(*usage, "prompt_tokens").value_or(0);
    c.usage.output_tokens = CountMember(*usage, "completion_tokens").value_or(0);
    c.usage_reported = true;
    c.cost_usd = prices.CostUsd(c.model, c.usage);
  }
  return c;
}

}  // namespace

Result<Completion> ParseOpenAiResponse(const HttpResponse& response, const std::string& model,
                                       const PriceTable& prices, Time now) {
  if (response.status < 200 || response.status >= 300) {
    return HttpErrorToStatus(kProvider, response, now);
  }
  MEND_ASSIGN_OR_RETURN(Json j, ParseSuccessBody(kProvider, response));
  return ParseCompletion(response, j, model, prices);
}

OpenAiProvider::OpenAiProvider(HttpProviderConfig config)
    : config_(std::move(config)), http_(config_.http) {
  if (config_.prices == nullptr) config_.prices = std::make_shared<PriceTable>();
}

Result<Completion> OpenAiProvider::Complete(const CompletionRequest& request) {
  return Guarded<Completion>(kProvider, config_.api_key,
                             [&] { return CompleteUnguarded(request); });
}

Result<Completion> OpenAiProvider::CompleteUnguarded(const CompletionRequest& request) {
  const std::string& model = request.model.empty() ? config_.model : request.model;
  MEND_ASSIGN_OR_RETURN(std::string body, RequestBody(request, model));
  std::vector<std::string> headers;
  if (!config_.api_key.empty()) headers.push_back("Authorization: Bearer " + config_.api_key);
  if (!request.traceparent.empty()) headers.push_back("traceparent: " + request.traceparent);
  MEND_ASSIGN_OR_RETURN(HttpResponse response,
                        http_.PostJson(EndpointUrl(config_.base_url, "/v1/chat/completions"),
                                       headers, body, request.cancel));
  Result<Completion> completion =
      ParseOpenAiResponse(response, model, *config_.prices, NowOf(config_.clock));
  if (completion.ok()) return completion;
  return WithApiKeyHint(completion.status(), "OPENAI_API_KEY",
                        config_.api_key.empty() ? KeySent::kNo : KeySent::kYes);
}

}  // namespace mend::llm
