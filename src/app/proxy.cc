// The proxy's wiring (mend/app/proxy.h, docs/proxy.md): configuration to options, and the
// memory, lessons, conversations, traces and metrics of the runtime handed to the service.
#include "mend/app/proxy.h"

#include <string>
#include <utility>

#include "mend/app/lessons.h"
#include "mend/app/memory_hooks.h"
#include "mend/app/run_model.h"
#include "mend/app/runtime.h"
#include "mend/base/hash.h"
#include "mend/base/home_layout.h"

namespace mend::app {
namespace {

// Memory for the proxy: exactly what a run for the same task and workspace would be given.
class RuntimeMemory final : public proxy::MemorySource {
 public:
  explicit RuntimeMemory(Runtime& runtime) : runtime_(runtime) {}
  Result<std::string> SectionFor(const std::string& task, const std::string& workspace) override {
    MEND_ASSIGN_OR_RETURN(memory::Retrieval retrieval, RecallForTask(runtime_, task, workspace));
    return std::move(retrieval.section);
  }

 private:
  Runtime& runtime_;
};

// The upstream a provider's base URL names, as that API's SDK takes it: OpenAI's with /v1,
// Anthropic's without (the providers accept both spellings, docs/llm_providers.md).
std::string UpstreamOfProvider(std::string base, proxy::UpstreamKind kind) {
  while (base.ends_with('/')) base.pop_back();
  if (base.ends_with("/v1")) base.resize(base.size() - 3);
  if (kind == proxy::UpstreamKind::kAnthropic) {
    return base.empty() ? "https://api.anthropic.com" : base;
  }
  return (base.empty() ? "https://api.openai.com" : base) + "/v1";
}

Status AddToken(const std::string& entry, std::vector<proxy::ClientToken>& tokens) {
  proxy::ClientToken token;
  const size_t eq = entry.find('=');
  token.token = entry.substr(0, eq);
  if (token.token.empty()) {
    return InvalidArgumentError("proxy.tokens: an entry has an empty token");
  }
  token.workspace = eq == std::string::npos ? "" : entry.substr(eq + 1);
  // A token's own scope unless one was named: its lessons reach no other client's prompts.
  if (token.workspace.empty()) token.workspace = "proxy-" + Sha256Hex(token.token).substr(0, 12);
  for (const proxy::ClientToken& other : tokens) {
    if (other.token == token.token) return OkStatus();
  }
  tokens.push_back(std::move(token));
  return OkStatus();
}

}  // namespace

Result<proxy::ProxyOptions> ProxyOptionsOf(const Runtime& runtime) {
  const Config& config = runtime.config;
  proxy::ProxyOptions options;
  std::string kind = config.GetString("proxy.upstream_kind");
  if (kind.empty()) {
    kind = config.GetString("provider.name");
    if (kind == "scripted") kind = "openai";
  }
  Result<proxy::UpstreamKind> parsed = proxy::ParseUpstreamKind(kind);
  if (!parsed.ok()) {
    return InvalidArgumentError("proxy.upstream_kind: " + std::string(parsed.status().message()));
  }
  options.upstream_kind = *parsed;
  options.upstream = config.GetString("proxy.upstream");
  if (options.upstream.empty()) {
    options.upstream =
        UpstreamOfProvider(config.GetString("provider.base_url"), options.upstream_kind);
  }
  options.upstream_api_key = config.GetString("proxy.upstream_api_key");
  if (options.upstream_api_key.empty()) {
    options.upstream_api_key = config.GetString("provider.api_key");
  }
  options.forward_client_key = config.GetBool("proxy.forward_client_key");
  if (const std::string& token = config.GetString("proxy.token"); !token.empty()) {
    // The single token's conversations share the default scope, as a run's do.
    options.tokens.push_back(proxy::ClientToken{token, ""});
  }
  for (const std::string& entry : config.GetList("proxy.tokens")) {
    MEND_RETURN_IF_ERROR(AddToken(entry, options.tokens));
  }
  options.max_body = static_cast<size_t>(config.GetInt("proxy.max_body"));
  options.memory = config.GetBool("memory.enabled");
  options.lesson_after = config.GetDuration("proxy.lesson_after");
  options.hint_after = static_cast<int>(config.GetInt("heal.progress.hint_after"));
  options.stop_after = static_cast<int>(config.GetInt("proxy.stop_after"));
  options.failure_patterns = config.GetList("proxy.failure_patterns");
  options.conversation_ttl = config.GetDuration("proxy.conversation_ttl");
  options.retry.max_attempts = static_cast<int>(config.GetInt("proxy.max_attempts"));
  options.outage_interval = config.GetDuration("recover.interval");
  return options;
}

Result<std::unique_ptr<Proxy>> OpenProxy(Runtime& runtime) {
  MEND_ASSIGN_OR_RETURN(proxy::ProxyOptions options, ProxyOptionsOf(runtime));
  auto parts = std::make_unique<Proxy>();
  parts->memory = std::make_unique<RuntimeMemory>(runtime);
  parts->prices = llm::PriceTable::Defaults();
  if (const std::string& file = runtime.config.GetString("provider.prices_file"); !file.empty()) {
    MEND_ASSIGN_OR_RETURN(parts->prices, llm::LoadPriceFile(*runtime.env.fs, file));
  }
  proxy::ProxyDeps deps;
  deps.clock = runtime.env.clock;
  deps.database_path = home::DatabaseFile(runtime.home);
  deps.memory = parts->memory.get();
  deps.lessons = runtime.lessons.enqueuer;
  deps.tracer = runtime.tracer.get();
  deps.metrics = runtime.metrics.get();
  deps.prices = &parts->prices;
  const agent::RunModel configured = NewRunModel(runtime, agent::AgentSpec{});
  const reflexion::LessonProvider lesson = LessonProviderFor(runtime, configured);
  deps.lesson_provider = lesson.provider;
  deps.lesson_base_url = lesson.base_url;
  deps.lesson_model = lesson.model;
  Result<std::unique_ptr<proxy::ProxyService>> service =
      proxy::ProxyService::Create(std::move(options), std::move(deps));
  if (!service.ok()) return service.status();
  parts->service = *std::move(service);
  return parts;
}

bool ServeMountsProxy(const Runtime& runtime) {
  return !runtime.config.GetString("proxy.upstream").empty();
}

}  // namespace mend::app
