#pragma once

// ProbeModels, the cheapest request that shows whether a provider's endpoint answers and accepts
// the key, without a model call (`mend doctor`). Thread-safe.

#include <chrono>
#include <string>

#include "mend/base/result.h"
#include "mend/llm/factory.h"

namespace mend::llm {

/// What the provider's model list endpoint answered.
struct ModelsProbe {
  std::string url;      ///< the URL asked, without user info
  int http_status = 0;  ///< the status it answered with
};

/// Asks the model list of the provider `options` describe, the cheapest request that shows whether
/// its endpoint answers and accepts the key, without a model call: `GET {base_url}/v1/models` with
/// `Authorization: Bearer <key>` for "openai", with `x-api-key` and `anthropic-version` for
/// "anthropic" (a base URL ending in "/v1" is accepted, as the providers accept it; empty: the
/// provider's public endpoint). `timeout` bounds the whole request and also the connection, unless
/// `options.connect_timeout` is shorter. Any HTTP status is a result, not an error: the caller
/// decides what a 401 or a 404 means. Errors: kInvalidArgument for another provider kind or a
/// malformed URL; kUnavailable (detail "unreachable") when no connection could be made (refused,
/// DNS, reset); kDeadlineExceeded (detail "timeout"); kFailedPrecondition (detail "tls") when the
/// server's certificate is refused. Messages name the URL without user info and never hold the
/// key. Blocks for at most about `timeout`; thread-safe.
Result<ModelsProbe> ProbeModels(const ProviderOptions& options, std::chrono::milliseconds timeout);

}  // namespace mend::llm
