#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "mend/base/env.h"
#include "mend/base/result.h"
#include "mend/llm/provider.h"

namespace mend::llm {

// Everything needed to build a provider; `app` fills it from the effective configuration.
struct ProviderOptions {
  std::string kind = "scripted";  // "openai" | "anthropic" | "scripted"
  std::string model;
  std::string base_url;  // empty: the provider's public default
  std::string api_key;   // secret: never logged, never in an error message
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds timeout{120'000};  // total time of one request
  bool reuse_connections = true;               // HTTP keep-alive
  size_t max_response_bytes = 32u << 20;       // larger bodies are refused
  std::string prices_file;                     // optional JSON price table overriding defaults
  std::string script_file;                     // scripted: the JSON script
};

// Builds the provider named by `options.kind`. kInvalidArgument for an unknown kind or a missing
// required option (naming which).
Result<std::unique_ptr<LlmProvider>> CreateProvider(const ProviderOptions& options, Env env);

}  // namespace mend::llm
