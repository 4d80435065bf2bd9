#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/fake_llm_server.h"

// The JSON form of scripted responses, routes and recorded requests.
namespace mend::testing {
namespace {

using Json = nlohmann::json;

struct FaultName {
  const char* name;
  FakeResponse::Fault fault;
};
constexpr FaultName kFaults[] = {
    {"none", FakeResponse::Fault::kNone},
    {"malformed_json", FakeResponse::Fault::kMalformedJson},
    {"truncated_body", FakeResponse::Fault::kTruncatedBody},
    {"html_error_page", FakeResponse::Fault::kHtmlErrorPage},
    {"drop_connection", FakeResponse::Fault::kDropConnection},
    {"empty_body", FakeResponse::Fault::kEmptyBody},
    {"non_utf8", FakeResponse::Fault::kNonUtf8},
    {"oversized_body", FakeResponse::Fault::kOversizedBody},
    {"stream_cut", FakeResponse::Fault::kStreamCut},
};

// Reads one field of a response object; `where` names it in errors ("response 2, key status").
class FieldReader {
 public:
  FieldReader(const Json& value, std::string where) : value_(value), where_(std::move(where)) {}

  Status Int(int64_t min, int64_t* out) const {
    if (!value_.is_number_integer() || value_.get<int64_t>() < min) {
      return Error("an integer >= " + std::to_string(min));
    }
    *out = value_.get<int64_t>();
    return OkStatus();
  }
  // An integer that fits an int.
  Status SmallInt(int min, int* out) const {
    int64_t n = 0;
    MEND_RETURN_IF_ERROR(Int(min, &n));
    if (n > std::numeric_limits<int>::max()) {
      return Error("an integer <= " + std::to_string(std::numeric_limits<int>::max()));
    }
    *out = static_cast<int>(n);
    return OkStatus();
  }
  Status String(std::string* out) const {
    if (!value_.is_string()) return Error("a string");
    *out = value_.get<std::string>();
    return OkStatus();
  }
  Status Bool(bool* out) const {
    if (!value_.is_boolean()) return Error("true or false");
    *out = value_.get<bool>();
    return OkStatus();
  }
  Status Fault(FakeResponse::Fault* out) const {
    for (const FaultName& f : kFaults) {
      if (value_.is_string() && value_.get<std::string>() == f.name) {
        *out = f.fault;
        return OkStatus();
      }
    }
    return Error("a fault name such as \"drop_connection\"");
  }
  Status ToolCalls(std::vector<FakeResponse::ToolCall>* out) const;
  Status Embeddings(std::vector<std::vector<float>>* out) const;

  Status Unknown() const { return InvalidArgumentError(where_ + ": unknown key"); }
  Status Error(const std::string& expected) const {
    return InvalidArgumentError(where_ + ": expected " + expected + ", got " +
                                value_.dump(-1, ' ', false, Json::error_handler_t::replace));
  }

