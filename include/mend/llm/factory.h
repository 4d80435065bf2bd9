#pragma once

// Building providers and embedders from options (docs/llm_providers.md): CreateProvider (openai,
// anthropic, scripted) and CreateEmbedder (hashing, openai). app fills the options from the
// configuration.

#include <chrono>
#include <memory>
#include <string>

#include "mend/base/env.h"
#include "mend/base/result.h"
#include "mend/llm/embedder.h"
#include "mend/llm/provider.h"

namespace mend::llm {

/// Everything needed to build a provider; `app` fills it from the effective configuration.
struct ProviderOptions {
  std::string kind = "scripted";  ///< "openai" | "anthropic" | "scripted"
  std::string model;              ///< required for openai and anthropic
  std::string base_url;           ///< empty: the provider's public default
  std::string api_key;            ///< secret: never logged, never in an error message
  std::chrono::milliseconds connect_timeout{10'000};  ///< opening a connection
  std::chrono::milliseconds timeout{120'000};         ///< total time of one request
  bool reuse_connections = true;                      ///< HTTP keep-alive
  size_t max_response_bytes = 32u << 20;              ///< larger bodies are refused
  std::string prices_file;  ///< optional JSON price table overriding defaults
  std::string script_file;  ///< scripted: the JSON script
};

/// Builds the provider named by `options.kind`. kInvalidArgument for an unknown kind or a missing
/// required option (naming which).
/// The price table comes from `options.prices_file` (over the defaults) when set, else the
/// defaults. Kinds "openai" and "anthropic" need `model`; "scripted" needs `script_file` (read via
/// env.fs). Errors reading the price or script file are returned as they come, annotated with the
/// path.
Result<std::unique_ptr<LlmProvider>> CreateProvider(const ProviderOptions& options, Env env);

/// Everything needed to build an embedder.
struct EmbedderOptions {
  std::string kind = "hashing";  ///< "hashing" | "openai"
  std::string model;             ///< openai: e.g. "text-embedding-3-small"
  int dimension = 256;           ///< hashing: the vector length; openai: expected length, 0 = any
  std::string base_url;          ///< empty: the provider's public default
  std::string api_key;           ///< secret: never logged, never in an error message
  std::chrono::milliseconds connect_timeout{10'000};  ///< opening a connection
  std::chrono::milliseconds timeout{60'000};          ///< total time of one request
  bool reuse_connections = true;                      ///< HTTP keep-alive
  size_t max_response_bytes = 64u << 20;              ///< larger bodies are refused
};

/// Builds the embedder named by `options.kind`. kInvalidArgument for an unknown kind (listing the
/// accepted ones) or a missing model for "openai".
Result<std::unique_ptr<Embedder>> CreateEmbedder(const EmbedderOptions& options, Env env);

}  // namespace mend::llm
