#pragma once

// The configuration schema and its resolution (docs/configuration.md): ConfigKeySpec and
// DefaultConfigSchema, LoadConfig, which resolves every key from flags, the environment,
// config.toml and defaults, and the immutable, thread-safe Config it returns. The modules below app
// never read it: app passes them their values in options structs.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "mend/base/file_system.h"
#include "mend/base/result.h"

namespace mend {

// The effective configuration of mend (docs/configuration.md): a fixed schema of dotted keys
// ("provider.timeout"), each resolved from the first source that sets it, in this order:
//
//   1. a command-line flag        (origin "flag --timeout")
//   2. the environment            (origin "env MEND_TIMEOUT")
//   3. $MEND_HOME/config.toml     (origin "config.toml:3", the line of the value)
//   4. the schema's default       (origin "default")
//
// A key "a.b.c" lives in config.toml as `c = ...` inside the table `[a.b]`. Modules never read the
// environment themselves: main() collects it and passes it in ConfigSources.
//
// Text from flags and the environment is parsed by type: bool accepts true/false, 1/0, yes/no,
// on/off (any case); int and double accept decimal numbers; durations use Go syntax ("30s", "5m",
// "1h30m", "250ms"); enums accept one of their choices, in any case. In config.toml a bool must be
// a TOML boolean, an int a TOML integer, a double any TOML number, everything else a TOML string.
//
// Every invalid value is kInvalidArgument naming the key, the source and what is accepted:
//   invalid value for provider.timeout from env MEND_TIMEOUT: "abc" (expected a duration between
//   1s and 1h, e.g. 30s)
// The value of a secret key is never repeated in a message: it appears masked.
// Malformed TOML is kInvalidArgument with the file's path, line and column. A key in config.toml
// that the schema does not know is kInvalidArgument naming the key and the file, so that typos do
// not pass silently. A missing config.toml is fine; one that cannot be read is the read error.

/// The detail code (Status::detail_code) of an invalid or missing configuration value: the user
/// must change how mend is invoked, so the CLI exits with 2 (a usage error).
inline constexpr std::string_view kConfigInvalidDetail = "MEND_CONFIG_INVALID";

/// Where a value came from.
enum class ConfigSource { kDefault, kFile, kEnv, kFlag };
/// "default", "file", "env", "flag".
std::string_view ConfigSourceName(ConfigSource source);

/// The type of a key, which decides how its text is parsed.
enum class ConfigType { kString, kBool, kInt, kDouble, kDuration, kEnum };

/// How a value is shown by `mend config show` and in error messages.
enum class Sensitivity {
  kPublic,
  kSecret,  ///< only a masked form is ever shown (see MaskSecret)
  kUrl,     ///< a URL whose password part ("user:pass@host") is masked
};

/// While resolving `key`, the environment variable `env_var` is consulted when the variable
/// named by the key's own `env_var` is unset and the already resolved key `when_key` has the value
/// `when_value` (e.g. provider.api_key falls back to OPENAI_API_KEY when provider.name is openai).
/// It counts as the environment source.
struct EnvFallback {
  std::string when_key;    ///< the key whose value decides
  std::string when_value;  ///< the value it must have
  std::string env_var;     ///< the variable consulted then
};

/// One key of the schema. Adding a key is adding one of these to the schema: no other code changes.
struct ConfigKeySpec {
  std::string name;                       ///< dotted, e.g. "provider.timeout"
  ConfigType type = ConfigType::kString;  ///< how its text is parsed
  /// Parsed like flag text. A leading "{user_home}" is replaced by the user's home directory and a
  /// leading "{home}" by the resolved value of the key `home` (which must come earlier).
  std::string default_value;
  std::string env_var;  ///< empty: not settable from the environment
  std::string flag;     ///< long flag without dashes ("timeout"); empty: no flag
  Sensitivity sensitivity = Sensitivity::kPublic;  ///< how its value may be shown
  /// false: config.toml may not set it (e.g. `home` itself)
  bool file_allowed = true;
  /// The inclusive range of a kInt, a kDouble or a kDuration key.
  ///@{
  std::int64_t int_min = 0, int_max = 0;
  double double_min = 0, double_max = 0;
  std::chrono::milliseconds duration_min{0}, duration_max{0};
  ///@}
  std::vector<std::string> choices;        ///< kEnum
  std::vector<EnvFallback> env_fallbacks;  ///< tried in order when env_var is unset
  std::string help;                        ///< one line for `mend config show` and docs
  /// kString only: a list. config.toml gives it as an array of strings; the value is the items
  /// joined with "\n", which is also how the environment variable and the flag give several.
  bool list = false;
};

/// The keys mend knows, in display order; `home` comes first.
const std::vector<ConfigKeySpec>& DefaultConfigSchema();

/// What a user asked for, gathered by main() (or a test).
struct ConfigSources {
  std::map<std::string, std::string> flags;  ///< by key name: {"provider.timeout", "30s"}
  std::map<std::string, std::string> env;    ///< the process environment, verbatim
  /// The user's home directory, for the default of `home` (`<user_home>/.mend`). Empty: env HOME.
  std::string user_home;
};

/// A value of one of the key types (kEnum is a std::string, kDuration milliseconds).
using ConfigTypedValue =
    std::variant<std::string, bool, std::int64_t, double, std::chrono::milliseconds>;

/// One resolved key.
struct ConfigValue {
  std::string key;         ///< the dotted name
  ConfigTypedValue value;  ///< parsed by the key's type
  std::string text;        ///< canonical text: "true", "42", "0.2", "2m0s", or the string itself
  ConfigSource source = ConfigSource::kDefault;  ///< where it came from
  std::string origin;  ///< "default", "config.toml:3", "env MEND_TIMEOUT", "flag --timeout"
  Sensitivity sensitivity = Sensitivity::kPublic;  ///< the key's
};

/// The resolved configuration: one value per schema key, in schema order. Immutable once built;
/// thread-safe for concurrent reads. Asking a typed getter for a key that is not in the schema, or
/// for the wrong type, is a programmer error (asserted; returns an empty/zero value in release).
class Config {
 public:
  /// A configuration of `values`, one per schema key (LoadConfig builds it).
  explicit Config(std::vector<ConfigValue> values) : values_(std::move(values)) {}

