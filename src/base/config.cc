// Resolution of the effective configuration (flags > env > config.toml > defaults). toml++
// reports errors by throwing, so its parser is called only from ParseTomlFile below, inside a
// try/catch that turns every failure into a Status.
#include "mend/base/config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>

#include "base/config_value.h"
#include "mend/base/edit_distance.h"
#include "mend/base/home_layout.h"

namespace mend {
namespace {

using config_internal::DescribeAccepted;
using config_internal::InvalidValueError;
using config_internal::ParseConfigText;
using config_internal::ParsedValue;
using config_internal::SafeText;

// A value found in config.toml, already validated against its key.
struct FileEntry {
  ParsedValue parsed;
  int line = 0;
};
using FileEntries = std::map<std::string, FileEntry>;

const ConfigKeySpec* FindSpec(const std::vector<ConfigKeySpec>& schema, std::string_view name) {
  for (const ConfigKeySpec& spec : schema) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

bool IsTablePrefix(const std::vector<ConfigKeySpec>& schema, const std::string& prefix) {
  return std::any_of(schema.begin(), schema.end(), [&](const ConfigKeySpec& spec) {
    return spec.name.size() > prefix.size() && spec.name.compare(0, prefix.size(), prefix) == 0 &&
           spec.name[prefix.size()] == '.';
  });
}

Status UnknownKeyError(const std::vector<ConfigKeySpec>& schema, const std::string& key,
                       const std::string& where) {
  std::string message = "unknown key " + key + " in " + where;
  const ConfigKeySpec* best = nullptr;
  size_t best_distance = 3;  // more edits than this is not a typo
  for (const ConfigKeySpec& spec : schema) {
    const size_t d = EditDistance(key, spec.name);
    if (d < best_distance) best = &spec, best_distance = d;
  }
  if (best != nullptr) message += " (did you mean " + best->name + "?)";
  return InvalidArgumentError(message);
}

std::string FormatNumber(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(d);
}

// The TOML leaf `node` as text for ParseConfigText, or std::nullopt when its TOML type cannot
// hold a value of the key's type.
std::optional<std::string> TomlLeafText(const ConfigKeySpec& spec, const toml::node& node) {
  switch (spec.type) {
    case ConfigType::kBool:
      if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
      return std::nullopt;
    case ConfigType::kInt:
      if (const auto* i = node.as_integer()) return std::to_string(i->get());
      return std::nullopt;
    case ConfigType::kDouble:
      if (const auto* i = node.as_integer()) return std::to_string(i->get());
      if (const auto* f = node.as_floating_point()) return FormatNumber(f->get());
      return std::nullopt;
    default:
      if (const auto* s = node.as_string()) return s->get();
      if (const auto* array = node.as_array(); array != nullptr && spec.list) {
        std::string joined;
        for (const toml::node& item : *array) {
          const auto* s = item.as_string();
          if (s == nullptr || s->get().find('\n') != std::string::npos) return std::nullopt;
          if (!joined.empty()) joined += '\n';
          joined += s->get();
        }
        return joined;
      }
      return std::nullopt;
  }
}

// A TOML value as an error message shows it.
std::string DescribeTomlNode(const toml::node& node) {
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* f = node.as_floating_point()) return FormatNumber(f->get());
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  if (const auto* str = node.as_string()) return "\"" + str->get() + "\"";
  if (node.is_table()) return "a table";
  if (node.is_array()) return "an array";
  return "a date or time";
}

Status AddTomlLeaf(const ConfigKeySpec& spec, const toml::node& node, const std::string& where,
                   int line, FileEntries& entries) {
  if (!spec.file_allowed) {
    return InvalidArgumentError(spec.name + " cannot be set in " + where +
                                "; use the flag or environment variable instead");
  }
  std::optional<std::string> text = TomlLeafText(spec, node);
  std::optional<ParsedValue> parsed;
  if (text.has_value()) parsed = ParseConfigText(spec, *text);
  if (!parsed.has_value()) {
    std::string shown = DescribeTomlNode(node);
    if (spec.sensitivity == Sensitivity::kSecret) shown = MaskSecret(shown);
    if (const auto* str = node.as_string()) shown = "\"" + SafeText(spec, str->get()) + "\"";
    return InvalidValueError(spec, where, shown);
  }
  entries[spec.name] = FileEntry{std::move(*parsed), line};
  return OkStatus();
}

Status WalkTable(const std::vector<ConfigKeySpec>& schema, const toml::table& table,
                 const std::string& prefix, const std::string& path, FileEntries& entries) {
  for (auto&& [key, node] : table) {
    const std::string name =
        prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    const int line = static_cast<int>(node.source().begin.line);
    const std::string where = path + ":" + std::to_string(line);
    if (const ConfigKeySpec* spec = FindSpec(schema, name)) {
      MEND_RETURN_IF_ERROR(AddTomlLeaf(*spec, node, where, line, entries));
    } else if (node.is_table() && IsTablePrefix(schema, name)) {
      MEND_RETURN_IF_ERROR(WalkTable(schema, *node.as_table(), name, path, entries));
    } else {
      return UnknownKeyError(schema, name, where);
    }
  }
  return OkStatus();
}

Result<FileEntries> ParseTomlFile(const std::vector<ConfigKeySpec>& schema, const std::string& text,
                                  const std::string& path) {
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return InvalidArgumentError("malformed TOML in " + path + ":" +
                                std::to_string(e.source().begin.line) + ":" +
                                std::to_string(e.source().begin.column) + ": " +
                                std::string(e.description().data(), e.description().size()));
  } catch (const std::exception& e) {
    return InvalidArgumentError("cannot parse " + path + ": " + e.what());
  }
  FileEntries entries;
  MEND_RETURN_IF_ERROR(WalkTable(schema, table, "", path, entries));
  return entries;
}

// `named`: the path was given (MEND_CONFIG), so a missing file is an error rather than no file.
Result<FileEntries> ReadConfigFile(const std::vector<ConfigKeySpec>& schema, FileSystem& fs,
                                   const std::string& path, bool named) {
  Result<std::string> text = ReadFileToString(fs, path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound && !named) return FileEntries{};
    if (text.status().code() == StatusCode::kNotFound) {
      return FailedPreconditionError("the configuration file " + path +
                                     " named by MEND_CONFIG does not exist");
    }
    return text.status().Annotate("reading configuration");
  }
  return ParseTomlFile(schema, *text, path);
}

