#pragma once

// LlmProvider, mend's one interface to a chat model: Complete() returns a completion, or a Status
// whose class drives retries and recovery (docs/llm_providers.md). Providers never retry by
// themselves and are thread-safe.

#include <string_view>

#include "mend/base/result.h"
#include "mend/llm/types.h"

namespace mend::llm {

/// A chat model. Complete() makes one request and returns one completion, or an error whose class
/// (ClassOf) drives recovery (docs/llm_providers.md):
///   transient  kUnavailable (5xx, connection refused/reset, malformed or truncated body),
///              kDeadlineExceeded (timeouts), kResourceExhausted (429, with retry_after() when the
///              server sent Retry-After)
///   permanent  kInvalidArgument (400, context too long), kFailedPrecondition (413 payload
///              too large), kNotFound (404: a wrong model or base URL)
///   auth       kUnauthenticated (401), kPermissionDenied (403); never an outage
/// The status's detail_code() carries "http_<status>" for HTTP errors, except
/// "context_length_exceeded" (a 400 for a prompt too long) and "insufficient_quota" (a 429 that is
/// permanent: WithClass(kPermanent)); transport failures carry "transport", "timeout" or
/// "response_too_large", and unusable 2xx bodies "bad_response" (transient). Messages never contain
/// the API key. Providers do not retry: retrying is the caller's policy. Implementations are
/// thread-safe: concurrent Complete() calls are allowed.
class LlmProvider {
 public:
  virtual ~LlmProvider() = default;
  /// Sends one request and returns the completion, or an error as above.
  virtual Result<Completion> Complete(const CompletionRequest& request) = 0;
  /// "openai", "anthropic", "scripted".
  virtual std::string_view name() const = 0;
};

}  // namespace mend::llm
