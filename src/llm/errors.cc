#include "llm/errors.h"

#include <time.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "llm/json_util.h"
#include "mend/base/retry_after.h"

namespace mend::llm {
namespace {

constexpr std::chrono::milliseconds kMaxRetryAfter = std::chrono::hours(1);
constexpr size_t kMaxProviderText = 300;

// What a provider said about an error, from the shapes in use: OpenAI and Anthropic
// {"error": {"message", "type", "code"}}, and {"error": "text"} or {"message"|"detail": "text"}
// from OpenAI-compatible servers.
struct ProviderErrorBody {
  bool is_json = false;
  std::string message;
  std::string code;  // error.code, else error.type
  std::string type;
};

ProviderErrorBody ParseErrorBody(std::string_view body) {
  ProviderErrorBody out;
  Result<Json> parsed = ParseJson(body);
  if (!parsed.ok() || !parsed->is_object()) return out;
  out.is_json = true;
  const Json& j = *parsed;
  if (const Json* err = Member(j, "error"); err != nullptr && err->is_object()) {
    out.message = StringMember(*err, "message").value_or("");
    out.type = StringMember(*err, "type").value_or("");
    out.code = StringMember(*err, "code").value_or(out.type);
  } else if (auto text = StringMember(j, "error")) {
    out.message = *text;
  }
  if (out.message.empty()) out.message = StringMember(j, "message").value_or("");
  if (out.message.empty()) out.message = StringMember(j, "detail").value_or("");
  return out;
}

bool ContainsNoCase(std::string_view haystack, std::string_view needle) {
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) {
                          return std::tolower(static_cast<unsigned char>(a)) ==
                                 std::tolower(static_cast<unsigned char>(b));
                        });
  return it != haystack.end();
}

// Providers report an over-long prompt as a plain 400; only the body tells it apart. OpenAI sends
// the code, Anthropic and most compatible servers only a message.
bool IsContextLengthError(const ProviderErrorBody& e) {
  return e.code == "context_length_exceeded" || e.type == "context_length_exceeded" ||
         ContainsNoCase(e.message, "context length") ||
         ContainsNoCase(e.message, "context window") ||
         ContainsNoCase(e.message, "prompt is too long");
}

Status StatusForHttpCode(int status, const std::string& message) {
  switch (status) {
    case 400:
    case 422:
      return InvalidArgumentError(message);
    case 401:
      return UnauthenticatedError(message);
    case 403:
      return PermissionDeniedError(message);
    case 404:
      return NotFoundError(message);  // a wrong model name or base URL: permanent
    case 408:
      return DeadlineExceededError(message);
    case 409:
      return UnavailableError(message);  // a conflicting concurrent request; try again later
    case 413:
      return FailedPreconditionError(message);  // payload too large: the same request never fits
    case 429:
      return ResourceExhaustedError(message);
    default:
      break;
  }
  // Other 3xx/4xx mean the request or the configuration is wrong; 5xx (and Anthropic's 529
  // "overloaded") are outages.
  if (status >= 300 && status < 500) return FailedPreconditionError(message);
  return UnavailableError(message);
}

std::string DescribeBody(std::string_view provider, const HttpResponse& r,
                         const ProviderErrorBody& e) {
  std::string head = std::string(provider) + " HTTP " + std::to_string(r.status);
  if (!e.is_json) {
    std::string type = r.content_type.empty() ? "no content type" : ForMessage(r.content_type, 60);
    if (r.body.empty()) return head + " with an empty body (" + type + ")";
    return head + " with a non-JSON body (" + type + "): " + ForMessage(r.body, 100);
  }
  if (!e.message.empty()) return head + ": " + ForMessage(e.message, kMaxProviderText);
  return head + ": " + ForMessage(r.body, kMaxProviderText);
}

}  // namespace

std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value, Time now) {
  std::optional<Duration> delay = mend::ParseRetryAfter(value, now, kMaxRetryAfter);
  if (!delay.has_value()) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(*delay);
}

Status HttpErrorToStatus(std::string_view provider, const HttpResponse& response, Time now) {
  ProviderErrorBody e = ParseErrorBody(response.body);
  std::string message = DescribeBody(provider, response, e);
  Status s = StatusForHttpCode(response.status, message)
                 .WithDetailCode("http_" + std::to_string(response.status));
  if (response.status == 400 && IsContextLengthError(e)) {
    s = s.WithDetailCode("context_length_exceeded");
  }
  if (response.status == 429 &&
      (e.code == "insufficient_quota" || e.type == "insufficient_quota")) {
    return s.WithDetailCode("insufficient_quota").WithClass(ErrorClass::kPermanent);
  }
  if (IsRetryable(s) && !response.retry_after.empty()) {
    if (auto delay = ParseRetryAfter(response.retry_after, now)) s = s.WithRetryAfter(*delay);
  }
  return s;
}

Status BadResponseError(std::string_view provider, const HttpResponse& response,
                        std::string_view problem) {
  std::string message = std::string(provider) + " HTTP " + std::to_string(response.status) +
                        ": unusable response body (" + std::string(problem) + ")";
  if (response.body.empty()) {
    message += ", body empty";
  } else {
    message += ", starts with: " + ForMessage(response.body, 100);
  }
  return UnavailableError(message).WithDetailCode("bad_response");
}

}  // namespace mend::llm

namespace mend::llm {

Status RedactSecret(const Status& s, std::string_view secret) {
  // Very short "secrets" (a placeholder like "x") would shred ordinary words.
  if (s.ok() || secret.size() < 4) return s;
  std::string message(s.message());
  size_t pos = message.find(secret);
  if (pos == std::string::npos) return s;
  while (pos != std::string::npos) {
    message.replace(pos, secret.size(), "[redacted]");
    pos = message.find(secret, pos + 10);
  }
  return WithMessage(s, message);
}

Status WithMessage(const Status& s, std::string_view message) {
  Status out(s.code(), message);
  if (!s.detail_code().empty()) out = out.WithDetailCode(s.detail_code());
  if (auto delay = s.retry_after()) out = out.WithRetryAfter(*delay);
  if (auto c = s.class_override()) out = out.WithClass(*c);
  return out;
}

Status WithApiKeyHint(const Status& s, std::string_view key_variable, KeySent sent) {
  if (s.code() != StatusCode::kUnauthenticated) return s;
  const std::string variables = "MEND_API_KEY (or " + std::string(key_variable) + ")";
  std::string message(s.message());
  message += sent == KeySent::kNo ? "; no API key was sent: set " + variables
                                  : "; the API key was refused: check " + variables;
  return WithMessage(s, message);
}

}  // namespace mend::llm