  /// Every value, in schema order.
  const std::vector<ConfigValue>& values() const { return values_; }
  /// nullptr when `key` is not in the schema.
  const ConfigValue* Find(std::string_view key) const;

  const std::string& GetString(std::string_view key) const;  ///< kString and kEnum
  /// A list key's items (its value split at "\n", empty items dropped).
  std::vector<std::string> GetList(std::string_view key) const;
  ///@{
  /// The value of a key of that type.
  bool GetBool(std::string_view key) const;
  std::int64_t GetInt(std::string_view key) const;
  double GetDouble(std::string_view key) const;
  std::chrono::milliseconds GetDuration(std::string_view key) const;
  ///@}

 private:
  std::vector<ConfigValue> values_;
};

///@{
/// Resolves every key of `schema` (DefaultConfigSchema() in the first overload) from `sources`,
/// reading `<home>/config.toml` through `fs`. Errors as described at the top of this file;
/// kFailedPrecondition when `home` has no value from any source and no user home is known.
Result<Config> LoadConfig(const ConfigSources& sources, FileSystem& fs);
Result<Config> LoadConfig(const ConfigSources& sources, FileSystem& fs,
                          const std::vector<ConfigKeySpec>& schema);
///@}

/// "****" followed by at most the last 4 characters, and only when the secret is long enough (16+
/// characters) for that to reveal nothing useful; "****" otherwise; "" for an empty secret.
std::string MaskSecret(std::string_view secret);

/// The text of `value` safe to show anywhere: masked per its sensitivity; a value of several lines
/// (a list key's items) as a one-line JSON array of its lines.
std::string DisplayValue(const ConfigValue& value);

}  // namespace mend
