// Helpers shared by the commands: configuration flags, configuration loading and the mapping of a
// Status to an exit code and an error report.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "mend/agent/agent_spec.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"

namespace mend::cli {
namespace {

constexpr std::string_view kUsageDetail = "MEND_USAGE";
constexpr std::string_view kConfigDetail = kConfigInvalidDetail;

// Error lines are one line by contract, whatever a message contains.
std::string OneLine(std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return line;
}

// The placeholder of a flag's value in --help.
std::string TypeName(const ConfigKeySpec& spec) {
  switch (spec.type) {
    case ConfigType::kDuration:
      return "DURATION";
    case ConfigType::kEnum: {
      std::string names;
      for (const std::string& choice : spec.choices) names += (names.empty() ? "" : "|") + choice;
      return names;
    }
    case ConfigType::kInt:
      return "INT";
    case ConfigType::kDouble:
      return "NUMBER";
    case ConfigType::kBool:
      return "BOOL";
    case ConfigType::kString:
      break;
  }
  return spec.name.ends_with("_file") ? "FILE" : "TEXT";
}

}  // namespace

void AddConfigFlags(CLI::App& command, CliContext& ctx, std::string_view prefix) {
  for (const ConfigKeySpec& spec : DefaultConfigSchema()) {
    if (spec.flag.empty() || !spec.name.starts_with(prefix)) continue;
    const std::string key = spec.name;
    const std::string help = spec.help + " (" + key + ")";
    if (spec.type == ConfigType::kBool) {
      // A switch: present means true.
      command.add_flag_function(
          "--" + spec.flag, [&ctx, key](std::int64_t) { ctx.config_flags[key] = "true"; }, help);
      continue;
    }
    CLI::Option* option = command.add_option_function<std::string>(
        "--" + spec.flag, [&ctx, key](const std::string& value) { ctx.config_flags[key] = value; },
        help);
    option->type_name(TypeName(spec));
  }
}

void AddProviderFlags(CLI::App& command, CliContext& ctx) {
  AddConfigFlags(command, ctx, "provider.");
}

Result<Config> LoadCliConfig(const CliContext& ctx) {
  ConfigSources sources;
  sources.env = ctx.env;
  sources.flags = ctx.config_flags;
  if (!ctx.home.empty()) sources.flags["home"] = ctx.home;
  Result<Config> config = LoadConfig(sources, ctx.fs);
  if (!config.ok()) {
    const StatusCode code = config.status().code();
    // A value the user gave that we cannot accept, or no way to locate the home: the user must
    // change how mend is invoked, so it is a usage error. Failing to read the file is not.
    if (code == StatusCode::kInvalidArgument || code == StatusCode::kFailedPrecondition) {
      return config.status().WithDetailCode(kConfigDetail);
    }
  }
  return config;
}

Result<std::unique_ptr<app::Runtime>> OpenCliRuntime(const CliContext& ctx,
                                                     const std::string& holder_prefix) {
  MEND_ASSIGN_OR_RETURN(Config config, LoadCliConfig(ctx));
  Env env = Env::Default();
  env.fs = &ctx.fs;
  app::RuntimeOptions options;
  options.holder_prefix = holder_prefix;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime,
                        app::OpenRuntime(config, env, std::move(options)));
  std::ostream* err = &ctx.err;
  runtime->warn = [err](const std::string& line) { *err << "mend: " << OneLine(line) << "\n"; };
  return runtime;
}

Status UsageError(const Status& status) { return status.WithDetailCode(kUsageDetail); }

Status UsageError(std::string_view message) { return UsageError(InvalidArgumentError(message)); }

int ExitCodeFor(const Status& status) {
  if (status.ok()) return 0;
  const std::string_view detail = status.detail_code();
  // Input the user must fix: how mend was invoked, its configuration, or an agent folder.
  if (detail == kUsageDetail || detail == kConfigDetail ||
      detail == agent::kAgentFolderInvalidDetail) {
    return 2;
  }
  return 1;
}

int ReportError(const CliContext& ctx, const Status& status) {
  std::string line = "mend: " + OneLine(status.message());
  if (status.detail_code() == kUsageDetail) {
    line += " (run '" + ctx.command_path + " --help' for usage)";
  }
  ctx.err << line << "\n";
  if (ctx.json) {
    nlohmann::json error = {
        {"code", status.detail_code().empty() ? std::string(StatusCodeName(status.code()))
                                              : std::string(status.detail_code())},
        {"message", OneLine(status.message())},
        {"class", std::string(ErrorClassName(ClassOf(status)))},
        {"retryable", IsRetryable(status)},
    };
    ctx.out << DumpJson(nlohmann::json{{"error", error}}) << "\n";
  }
  return ExitCodeFor(status);
}

}  // namespace mend::cli
