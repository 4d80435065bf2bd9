// docs/configuration.md's key table as the schema gives it. Every fact of a row comes from the
// key's ConfigKeySpec; what the spec's fields cannot say is in its help text.
#include "cli/config_reference.h"

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "mend/base/time_format.h"

namespace mend::cli {
namespace {

constexpr std::string_view kReflexionEnvPrefix = "MEND_QUALITY_REFLEXION_";
constexpr std::int64_t kMiB = std::int64_t{1} << 20;

std::string Code(std::string_view text) { return "`" + std::string(text) + "`"; }

// A table cell holds no pipe of its own.
std::string Cell(std::string_view text) {
  std::string cell;
  for (char c : text) {
    if (c == '|') cell += '\\';
    cell += c;
  }
  return cell;
}

// Help text as Markdown: a placeholder such as <id> outside a code span would be read as an HTML
// tag and vanish, so its angle brackets are escaped there.
std::string HelpText(std::string_view help) {
  std::string text;
  bool in_code = false;
  for (char c : help) {
    if (c == '`') in_code = !in_code;
    if (!in_code && (c == '<' || c == '>')) text += '\\';
    text += c;
  }
  return text;
}

std::string_view TypeName(const ConfigKeySpec& key) {
  if (key.list) return "list";
  switch (key.type) {
    case ConfigType::kString:
      return "string";
    case ConfigType::kBool:
      return "bool";
    case ConfigType::kInt:
      return "int";
    case ConfigType::kDouble:
      return "double";
    case ConfigType::kDuration:
      return "duration";
    case ConfigType::kEnum:
      return "enum";
  }
  return "string";
}

// As `config show` prints durations: no zero trailing units ("5m", "1h", "168h", "250ms").
std::string ShortDuration(std::chrono::milliseconds d) {
  std::string text = FormatDuration(d);
  if (text.size() > 2 && text.ends_with("0s") && (text.ends_with("m0s") || text.ends_with("h0s"))) {
    text.resize(text.size() - 2);
  }
  if (text.size() > 2 && text.ends_with("h0m")) text.resize(text.size() - 2);
  return text;
}

std::string DoubleText(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(value);
}

std::string DefaultText(const ConfigKeySpec& key) {
  std::string value = key.default_value;
  if (value.empty()) return "empty";
  if (value.starts_with("{user_home}")) value.replace(0, 11, "$HOME");
  if (value.starts_with("{home}")) value.replace(0, 6, "<home>");
  std::string text = Code(value);
  std::int64_t number = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (key.type == ConfigType::kInt && ec == std::errc() && number >= kMiB && number % kMiB == 0) {
    text += " (" + std::to_string(number / kMiB) + " MiB)";
  }
  return text;
}

std::string AcceptedText(const ConfigKeySpec& key) {
  std::string text;
  switch (key.type) {
    case ConfigType::kString:
      text = "any";
      break;
    case ConfigType::kBool:
      break;
    case ConfigType::kInt:
      text = std::to_string(key.int_min) + " – " + std::to_string(key.int_max);
      break;
    case ConfigType::kDouble:
      text = DoubleText(key.double_min) + " – " + DoubleText(key.double_max);
      break;
    case ConfigType::kDuration:
      text = ShortDuration(key.duration_min) + " – " + ShortDuration(key.duration_max);
      break;
    case ConfigType::kEnum:
      for (const std::string& choice : key.choices) {
        text += (text.empty() ? "" : ", ") + Code(choice);
      }
      break;
  }
  if (!key.file_allowed)
    text += std::string(text.empty() ? "" : "; ") + "**not settable in config.toml**";
  return text;
}

std::string EnvName(std::string_view var) {
  if (var.starts_with(kReflexionEnvPrefix)) {
    return "R_" + std::string(var.substr(kReflexionEnvPrefix.size()));
  }
  return std::string(var);
}

std::string EnvironmentText(const ConfigKeySpec& key) {
  if (key.env_var.empty()) return "—";
  std::string text = Code(EnvName(key.env_var));
  for (size_t i = 0; i < key.env_fallbacks.size(); ++i) {
    text += (i == 0 ? ", then " : " / ") + Code(EnvName(key.env_fallbacks[i].env_var));
  }
  return text;
}

std::string_view ShownText(const ConfigKeySpec& key) {
  switch (key.sensitivity) {
    case Sensitivity::kPublic:
      return "public";
    case Sensitivity::kSecret:
      return "**secret**";
    case Sensitivity::kUrl:
      return "URL, password masked";
  }
  return "public";
}

}  // namespace

std::string RenderConfigReference(const std::vector<ConfigKeySpec>& schema) {
  std::string table =
      "| key | type | default | accepted | environment | flag | shown | meaning |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const ConfigKeySpec& key : schema) {
    const std::string cells[] = {Code(key.name),
                                 std::string(TypeName(key)),
                                 DefaultText(key),
                                 AcceptedText(key),
                                 EnvironmentText(key),
                                 key.flag.empty() ? "—" : Code("--" + key.flag),
                                 std::string(ShownText(key)),
                                 HelpText(key.help)};
    table += "|";
    for (const std::string& cell : cells) table += " " + Cell(cell) + " |";
    table += "\n";
  }
  return table;
}

}  // namespace mend::cli
