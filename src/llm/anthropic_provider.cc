#include "llm/anthropic_provider.h"

#include <utility>

namespace mend::llm {
namespace {

constexpr std::string_view kProvider = "anthropic";
constexpr int kDefaultMaxTokens = 4096;

Json TextBlock(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

// Anthropic wants the tool input as a JSON object; arguments the model produced that are not one
// are passed back wrapped, so the conversation stays valid and the model can see what it sent.
Json ToolInput(const std::string& arguments) {
  Result<Json> parsed = ParseJson(arguments.empty() ? "{}" : arguments);
  if (parsed.ok() && parsed->is_object()) return *parsed;
  return {{"_raw", arguments}};
}

std::pair<std::string, Json> MessageBlocks(const Message& m) {
  Json blocks = Json::array();
  switch (m.role) {
    case Role::kUser:
    case Role::kSystem:  // only reached for system text after the first turn; sent as user text
      // Empty text blocks are rejected by the API.
      if (!m.content.empty()) blocks.push_back(TextBlock(m.content));
      return {"user", blocks};
    case Role::kAssistant:
      if (!m.content.empty()) blocks.push_back(TextBlock(m.content));
      for (const ToolCall& c : m.tool_calls) {
        blocks.push_back({{"type", "tool_use"},
                          {"id", c.id},
                          {"name", c.name},
                          {"input", ToolInput(c.arguments)}});
      }
      return {"assistant", blocks};
    case Role::kTool:
      blocks.push_back({{"type", "tool_result"},
                        {"tool_use_id", m.tool_call_id},
                        {"content", m.content},
                        {"is_error", m.is_error}});
      return {"user", blocks};
  }
  return {"user", blocks};
}

// Builds "system" and "messages". Leading system messages form the system prompt.
void AddMessages(const std::vector<Message>& messages, Json& body) {
  std::string system;
  Json out = Json::array();
  for (const Message& m : messages) {
    if (m.role == Role::kSystem && out.empty()) {
      system += (system.empty() ? "" : "\n\n") + m.content;
      continue;
    }
    auto [role, blocks] = MessageBlocks(m);
    if (blocks.empty()) continue;
    if (!out.empty() && out.back()["role"] == role) {
      for (Json& b : blocks) out.back()["content"].push_back(std::move(b));
    } else {
      out.push_back({{"role", role}, {"content", std::move(blocks)}});
    }
  }
  if (!system.empty()) body["system"] = system;
  body["messages"] = std::move(out);
}

Result<std::string> RequestBody(const CompletionRequest& request, const std::string& model) {
  Json body = {{"model", model},
               {"max_tokens", request.max_tokens > 0 ? request.max_tokens : kDefaultMaxTokens}};
  AddMessages(request.messages, body);
  if (!request.tools.empty()) {
    Json tools = Json::array();
    for (const ToolDefinition& t : request.tools) {
      Result<Json> schema = ParseJson(t.parameters);
      if (!schema.ok() || !schema->is_object()) {
        return InvalidArgumentError("tool \"" + t.name + "\": parameters is not a JSON object");
      }
      tools.push_back(
          {{"name", t.name}, {"description", t.description}, {"input_schema", *schema}});
    }
    body["tools"] = std::move(tools);
  }
  if (request.temperature) body["temperature"] = *request.temperature;
  if (!request.stop.empty()) body["stop_sequences"] = request.stop;
  return DumpJson(body);
}

FinishReason ParseStopReason(std::string_view r) {
  if (r == "end_turn" || r == "stop_sequence" || r.empty()) return FinishReason::kStop;
  if (r == "tool_use") return FinishReason::kToolCalls;
  if (r == "max_tokens") return FinishReason::kLength;
  if (r == "refusal") return FinishReason::kContentFilter;
  return FinishReason::kOther;
}

Result<Completion> ParseCompletion(const HttpResponse& response, const Json& j,
                                   const std::string& model, const PriceTable& prices) {
  const Json* content = Member(j, "content");
  if (content == nullptr || !content->is_array()) {
    return BadResponseError(kProvider, response, "no content");
  }
  Completion c;
  c.id = StringMember(j, "id").value_or("");
  c.model = StringMember(j, "model").value_or(model);
  for (const Json& block : *content) {
    std::string type = StringMember(block, "type").value_or("");
    if (type == "text") {
      c.text += StringMember(block, "text").value_or("");
    } else if (type == "tool_use") {
      ToolCall call{StringMember(block, "id").value_or(""),
                    StringMember(block, "name").value_or(""), "{}"};
      if (const Json* input = Member(block, "input")) call.arguments = DumpJson(*input);
      c.tool_calls.push_back(std::move(call));
    }
  }
  c.finish_reason = ParseStopReason(StringMember(j, "stop_reason").value_or(""));
  if (const Json* usage = Member(j, "usage"); usage != nullptr && usage->is_object()) {
    // Cached prompt tokens are reported apart from input_tokens; all of them are input.
    c.usage.input_tokens = CountMember(*usage, "input_tokens").value_or(0) +
                           CountMember(*usage, "cache_creation_input_tokens").value_or(0) +
                           CountMember(*usage, "cache_read_input_tokens").value_or(0);
    c.usage.output_tokens = CountMember(*usage, "output_tokens").value_or(0);
    c.usage_reported = true;
    c.cost_usd = prices.CostUsd(c.model, c.usage);
  }
  return c;
}

}  // namespace

Result<Completion> ParseAnthropicResponse(const HttpResponse& response, const std::string& model,
                                          const PriceTable& prices, Time now) {
  if (response.status < 200 || response.status >= 300) {
    return HttpErrorToStatus(kProvider, response, now);
  }
  MEND_ASSIGN_OR_RETURN(Json j, ParseSuccessBody(kProvider, response));
  return ParseCompletion(response, j, model, prices);
}

AnthropicProvider::AnthropicProvider(HttpProviderConfig config)
    : config_(std::move(config)), http_(config_.http) {
  if (config_.prices == nullptr) config_.prices = std::make_shared<PriceTable>();
}

Result<Completion> AnthropicProvider::Complete(const CompletionRequest& request) {
  return Guarded<Completion>(kProvider, config_.api_key,
                             [&] { return CompleteUnguarded(request); });
}

Result<Completion> AnthropicProvider::CompleteUnguarded(const CompletionRequest& request) {
  const std::string& model = request.model.empty() ? config_.model : request.model;
  MEND_ASSIGN_OR_RETURN(std::string body, RequestBody(request, model));
  std::vector<std::string> headers = {"anthropic-version: 2023-06-01"};
  if (!config_.api_key.empty()) headers.push_back("x-api-key: " + config_.api_key);
  if (!request.traceparent.empty()) headers.push_back("traceparent: " + request.traceparent);
  MEND_ASSIGN_OR_RETURN(
      HttpResponse response,
      http_.PostJson(EndpointUrl(config_.base_url, "/v1/messages"), headers, body, request.cancel));
  Result<Completion> completion =
      ParseAnthropicResponse(response, model, *config_.prices, NowOf(config_.clock));
  if (completion.ok()) return completion;
  return WithApiKeyHint(completion.status(), "ANTHROPIC_API_KEY",
                        config_.api_key.empty() ? KeySent::kNo : KeySent::kYes);
}

}  // namespace mend::llm
