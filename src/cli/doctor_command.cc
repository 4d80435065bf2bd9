// `mend doctor [AGENT_DIR] [--offline]`: checks a home, its configuration and provider and,
// optionally, an agent folder, and says what to fix (doctor_checks.h). It opens no runtime, so it
// creates nothing and works on a home another process is using.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "cli/doctor_checks.h"
#include "mend/base/json.h"

namespace mend::cli {
namespace {

// Long enough for a provider across the world, short enough that a dead one is found quickly.
constexpr std::chrono::milliseconds kProbeTimeout{5000};

struct DoctorArgs {
  std::string agent_dir;
  bool offline = false;
};

DoctorChecks RunChecks(CliContext& ctx, const DoctorArgs& args) {
  DoctorChecks checks;
  DoctorChecks agent_checks;
  std::string agent_model;
  if (!args.agent_dir.empty()) {
    std::optional<agent::AgentSpec> spec =
        CheckAgentFolder(ctx.fs, args.agent_dir, ctx.env, agent_checks);
    if (spec.has_value()) agent_model = spec->model;
  }
  Result<Config> config = LoadCliConfig(ctx);
  if (!config.ok()) {
    // The rest of the home's checks need the configuration: where the home is, which stores.
    checks.push_back({"config", CheckStatus::kFail, std::string(config.status().message()),
                      "correct the setting the message names (docs/configuration.md lists every "
                      "key)"});
  } else {
    Env env = Env::Default();
    env.fs = &ctx.fs;
    CheckConfigFile(*config, checks);
    CheckHome(*config, checks);
    CheckSchemas(*config, env, checks);
    CheckLessonQueue(*config, ctx.fs, checks);
    CheckProvider(*config, ctx.fs, agent_model, args.offline ? Network::kOffline : Network::kProbe,
                  kProbeTimeout, checks);
  }
  checks.insert(checks.end(), agent_checks.begin(), agent_checks.end());
  return checks;
}

// Error lines are one line by contract, whatever a message contains.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

void PrintText(CliContext& ctx, const DoctorChecks& checks) {
  size_t width = 0;
  for (const DoctorCheck& check : checks) width = std::max(width, check.name.size());
  int counts[3] = {0, 0, 0};
  for (const DoctorCheck& check : checks) {
    ++counts[static_cast<int>(check.status)];
    const std::string status =
        check.status == CheckStatus::kFail ? "FAIL" : std::string(CheckStatusName(check.status));
    ctx.out << status << std::string(6 - status.size(), ' ') << check.name
            << std::string(width + 2 - check.name.size(), ' ') << OneLine(check.detail) << "\n";
    if (!check.fix.empty()) {
      ctx.out << std::string(6 + width + 2, ' ') << "fix: " << OneLine(check.fix) << "\n";
    }
  }
  ctx.out << counts[0] << " ok, " << counts[1] << " warn, " << counts[2] << " FAIL\n";
}

void PrintJson(CliContext& ctx, const DoctorChecks& checks, bool ok) {
  nlohmann::json list = nlohmann::json::array();
  for (const DoctorCheck& check : checks) {
    list.push_back({{"name", check.name},
                    {"status", std::string(CheckStatusName(check.status))},
                    {"detail", OneLine(check.detail)},
                    {"fix", OneLine(check.fix)}});
  }
  ctx.out << DumpJson({{"ok", ok}, {"checks", std::move(list)}}) << "\n";
}

Status Doctor(CliContext& ctx, const DoctorArgs& args) {
  const DoctorChecks checks = RunChecks(ctx, args);
  const auto failed = std::count_if(checks.begin(), checks.end(), [](const DoctorCheck& c) {
    return c.status == CheckStatus::kFail;
  });
  if (ctx.json) {
    PrintJson(ctx, checks, failed == 0);
  } else {
    PrintText(ctx, checks);
  }
  if (failed == 0) return OkStatus();
  const std::string message =
      failed == 1 ? "1 check failed" : std::to_string(failed) + " checks failed";
  ctx.err << "mend: doctor: " << message << "\n";
  ctx.error_reported = true;
  return FailedPreconditionError("doctor: " + message);
}

}  // namespace

void AddDoctorCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<DoctorArgs>();
  CLI::App* doctor =
      app.add_subcommand("doctor", "check the home, the provider and an agent folder");
  doctor->group("Commands");
  doctor->add_option("AGENT_DIR", args->agent_dir, "an agent folder to check too");
  doctor->add_flag("--offline", args->offline, "do not ask the provider's endpoint");
  AddProviderFlags(*doctor, ctx);
  doctor->footer(
      "One line per check: ok, warn or FAIL, its name and what was found, and for each line that "
      "is not ok a fix. Checks: the configuration, the home's folder and permissions, every "
      "store's schema version, the lesson queue, the provider (model, key, and a request for its "
      "model list unless --offline) and, with AGENT_DIR, the agent folder. Nothing is changed. "
      "Exit 1 when a check fails, else 0.");
  doctor->callback([&ctx, args] { ctx.action = [&ctx, args] { return Doctor(ctx, *args); }; });
}

}  // namespace mend::cli
