#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "llm/http_client.h"
#include "mend/base/clock.h"
#include "mend/base/status.h"

namespace mend::llm {

// Maps a non-2xx response of `provider` ("openai", "anthropic", ...) to a Status whose code and
// class follow docs/llm_providers.md (see provider.h for the table). The message is
// "<provider> HTTP <status>: <the provider's error message>" with the provider text made valid
// UTF-8 and cut to about 300 bytes; a non-JSON body (a proxy's HTML page) is described as such.
// detail_code() is "http_<status>", except "context_length_exceeded" (400, permanent) and
// "insufficient_quota" (429, permanent: retrying does not refill a quota). `now` resolves a
// Retry-After given as an HTTP-date.
Status HttpErrorToStatus(std::string_view provider, const HttpResponse& response, Time now);

// A 2xx response whose body is unusable (not JSON, truncated, missing required fields): transient,
// since a proxy or an overloaded server produces these and the next attempt usually works.
// detail_code "bad_response".
Status BadResponseError(std::string_view provider, const HttpResponse& response,
                        std::string_view problem);

// The delay asked for by a Retry-After value: delta-seconds ("120") or an HTTP-date. Dates in the
// past give 0; values above one hour are capped at one hour. nullopt when unparseable.
std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value, Time now);

}  // namespace mend::llm

namespace mend::llm {

// `s` with every occurrence of `secret` in its message replaced by "[redacted]", keeping code,
// detail code, retry-after and class. Providers pass every error through this with their API key,
// because a server or proxy may echo request headers back in an error body.
Status RedactSecret(const Status& s, std::string_view secret);

// `s` with `message` in place of its message, keeping code, detail code, retry-after and class.
Status WithMessage(const Status& s, std::string_view message);

// Whether a request carried an API key.
enum class KeySent { kNo, kYes };

// A 401 (kUnauthenticated) says which variable holds the key: "...; no API key was sent: set
// MEND_API_KEY (or OPENAI_API_KEY)" or "...; the API key was refused: check MEND_API_KEY (or
// OPENAI_API_KEY)". Other errors are returned as they are.
Status WithApiKeyHint(const Status& s, std::string_view key_variable, KeySent sent);

}  // namespace mend::llm
