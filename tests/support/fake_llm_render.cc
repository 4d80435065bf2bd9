#include "tests/support/fake_llm_render.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "mend/base/base64.h"

namespace mend::testing::fake_llm {
namespace {

using Json = nlohmann::json;

// Timestamps are derived from the sequence so that bodies are reproducible.
int64_t CreatedAt(const RenderContext& context) { return 1700000000 + context.sequence; }

// Arguments that are not a JSON object still yield a valid tool_use block.
Json ParsedArguments(const std::string& arguments) {
  Json input = Json::parse(arguments, nullptr, /*allow_exceptions=*/false);
  return input.is_object() ? input : Json::object();
}

Json OpenAiToolCalls(const FakeResponse& r) {
  Json calls = Json::array();
  for (const auto& call : r.tool_calls) {
    calls.push_back({{"id", call.id},
                     {"type", "function"},
                     {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
  }
  return calls;
}

Json OpenAiUsage(const FakeResponse& r) {
  return {{"prompt_tokens", r.input_tokens},
          {"completion_tokens", r.output_tokens},
          {"total_tokens", r.input_tokens + r.output_tokens}};
}

std::string RenderChat(const FakeResponse& r, const RenderContext& context) {
  Json message = {{"role", "assistant"}};
  message["content"] = (r.text.empty() && !r.tool_calls.empty()) ? Json(nullptr) : Json(r.text);
  if (!r.tool_calls.empty()) message["tool_calls"] = OpenAiToolCalls(r);
  Json body = {{"id", "chatcmpl-fake" + std::to_string(context.sequence)},
               {"object", "chat.completion"},
               {"created", CreatedAt(context)},
               {"model", context.model},
               {"choices", Json::array({{{"index", 0},
                                         {"message", message},
                                         {"logprobs", nullptr},
                                         {"finish_reason", OpenAiFinishReason(r)}}})}};
  if (!r.omit_usage) body["usage"] = OpenAiUsage(r);
  return Dump(body);
}

std::string RenderMessage(const FakeResponse& r, const RenderContext& context) {
  Json content = Json::array();
  if (!r.text.empty() || r.tool_calls.empty()) {
    content.push_back({{"type", "text"}, {"text", r.text}});
  }
  for (const auto& call : r.tool_calls) {
    content.push_back({{"type", "tool_use"},
                       {"id", call.id},
                       {"name", call.name},
                       {"input", ParsedArguments(call.arguments)}});
  }
  Json body = {{"id", "msg_fake" + std::to_string(context.sequence)},
               {"type", "message"},
               {"role", "assistant"},
               {"model", context.model},
               {"content", content},
               {"stop_reason", AnthropicStopReason(r)},
               {"stop_sequence", nullptr}};
  if (!r.omit_usage) {
    body["usage"] = {{"input_tokens", r.input_tokens}, {"output_tokens", r.output_tokens}};
  }
  return Dump(body);
}

// Written out by hand rather than as one JSON value: each distinct vector is printed once, so
// answering many inputs with long vectors (1536 floats, as OpenAI's small model) costs the server
// little and a benchmark measures the client. The shape is OpenAI's.
std::string RenderVector(const std::vector<float>& v, bool base64) {
  if (!base64) return Dump(Json(v));
  std::string bytes;
  for (float f : v) {
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    for (int shift = 0; shift < 32; shift += 8) bytes += static_cast<char>((bits >> shift) & 0xff);
  }
  return "\"" + Base64Encode(bytes) + "\"";
}

std::string RenderEmbeddings(const FakeResponse& r, const RenderContext& context) {
  std::vector<std::string> scripted;
  for (const std::vector<float>& v : r.embeddings) {
    scripted.push_back(RenderVector(v, context.base64));
  }
  std::string body = "{\"object\":\"list\",\"data\":[";
  for (size_t i = 0; i < context.inputs.size(); ++i) {
    if (i > 0) body += ',';
    body += "{\"object\":\"embedding\",\"index\":" + std::to_string(i) + ",\"embedding\":";
    body += scripted.empty() ? RenderVector(DeriveEmbedding(context.inputs[i]), context.base64)
                             : scripted[i % scripted.size()];
    body += '}';
  }
  body += "],\"model\":" + Dump(Json(context.model));
  if (!r.omit_usage) {
    body +=
        ",\"usage\":" + Dump({{"prompt_tokens", r.input_tokens}, {"total_tokens", r.input_tokens}});
  }
  return body + "}";
}

std::string OpenAiErrorType(int status) {
  switch (status) {
    case 401:
    case 403:
    case 404:
    case 400:
    case 413:
      return "invalid_request_error";
    case 429:
      return "requests";
    default:
      return "server_error";
  }
}

Json OpenAiErrorCode(int status) {
  switch (status) {
    case 401:
      return "invalid_api_key";
    case 404:
      return "model_not_found";
    case 429:
      return "rate_limit_exceeded";
    default:
      return nullptr;
  }
}

std::string AnthropicErrorType(int status) {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 529:
      return "overloaded_error";
    default:
      return "api_error";
  }
}

}  // namespace

// Scripted text may hold any bytes; replacing invalid UTF-8 keeps dump() from throwing.
std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string OpenAiFinishReason(const FakeResponse& r) {
  if (r.finish_reason.empty()) return r.tool_calls.empty() ? "stop" : "tool_calls";
  if (r.finish_reason == "end_turn" || r.finish_reason == "stop_sequence") return "stop";
  if (r.finish_reason == "tool_use") return "tool_calls";
  if (r.finish_reason == "max_tokens") return "length";
  return r.finish_reason;
}

std::string AnthropicStopReason(const FakeResponse& r) {
  if (r.finish_reason.empty()) return r.tool_calls.empty() ? "end_turn" : "tool_use";
  if (r.finish_reason == "stop") return "end_turn";
  if (r.finish_reason == "tool_calls") return "tool_use";
  if (r.finish_reason == "length") return "max_tokens";
  return r.finish_reason;
}

std::string RenderSuccess(Endpoint endpoint, const FakeResponse& response,
                          const RenderContext& context) {
  switch (endpoint) {
    case Endpoint::kChatCompletions:
      return RenderChat(response, context);
    case Endpoint::kResponses:
      return Dump(ResponseObject(response, context, ResponseStatus(response),
                                 ResponseOutput(response, context)));
    case Endpoint::kMessages:
      return RenderMessage(response, context);
    case Endpoint::kEmbeddings:
      return RenderEmbeddings(response, context);
    case Endpoint::kModels:
      break;
  }
  return RenderModels();
}

std::string RenderError(Endpoint endpoint, int status, const FakeResponse& response) {
  if (endpoint == Endpoint::kMessages) {
    std::string type =
        response.error_type.empty() ? AnthropicErrorType(status) : response.error_type;
    return Dump(
        {{"type", "error"}, {"error", {{"type", type}, {"message", response.error_message}}}});
  }
  Json code = response.error_type.empty() ? OpenAiErrorCode(status) : Json(response.error_type);
  return Dump({{"error",
                {{"message", response.error_message},
                 {"type", OpenAiErrorType(status)},
                 {"param", nullptr},
                 {"code", code}}}});
}

std::string RenderHtmlErrorPage(int status) {
  std::string title = std::to_string(status) + " " + std::string(ReasonPhrase(status));
  return "<html>\r\n<head><title>" + title + "</title></head>\r\n<body>\r\n<center><h1>" + title +
         "</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
}

std::string RenderModels() {
  Json data = Json::array();
  for (const char* id : {"fake-model", "fake-model-large", "fake-embedding"}) {
    data.push_back(
        {{"id", id}, {"object", "model"}, {"created", 1700000000}, {"owned_by", "mend"}});
  }
  return Dump({{"object", "list"}, {"data", data}});
}

std::vector<float> DeriveEmbedding(std::string_view input) {
  constexpr int kDims = 8;
  std::vector<float> vector(kDims);
  double norm = 0;
  for (int d = 0; d < kDims; ++d) {
    // FNV-1a over the bytes, seeded by the dimension.
    uint64_t hash = 1469598103934665603ULL ^ static_cast<uint64_t>(d + 1);
    for (unsigned char c : input) hash = (hash ^ c) * 1099511628211ULL;
    vector[d] = static_cast<float>(static_cast<double>(hash % 2001) / 1000.0 - 1.0);
    norm += static_cast<double>(vector[d]) * vector[d];
  }
  if (norm == 0) return std::vector<float>(kDims, 0.0f);
  for (float& v : vector) v = static_cast<float>(v / std::sqrt(norm));
  return vector;
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 529:
      return "Site Overloaded";
    default:
      return "Error";
  }
}

}  // namespace mend::testing::fake_llm
