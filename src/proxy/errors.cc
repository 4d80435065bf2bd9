#include "proxy/errors.h"

#include <nlohmann/json.hpp>

namespace mend::proxy {
namespace {

std::string_view OpenAiType(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 429:
      return "rate_limit_error";
    default:
      return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

std::string_view AnthropicType(int status) {
  switch (status) {
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
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

}  // namespace

std::string ErrorBody(ErrorStyle style, int status, std::string_view message,
                      std::string_view code) {
  nlohmann::json body;
  if (style == ErrorStyle::kAnthropic) {
    body = {{"type", "error"}, {"error", {{"type", AnthropicType(status)}, {"message", message}}}};
  } else {
    body = {{"error",
             {{"message", message},
              {"type", OpenAiType(status)},
              {"param", nullptr},
              {"code", code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code)}}}};
  }
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string StreamErrorEvent(ErrorStyle style, bool responses_api, std::string_view message) {
  const auto dump = [](const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  if (style == ErrorStyle::kAnthropic) {
    return "event: error\ndata: " +
           dump({{"type", "error"}, {"error", {{"type", "api_error"}, {"message", message}}}}) +
           "\n\n";
  }
  if (responses_api) {
    return "event: error\ndata: " +
           dump({{"type", "error"},
                 {"code", "upstream_error"},
                 {"message", message},
                 {"param", nullptr}}) +
           "\n\n";
  }
  return "data: " +
         dump({{"error",
                {{"message", message},
                 {"type", "server_error"},
                 {"param", nullptr},
                 {"code", "upstream_error"}}}}) +
         "\n\n";
}

}  // namespace mend::proxy