// Resolves keys one by one in schema order, so that defaults and fallbacks can refer to keys
// resolved before them.
class Resolver {
 public:
  Resolver(const ConfigSources& sources, const FileEntries& file)
      : sources_(sources), file_(file) {}

  Result<ConfigValue> Resolve(const ConfigKeySpec& spec) {
    if (auto it = sources_.flags.find(spec.name); it != sources_.flags.end()) {
      const std::string flag = spec.flag.empty() ? spec.name : spec.flag;
      return FromText(spec, it->second, ConfigSource::kFlag, "flag --" + flag, "flag --" + flag);
    }
    std::vector<std::string> vars;
    if (!spec.env_var.empty()) vars.push_back(spec.env_var);
    for (const EnvFallback& fallback : spec.env_fallbacks) {
      if (Text(fallback.when_key) == fallback.when_value) vars.push_back(fallback.env_var);
    }
    for (const std::string& var : vars) {
      auto it = sources_.env.find(var);
      if (it == sources_.env.end() || it->second.empty()) continue;
      return FromText(spec, it->second, ConfigSource::kEnv, "env " + var, "environment " + var);
    }
    if (auto it = file_.find(spec.name); it != file_.end()) {
      return Make(spec, it->second.parsed, ConfigSource::kFile,
                  "config.toml:" + std::to_string(it->second.line));
    }
    MEND_ASSIGN_OR_RETURN(std::string text, ExpandDefault(spec.default_value));
    std::optional<ParsedValue> parsed = ParseConfigText(spec, text);
    if (!parsed.has_value()) {
      return InternalError("invalid default for " + spec.name + " (expected " +
                           DescribeAccepted(spec) + ")");
    }
    return Make(spec, std::move(*parsed), ConfigSource::kDefault, "default");
  }

