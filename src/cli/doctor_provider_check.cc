// `mend doctor`'s checks of the provider: a model, a key, and an endpoint that answers. The
// endpoint is asked for its model list, which costs no tokens; what its status means is decided
// here on the number and on the error's code, never on message text.
#include <string>

#include "cli/doctor_checks.h"
#include "mend/app/runtime.h"
#include "mend/base/home_layout.h"
#include "mend/llm/models_probe.h"

namespace mend::cli {
namespace {

void Add(DoctorChecks& out, std::string name, CheckStatus status, std::string detail,
         std::string fix = "") {
  out.push_back({std::move(name), status, std::move(detail), std::move(fix)});
}

const std::string& OriginOf(const Config& config, std::string_view key) {
  static const std::string kNone;
  const ConfigValue* value = config.Find(key);
  return value == nullptr ? kNone : value->origin;
}

// Where the configuration's endpoint is, for people: the URL with any password masked.
std::string EndpointText(const Config& config) {
  const ConfigValue* base_url = config.Find("provider.base_url");
  const std::string shown = base_url == nullptr ? "" : DisplayValue(*base_url);
  return shown.empty() ? "its public endpoint" : shown;
}

std::string KeyVariables(const std::string& kind) {
  return kind == "anthropic" ? "MEND_API_KEY or ANTHROPIC_API_KEY"
                             : "MEND_API_KEY or OPENAI_API_KEY";
}

void CheckScripted(const Config& config, FileSystem& fs, DoctorChecks& out) {
  const std::string& script = config.GetString("provider.script_file");
  if (script.empty()) {
    Add(out, "provider", CheckStatus::kFail, "scripted, but no script file is set",
        "give --script-file FILE or set MEND_SCRIPT_FILE (docs/scripted_provider_format.md)");
  } else if (!fs.Exists(script)) {
    Add(out, "provider", CheckStatus::kFail, "scripted, but the script " + script + " is missing",
        "point provider.script_file at an existing script");
  } else {
    Add(out, "provider", CheckStatus::kOk, "scripted, script " + script);
  }
}

void CheckModel(const Config& config, const std::string& agent_model, DoctorChecks& out) {
  const std::string& kind = config.GetString("provider.name");
  const std::string& model = config.GetString("provider.model");
  const std::string where = kind + " at " + EndpointText(config);
  if (!model.empty()) {
    Add(out, "provider", CheckStatus::kOk,
        where + ", model " + model + " (" + OriginOf(config, "provider.model") + ")");
  } else if (!agent_model.empty()) {
    Add(out, "provider", CheckStatus::kOk, where + ", model " + agent_model + " (agent.toml)");
  } else {
    Add(out, "provider", CheckStatus::kFail, where + ", but no model is set",
        "set MEND_MODEL, or model under [provider] in " +
            home::ConfigFile(config.GetString("home")) + ", or pass --model");
  }
}

void CheckKey(const Config& config, DoctorChecks& out) {
  const std::string& kind = config.GetString("provider.name");
  if (!config.GetString("provider.api_key").empty()) {
    Add(out, "api key", CheckStatus::kOk, "present (" + OriginOf(config, "provider.api_key") + ")");
    return;
  }
  const std::string fix = "set " + KeyVariables(kind) + " in the environment (or api_key under " +
                          "[provider] in config.toml)";
  if (config.GetString("provider.base_url").empty()) {
    Add(out, "api key", CheckStatus::kFail, "absent; " + kind + "'s public endpoint needs one",
        fix);
  } else {
    Add(out, "api key", CheckStatus::kWarn, "absent; fine for a server that needs none", fix);
  }
}

void ReportAnswer(const Config& config, const llm::ModelsProbe& probe, DoctorChecks& out) {
  const std::string answered = probe.url + " answered " + std::to_string(probe.http_status);
  const int status = probe.http_status;
  if (status == 401 || status == 403) {
    Add(out, "endpoint", CheckStatus::kFail, answered + ": key rejected",
        "check the key in " + KeyVariables(config.GetString("provider.name")) +
            ": it may be mistyped, revoked or for another provider");
  } else if ((status >= 200 && status < 300) || status == 404) {
    // Some compatible servers have no model list; a 404 still shows that the server answers.
    Add(out, "endpoint", CheckStatus::kOk,
        answered + (status == 404 ? " (no model list here, but it answers)" : ""));
  } else if (status == 429 || status >= 500) {
    Add(out, "endpoint", CheckStatus::kWarn, answered,
        "the provider is rate limiting or in trouble now; runs retry, and `mend recover` resumes "
        "the ones that fail");
  } else {
    Add(out, "endpoint", CheckStatus::kWarn, answered,
        "check provider.base_url: it may not be the API's base URL");
  }
}

void CheckEndpoint(const Config& config, Network network, std::chrono::milliseconds timeout,
                   DoctorChecks& out) {
  if (network == Network::kOffline) {
    Add(out, "endpoint", CheckStatus::kOk, "not checked (--offline)");
    return;
  }
  Result<llm::ModelsProbe> probe =
      llm::ProbeModels(app::ProviderOptionsFromConfig(config), timeout);
  if (probe.ok()) {
    ReportAnswer(config, *probe, out);
    return;
  }
  const std::string message(probe.status().message());
  switch (probe.status().code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      Add(out, "endpoint", CheckStatus::kFail, "unreachable: " + message,
          config.GetString("provider.base_url").empty()
              ? "check that this machine reaches the provider (network, proxy, firewall)"
              : "check provider.base_url (" + EndpointText(config) +
                    ") and that a server runs there and can be reached from here");
      return;
    case StatusCode::kInvalidArgument:
      Add(out, "endpoint", CheckStatus::kFail, message,
          "set provider.base_url to the API's http:// or https:// base URL");
      return;
    default:
      Add(out, "endpoint", CheckStatus::kFail, message,
          "check the server's certificate and the system's trusted certificates");
      return;
  }
}

}  // namespace

void CheckProvider(const Config& config, FileSystem& fs, const std::string& agent_model,
                   Network network, std::chrono::milliseconds timeout, DoctorChecks& out) {
  if (config.GetString("provider.name") == "scripted") {
    CheckScripted(config, fs, out);
    return;
  }
  CheckModel(config, agent_model, out);
  CheckKey(config, out);
  CheckEndpoint(config, network, timeout, out);
}

}  // namespace mend::cli
