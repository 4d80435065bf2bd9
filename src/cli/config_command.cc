// `mend config show`: the effective configuration, where each value came from, secrets masked.
// `mend config reference`: the schema's keys as docs/configuration.md's table.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/config_reference.h"
#include "mend/base/home_layout.h"
#include "mend/base/json.h"

namespace mend::cli {
namespace {

std::string ShownValue(const ConfigValue& value) {
  const std::string shown = DisplayValue(value);
  return shown.empty() ? "(empty)" : shown;
}

nlohmann::json ToJson(const Config& config, const std::string& file, bool file_exists) {
  nlohmann::json values = nlohmann::json::array();
  for (const ConfigValue& v : config.values()) {
    values.push_back({{"key", v.key},
                      {"value", DisplayValue(v)},
                      {"source", std::string(ConfigSourceName(v.source))},
                      {"origin", v.origin}});
  }
  return {{"values", values}, {"config_file", file}, {"config_file_exists", file_exists}};
}

Status ShowConfig(CliContext& ctx) {
  MEND_ASSIGN_OR_RETURN(Config config, LoadCliConfig(ctx));
  const std::string file = home::ConfigFile(config.GetString("home"));
  const bool file_exists = ctx.fs.Exists(file);
  if (ctx.json) {
    ctx.out << DumpJson(ToJson(config, file, file_exists)) << "\n";
    return OkStatus();
  }
  PrintConfigTable(config, {}, ctx.out);
  ctx.out << "\nconfig file: " << file << (file_exists ? "" : " (not present)") << "\n";
  return OkStatus();
}

bool Selected(const ConfigValue& value, const std::vector<std::string_view>& prefixes) {
  if (prefixes.empty()) return true;
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view prefix) { return value.key.starts_with(prefix); });
}

}  // namespace

void PrintConfigTable(const Config& config, const std::vector<std::string_view>& prefixes,
                      std::ostream& out) {
  size_t key_width = 3, value_width = 5;
  for (const ConfigValue& v : config.values()) {
    if (!Selected(v, prefixes)) continue;
    key_width = std::max(key_width, v.key.size());
    value_width = std::max(value_width, ShownValue(v).size());
  }
  auto row = [&](std::string_view key, std::string_view value, std::string_view source) {
    out << std::left << std::setw(static_cast<int>(key_width + 2)) << key
        << std::setw(static_cast<int>(value_width + 2)) << value << source << "\n";
  };
  row("KEY", "VALUE", "SOURCE");
  for (const ConfigValue& v : config.values()) {
    if (Selected(v, prefixes)) row(v.key, ShownValue(v), v.origin);
  }
}

void AddConfigCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* config = app.add_subcommand("config", "inspect the configuration");
  config->group("Commands");
  config->require_subcommand(0, 1);  // a word of a task or query is never read as a command
  CLI::App* show =
      config->add_subcommand("show", "effective configuration and where each value came from");
  AddProviderFlags(*show, ctx);
  show->callback([&ctx] { ctx.action = [&ctx] { return ShowConfig(ctx); }; });
  CLI::App* reference = config->add_subcommand(
      "reference", "every configuration key as the Markdown table of docs/configuration.md");
  reference->callback([&ctx] {
    ctx.action = [&ctx] {
      ctx.out << RenderConfigReference(DefaultConfigSchema());
      return OkStatus();
    };
  });
}

}  // namespace mend::cli