  void Remember(const ConfigValue& value) { resolved_[value.key] = value.text; }

 private:
  std::string Text(const std::string& key) const {
    auto it = resolved_.find(key);
    return it == resolved_.end() ? "" : it->second;
  }

  Result<std::string> ExpandDefault(const std::string& value) const {
    static constexpr std::string_view kUserHome = "{user_home}";
    static constexpr std::string_view kHome = "{home}";
    if (value.starts_with(kHome)) return Text("home") + value.substr(kHome.size());
    if (!value.starts_with(kUserHome)) return value;
    std::string user_home = sources_.user_home;
    if (auto it = sources_.env.find("HOME"); user_home.empty() && it != sources_.env.end()) {
      user_home = it->second;
    }
    if (user_home.empty()) {
      return FailedPreconditionError(
          "cannot locate the mend home: HOME is not set; use --home or MEND_HOME");
    }
    return user_home + value.substr(kUserHome.size());
  }

  static Result<ConfigValue> FromText(const ConfigKeySpec& spec, const std::string& raw,
                                      ConfigSource source, std::string origin,
                                      const std::string& where) {
    std::optional<ParsedValue> parsed = ParseConfigText(spec, raw);
    if (!parsed.has_value()) {
      return InvalidValueError(spec, where, "\"" + SafeText(spec, raw) + "\"");
    }
    return Make(spec, std::move(*parsed), source, std::move(origin));
  }

  static ConfigValue Make(const ConfigKeySpec& spec, ParsedValue parsed, ConfigSource source,
                          std::string origin) {
    return ConfigValue{spec.name, std::move(parsed.value), std::move(parsed.text),
                       source,    std::move(origin),       spec.sensitivity};
  }

  const ConfigSources& sources_;
  const FileEntries& file_;
  std::map<std::string, std::string> resolved_;
};

}  // namespace

Result<Config> LoadConfig(const ConfigSources& sources, FileSystem& fs) {
  return LoadConfig(sources, fs, DefaultConfigSchema());
}

Result<Config> LoadConfig(const ConfigSources& sources, FileSystem& fs,
                          const std::vector<ConfigKeySpec>& schema) {
  // `home` decides where config.toml is, so it is resolved from flags, env and default first.
  FileEntries file;
  if (const ConfigKeySpec* home_spec = FindSpec(schema, "home")) {
    Resolver early(sources, file);
    MEND_ASSIGN_OR_RETURN(ConfigValue home, early.Resolve(*home_spec));
    std::string path = home::ConfigFile(home.text);
    bool named = false;
    // `config` names the file elsewhere (MEND_CONFIG); its default is <home>/config.toml.
    if (const ConfigKeySpec* config_spec = FindSpec(schema, "config")) {
      early.Remember(home);
      MEND_ASSIGN_OR_RETURN(ConfigValue config, early.Resolve(*config_spec));
      path = config.text;
      named = config.source != ConfigSource::kDefault;
    }
    MEND_ASSIGN_OR_RETURN(file, ReadConfigFile(schema, fs, path, named));
  }
  Resolver resolver(sources, file);
  std::vector<ConfigValue> values;
  values.reserve(schema.size());
  for (const ConfigKeySpec& spec : schema) {
    MEND_ASSIGN_OR_RETURN(ConfigValue value, resolver.Resolve(spec));
    resolver.Remember(value);
    values.push_back(std::move(value));
  }
  return Config(std::move(values));
}

}  // namespace mend
