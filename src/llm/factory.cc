#include "mend/llm/factory.h"

#include <utility>

#include "llm/anthropic_provider.h"
#include "llm/openai_embedder.h"
#include "llm/openai_provider.h"
#include "mend/llm/scripted_provider.h"

namespace mend::llm {
namespace {

constexpr char kOpenAiUrl[] = "https://api.openai.com";
constexpr char kAnthropicUrl[] = "https://api.anthropic.com";

Result<std::shared_ptr<const PriceTable>> Prices(const ProviderOptions& options, Env env) {
  if (options.prices_file.empty())
    return std::make_shared<const PriceTable>(PriceTable::Defaults());
  if (env.fs == nullptr) return InvalidArgumentError("a prices_file needs a file system");
  MEND_ASSIGN_OR_RETURN(PriceTable table, LoadPriceFile(*env.fs, options.prices_file));
  return std::make_shared<const PriceTable>(std::move(table));
}

HttpProviderConfig HttpConfig(const ProviderOptions& options, Env env,
                              std::shared_ptr<const PriceTable> prices, const char* default_url) {
  HttpProviderConfig c;
  c.model = options.model;
  c.base_url = options.base_url.empty() ? default_url : options.base_url;
  c.api_key = options.api_key;
  c.http.connect_timeout = options.connect_timeout;
  c.http.timeout = options.timeout;
  c.http.reuse_connections = options.reuse_connections;
  c.http.max_response_bytes = options.max_response_bytes;
  c.prices = std::move(prices);
  c.clock = env.clock;
  return c;
}

}  // namespace

Result<std::unique_ptr<LlmProvider>> CreateProvider(const ProviderOptions& options, Env env) {
  const std::string& kind = options.kind;
  if (kind != "openai" && kind != "anthropic" && kind != "scripted") {
    return InvalidArgumentError("unknown provider \"" + kind +
                                "\"; expected one of: openai, anthropic, scripted");
  }
  MEND_ASSIGN_OR_RETURN(std::shared_ptr<const PriceTable> prices, Prices(options, env));
  if (kind == "scripted") {
    if (options.script_file.empty()) {
      return InvalidArgumentError("provider \"scripted\" needs a script file");
    }
    if (env.fs == nullptr) return InvalidArgumentError("provider \"scripted\" needs a file system");
    MEND_ASSIGN_OR_RETURN(auto p, ScriptedProvider::FromFile(*env.fs, options.script_file, prices));
    return std::unique_ptr<LlmProvider>(std::move(p));
  }
  if (options.model.empty()) {
    return InvalidArgumentError("provider \"" + kind + "\" needs a model");
  }
  if (kind == "openai") {
    return std::unique_ptr<LlmProvider>(
        std::make_unique<OpenAiProvider>(HttpConfig(options, env, prices, kOpenAiUrl)));
  }
  return std::unique_ptr<LlmProvider>(
      std::make_unique<AnthropicProvider>(HttpConfig(options, env, prices, kAnthropicUrl)));
}

Result<std::unique_ptr<Embedder>> CreateEmbedder(const EmbedderOptions& options, Env env) {
  if (options.kind == "hashing") {
    if (options.dimension < 1) return InvalidArgumentError("hashing embedder needs dimension >= 1");
    return std::unique_ptr<Embedder>(std::make_unique<HashingEmbedder>(options.dimension));
  }
  if (options.kind != "openai") {
    return InvalidArgumentError("unknown embedder \"" + options.kind +
                                "\"; expected one of: hashing, openai");
  }
  if (options.model.empty()) return InvalidArgumentError("embedder \"openai\" needs a model");
  ProviderOptions p;
  p.model = options.model;
  p.base_url = options.base_url;
  p.api_key = options.api_key;
  p.connect_timeout = options.connect_timeout;
  p.timeout = options.timeout;
  p.reuse_connections = options.reuse_connections;
  p.max_response_bytes = options.max_response_bytes;
  return std::unique_ptr<Embedder>(std::make_unique<OpenAiEmbedder>(
      HttpConfig(p, env, std::make_shared<const PriceTable>(), kOpenAiUrl), options.dimension));
}

}  // namespace mend::llm
