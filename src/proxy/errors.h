#pragma once

// Error answers of the proxy in the error shape of the API the client speaks, so an SDK raises
// its own error type with the status and message.

#include <string>
#include <string_view>

namespace mend::proxy {

enum class ErrorStyle {
  kOpenAi,     // {"error":{"message","type","param","code"}}
  kAnthropic,  // {"type":"error","error":{"type","message"}}
};

// The body of an error answer with HTTP `status`. The error type is the API's for the status
// (invalid_request_error, authentication_error, not_found_error, ...); `code` is OpenAI's code
// ("" for null) and is ignored in the Anthropic style.
std::string ErrorBody(ErrorStyle style, int status, std::string_view message,
                      std::string_view code = "");

// The event that ends a stream the upstream broke off: an OpenAI `data: {"error":...}` event or
// an Anthropic / Responses `event: error` event, each followed by a blank line.
std::string StreamErrorEvent(ErrorStyle style, bool responses_api, std::string_view message);

}  // namespace mend::proxy
