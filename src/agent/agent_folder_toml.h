#pragma once

// The toml++ adapter of the agent-folder loader: toml++ throws, so parsing is wrapped here and
// every other function only inspects an already parsed table. Included only by agent_folder*.cc.

#include <toml++/toml.h>

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"

namespace mend::agent::folder_internal {

// Parses TOML `text`; a syntax error is kInvalidArgument "<path>:<line>:<column>: <what>".
Result<toml::table> ParseToml(std::string_view text, const std::string& path);

// One key of a table with the line the key is written on.
struct TomlEntry {
  std::string key;
  int line = 0;
  const toml::node* node = nullptr;
};

// The entries of `table` in the order they appear in the file (toml++ iterates by key).
std::vector<TomlEntry> EntriesInFileOrder(const toml::table& table);

// Fails on the first key of `table` not in `known`, naming it with a "did you mean" hint.
// `prefix` qualifies key names in the message ("limits.").
Status CheckKnownKeys(const toml::table& table, const std::vector<std::string>& known,
                      const std::string& path, const std::string& prefix);

// The line `key` of `table` is written on; 1 when it is absent (errors about missing keys point at
// the start of the file).
int KeyLine(const toml::table& table, std::string_view key);

// Typed access to an optional key of `table`. A key of another type, or a value out of range, is
// kInvalidArgument "<path>:<line>: <name> must be ..., got ..." where `name` is the key as the
// user should read it ("limits.max_steps").
Result<std::optional<std::string>> GetTomlString(const toml::table& table, std::string_view key,
                                                 const std::string& path, std::string_view name);
Result<std::optional<bool>> GetTomlBool(const toml::table& table, std::string_view key,
                                        const std::string& path, std::string_view name);
Result<std::optional<std::int64_t>> GetTomlInt(const toml::table& table, std::string_view key,
                                               const std::string& path, std::string_view name,
                                               std::int64_t min, std::int64_t max);

// A string of an array with the line it is written on.
struct TomlString {
  std::string value;
  int line = 0;
};
// An optional array of strings; `example` shows the expected form in the error message.
Result<std::optional<std::vector<TomlString>>> GetTomlStringArray(const toml::table& table,
                                                                  std::string_view key,
                                                                  const std::string& path,
                                                                  std::string_view name,
                                                                  std::string_view example);

// A table-valued key, or nullptr when absent; another type is an error naming `[name]`.
Result<const toml::table*> GetTomlTable(const toml::table& table, std::string_view key,
                                        const std::string& path, std::string_view name);

// An optional argv: an array of strings whose first element is not empty. A plain string is an
// error suggesting the array form (`command = "sh check.sh"` is a natural first attempt).
Result<std::optional<std::vector<std::string>>> GetTomlArgv(const toml::table& table,
                                                            std::string_view key,
                                                            const std::string& path,
                                                            std::string_view name);

// An optional JSON document written either as a TOML table or as a string holding JSON (the forms
// of a command tool's `parameters` and of a check's `schema`). Another type, or a string that is
// not JSON, is an error at the key's line.
Result<std::optional<nlohmann::json>> GetTomlJsonDocument(const toml::table& table,
                                                          std::string_view key,
                                                          const std::string& path,
                                                          std::string_view name);

// "a string", "an integer", "an array", ... for messages about wrong types.
std::string TomlTypeName(const toml::node& node);

// A TOML value as JSON (tables → objects, arrays → arrays). Dates and times have no JSON form:
// kInvalidArgument naming `path` and the line of the value.
Result<nlohmann::json> TomlToJson(const toml::node& node, const std::string& path);

}  // namespace mend::agent::folder_internal