 private:
  const Json& value_;
  std::string where_;
};

Status FieldReader::ToolCalls(std::vector<FakeResponse::ToolCall>* out) const {
  if (!value_.is_array()) return Error("an array of {\"id\",\"name\",\"arguments\"}");
  for (const Json& call : value_) {
    if (!call.is_object() || !call.contains("name") || !call["name"].is_string()) {
      return Error("tool calls with a string \"name\"");
    }
    FakeResponse::ToolCall parsed;
    parsed.name = call["name"].get<std::string>();
    if (call.contains("id") && !call["id"].is_string()) return Error("a string tool call \"id\"");
    parsed.id = call.contains("id") ? call["id"].get<std::string>()
                                    : "call_" + std::to_string(out->size() + 1);
    Json arguments = call.contains("arguments") ? call["arguments"] : Json::object();
    parsed.arguments = arguments.is_string() ? arguments.get<std::string>() : arguments.dump();
    out->push_back(std::move(parsed));
  }
  return OkStatus();
}

Status FieldReader::Embeddings(std::vector<std::vector<float>>* out) const {
  if (!value_.is_array()) return Error("an array of arrays of numbers");
  for (const Json& vector : value_) {
    if (!vector.is_array()) return Error("an array of arrays of numbers");
    std::vector<float>& parsed = out->emplace_back();
    for (const Json& x : vector) {
      if (!x.is_number()) return Error("an array of arrays of numbers");
      parsed.push_back(x.get<float>());
    }
  }
  return OkStatus();
}

Status ReadField(const std::string& key, const FieldReader& in, FakeResponse* r) {
  int64_t n = 0;
  if (key == "status") {
    MEND_RETURN_IF_ERROR(in.Int(100, &n));
    if (n > 599) return in.Error("an HTTP status");
    r->status = static_cast<int>(n);
  } else if (key == "latency_ms") {
    MEND_RETURN_IF_ERROR(in.Int(0, &n));
    r->latency = std::chrono::milliseconds(n);
  } else if (key == "retry_after_seconds") {
    MEND_RETURN_IF_ERROR(in.Int(0, &n));
    r->retry_after_seconds = static_cast<int>(n);
  } else if (key == "oversize_bytes") {
    MEND_RETURN_IF_ERROR(in.Int(0, &n));
    r->oversize_bytes = static_cast<size_t>(n);
  } else if (key == "input_tokens") {
    return in.Int(0, &r->input_tokens);
  } else if (key == "output_tokens") {
    return in.Int(0, &r->output_tokens);
  } else if (key == "text") {
    return in.String(&r->text);
  } else if (key == "finish_reason") {
    return in.String(&r->finish_reason);
  } else if (key == "error_message") {
    return in.String(&r->error_message);
  } else if (key == "error_type") {
    return in.String(&r->error_type);
  } else if (key == "raw_body") {
    return in.String(&r->raw_body);
  } else if (key == "omit_usage") {
    return in.Bool(&r->omit_usage);
  } else if (key == "fault") {
    return in.Fault(&r->fault);
  } else if (key == "tool_calls") {
    return in.ToolCalls(&r->tool_calls);
  } else if (key == "embeddings") {
    return in.Embeddings(&r->embeddings);
  } else if (key == "pause_after_events") {
    return in.SmallInt(-1, &r->pause_after_events);
  } else if (key == "pause_again_after_events") {
    return in.SmallInt(-1, &r->pause_again_after_events);
  } else if (key == "argument_pieces") {
    return in.SmallInt(1, &r->argument_pieces);
  } else {
    return in.Unknown();
  }
  return OkStatus();
}

Result<FakeResponse> FromJson(const Json& json, const std::string& where) {
  if (!json.is_object()) return InvalidArgumentError(where + ": expected a JSON object");
  FakeResponse response;
  for (const auto& [key, value] : json.items()) {
    MEND_RETURN_IF_ERROR(ReadField(key, FieldReader(value, where + ", key " + key), &response));
  }
  return response;
}

// nlohmann throws on malformed text; the exception ends here as a Status. `what` names the text.
Result<Json> ParseJson(std::string_view text, const char* what = "script") {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    return InvalidArgumentError(std::string(what) + " is not valid JSON: " + e.what());
  }
}

Status ReadContains(const FieldReader& in, const Json& value, std::vector<std::string>* out) {
  if (value.is_string()) {
    out->push_back(value.get<std::string>());
    return OkStatus();
  }
  if (!value.is_array()) return in.Error("a string or an array of strings");
  for (const Json& item : value) {
    if (!item.is_string()) return in.Error("a string or an array of strings");
    out->push_back(item.get<std::string>());
  }
  return OkStatus();
}

Status ReadResponses(const FieldReader& in, const Json& value, const std::string& where,
                     std::vector<FakeResponse>* out) {
  if (!value.is_array()) return in.Error("an array of responses");
  for (size_t i = 0; i < value.size(); ++i) {
    MEND_ASSIGN_OR_RETURN(FakeResponse r,
                          FromJson(value[i], where + ", response " + std::to_string(i)));
    out->push_back(std::move(r));
  }
  return OkStatus();
}

Result<FakeRoute> RouteFromJson(const Json& json, const std::string& where) {
  if (!json.is_object()) return InvalidArgumentError(where + ": expected a JSON object");
  FakeRoute route;
  for (const auto& [key, value] : json.items()) {
    FieldReader in(value, where + ", key " + key);
    if (key == "name") {
      MEND_RETURN_IF_ERROR(in.String(&route.name));
    } else if (key == "contains") {
      MEND_RETURN_IF_ERROR(ReadContains(in, value, &route.contains));
    } else if (key == "responses") {
      MEND_RETURN_IF_ERROR(ReadResponses(in, value, where, &route.responses));
    } else if (key == "cycle") {
      bool cycle = true;
      MEND_RETURN_IF_ERROR(in.Bool(&cycle));
      route.after_last = cycle ? FakeRoute::AfterLast::kCycle : FakeRoute::AfterLast::kRepeatLast;
    } else {
      return in.Unknown();
    }
  }
  return route;
}

}  // namespace

Result<std::vector<FakeResponse>> ParseFakeScript(std::string_view text) {
  MEND_ASSIGN_OR_RETURN(Json json, ParseJson(text));
  if (!json.is_array()) return InvalidArgumentError("script must be a JSON array of responses");
  std::vector<FakeResponse> responses;
  for (size_t i = 0; i < json.size(); ++i) {
    MEND_ASSIGN_OR_RETURN(FakeResponse r, FromJson(json[i], "response " + std::to_string(i)));
    responses.push_back(std::move(r));
  }
  return responses;
}

Result<FakeResponse> ParseFakeResponse(std::string_view text) {
  MEND_ASSIGN_OR_RETURN(Json json, ParseJson(text));
  return FromJson(json, "response");
}

Result<std::vector<FakeRoute>> ParseFakeRoutes(std::string_view text) {
  MEND_ASSIGN_OR_RETURN(Json json, ParseJson(text, "routes file"));
  if (!json.is_array()) return InvalidArgumentError("routes must be a JSON array of routes");
  std::vector<FakeRoute> routes;
  for (size_t i = 0; i < json.size(); ++i) {
    MEND_ASSIGN_OR_RETURN(FakeRoute route, RouteFromJson(json[i], "route " + std::to_string(i)));
    routes.push_back(std::move(route));
  }
  return routes;
}

std::string RecordedRequestToJsonLine(const RecordedRequest& request) {
  Json headers = Json::object();
  for (const auto& [name, value] : request.headers) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool secret = lower == "authorization" || lower == "x-api-key";
    headers[lower] = secret ? "<redacted>" : value;
  }
  Json line = {{"method", request.method},
               {"path", request.path},
               {"connection_id", request.connection_id},
               {"headers", headers},
               {"body", request.body}};
  return line.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace mend::testing
