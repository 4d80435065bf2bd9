// Which model a run talks to: recorded when it starts, kept when it is resumed (docs/runs.md).
#include "mend/app/run_model.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "app/deferred_provider.h"
#include "app/runtime_metrics_internal.h"
#include "app/runtime_parts.h"
#include "mend/app/runtime.h"
#include "mend/heal/recovery.h"

namespace mend::app {
namespace {

bool FromFlag(const Config& config, std::string_view key) {
  const ConfigValue* value = config.Find(key);
  return value != nullptr && value->source == ConfigSource::kFlag;
}

std::string AbsolutePath(const std::string& path) {
  if (path.empty()) return path;
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

Status ConfigInvalid(std::string message) {
  return InvalidArgumentError(std::move(message)).WithDetailCode(kConfigInvalidDetail);
}

}  // namespace

agent::RunModel NewRunModel(const Runtime& runtime, const agent::AgentSpec& spec) {
  const Config& config = runtime.config;
  agent::RunModel model;
  model.provider = internal::PartsOf(runtime).deferred != nullptr
                       ? config.GetString("provider.name")
                       : std::string(runtime.provider->name());
  model.base_url = config.GetString("provider.base_url");
  // A model given on the command line is the user's explicit choice for this invocation; a model
  // from the environment or config.toml is only the default for agents that name none.
  model.model = config.GetString("provider.model");
  if (!FromFlag(config, "provider.model") && !spec.model.empty()) model.model = spec.model;
  // A script is recorded by absolute path, so the run continues from any directory.
  if (model.provider == "scripted")
    model.script_file = AbsolutePath(config.GetString("provider.script_file"));
  return model;
}

agent::RunModel RunModelFor(const Runtime& runtime, const agent::AgentSpec& spec,
                            const agent::RunOrigin& origin) {
  const Config& config = runtime.config;
  agent::RunModel fresh = NewRunModel(runtime, spec);
  if (origin.model.empty()) return fresh;
  agent::RunModel model = origin.model;
  // A daemon's flags are defaults for the runs it starts, not a request to move every run it
  // recovers.
  if (runtime.provider_flag_scope == ProviderFlagScope::kNewRunsOnly) return model;
  if (FromFlag(config, "provider.name") && fresh.provider != model.provider) return fresh;
  if (FromFlag(config, "provider.base_url")) model.base_url = fresh.base_url;
  if (FromFlag(config, "provider.model")) model.model = fresh.model;
  if (FromFlag(config, "provider.script_file")) model.script_file = fresh.script_file;
  return model;
}

Status CheckRunModel(const Runtime& runtime, const agent::RunModel& model) {
  if (internal::PartsOf(runtime).deferred == nullptr)
    return OkStatus();  // an injected provider needs nothing
  const std::string& name = model.provider;
  if (name == "openai" || name == "anthropic") {
    if (!model.model.empty()) return OkStatus();
    return ConfigInvalid("provider.model is not set: provider " + name +
                         " needs a model (--model, MEND_MODEL, `model` under [provider] in "
                         "config.toml, or `model` in the agent's agent.toml)");
  }
  if (name == "scripted") {
    if (!model.script_file.empty()) return OkStatus();
    return ConfigInvalid(
        "provider.script_file is not set: provider scripted needs a script (--script-file, "
        "MEND_SCRIPT_FILE, or `script_file` under [provider] in config.toml)");
  }
  return ConfigInvalid("provider.name \"" + name +
                       "\" is unknown; expected openai, anthropic or scripted (--provider, "
                       "MEND_PROVIDER, or `name` under [provider] in config.toml)");
}

namespace {

// Whether `url` names this machine (localhost, 127.x.x.x, [::1]).
bool IsLoopbackUrl(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
  url = url.substr(0, url.find_first_of("/?#"));
  if (const size_t at = url.rfind('@'); at != std::string_view::npos) url.remove_prefix(at + 1);
  std::string_view host = url;
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    host = host.substr(1, close == std::string_view::npos ? close : close - 1);
  } else if (const size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    host = host.substr(0, colon);
  }
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

// The environment variable and config key of the key for runs recorded with `provider` while
// another one is configured.
struct OtherProviderKey {
  const char* variable;
  const char* config_key;
};
std::optional<OtherProviderKey> OtherKeyOf(std::string_view provider) {
  if (provider == "openai") return OtherProviderKey{"OPENAI_API_KEY", "provider.openai_api_key"};
  if (provider == "anthropic") {
    return OtherProviderKey{"ANTHROPIC_API_KEY", "provider.anthropic_api_key"};
  }
  return std::nullopt;
}

// The key a run recorded with `model` is sent with. provider.api_key belongs to provider.name:
// a run of another provider gets that provider's own key, and none when it has none (a server on
// this machine needs none). Another provider at another host without a key of its own is not
// configured here: the run is left to a process where it is (kProviderNotConfiguredDetail).
Result<std::string> ApiKeyFor(const Runtime& runtime, const agent::RunModel& model) {
  const Config& config = runtime.config;
  const std::string configured = config.GetString("provider.name");
  if (model.provider == configured) return config.GetString("provider.api_key");
  const std::optional<OtherProviderKey> other = OtherKeyOf(model.provider);
  if (!other.has_value()) return std::string();  // scripted: no key
  std::string key = config.GetString(other->config_key);
  if (!key.empty() || (!model.base_url.empty() && IsLoopbackUrl(model.base_url))) return key;
  const std::string where = model.base_url.empty() ? "its public endpoint" : model.base_url;
  return FailedPreconditionError(
             "the run recorded provider " + model.provider + " at " + where +
             ", which this process has no key for (it is configured for " + configured +
             "; its key is never sent to another provider): set " + other->variable + ", or `" +
             std::string(other->config_key).substr(sizeof("provider.") - 1) +
             "` under [provider] in config.toml, where this run should continue")
      .WithDetailCode(heal::kProviderNotConfiguredDetail);
}

void WarnWithoutApiKey(Runtime& runtime, const agent::RunModel& model) {
  if (!runtime.warn || !runtime.config.GetString("provider.api_key").empty()) return;
  if (model.provider != runtime.config.GetString("provider.name")) return;  // ApiKeyFor decides
  if (model.provider != "openai" && model.provider != "anthropic") return;
  // A server on this machine (Ollama, vLLM, llama.cpp) usually needs no key; a hosted one does.
  if (!model.base_url.empty() && IsLoopbackUrl(model.base_url)) return;
  {
    std::lock_guard<std::mutex> lock(internal::PartsOf(runtime).run_providers_mu);
    if (!internal::PartsOf(runtime)
             .warned_endpoints.insert(model.provider + "\n" + model.base_url)
             .second)
      return;
  }
  const std::string where = model.base_url.empty() ? "its public endpoint" : model.base_url;
  const std::string variable = model.provider == "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
  runtime.warn("warning: no API key is configured for provider " + model.provider + " at " + where +
               "; requests go out without one. Set MEND_API_KEY (or " + variable +
               "), or `api_key` under [provider] in config.toml");
}

}  // namespace

Result<llm::LlmProvider*> ProviderFor(Runtime& runtime, const agent::RunModel& model) {
  if (internal::PartsOf(runtime).deferred == nullptr) return runtime.provider.get();
  MEND_RETURN_IF_ERROR(CheckRunModel(runtime, model));
  WarnWithoutApiKey(runtime, model);
  const Config& config = runtime.config;
  if (model.provider == config.GetString("provider.name") &&
      model.base_url == config.GetString("provider.base_url") &&
      model.script_file == NewRunModel(runtime, {}).script_file) {
    // The configured provider; the run's model travels with each request.
    MEND_RETURN_IF_ERROR(PrepareProvider(runtime, model.model));
    return runtime.provider.get();
  }
  const std::string key = model.provider + "\n" + model.base_url + "\n" + model.script_file;
  std::lock_guard<std::mutex> lock(internal::PartsOf(runtime).run_providers_mu);
  auto it = internal::PartsOf(runtime).run_providers.find(key);
  if (it != internal::PartsOf(runtime).run_providers.end()) return it->second.get();
  llm::ProviderOptions options = ProviderOptionsFromConfig(config, model.model);
  MEND_ASSIGN_OR_RETURN(options.api_key, ApiKeyFor(runtime, model));
  options.kind = model.provider;
  options.base_url = model.base_url;
  options.model = model.model;
  options.script_file = model.script_file;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<llm::LlmProvider> built,
                        llm::CreateProvider(options, runtime.env));
  if (internal::PartsOf(runtime).run_metrics != nullptr) {
    built = std::make_unique<internal::MeteredProvider>(
        std::move(built), *internal::PartsOf(runtime).run_metrics, *runtime.env.clock,
        internal::MeterLabels{options.kind, options.model});
  }
  llm::LlmProvider* raw = built.get();
  internal::PartsOf(runtime).run_providers.emplace(key, std::move(built));
  return raw;
}

}  // namespace mend::app
