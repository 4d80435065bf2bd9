// toml++ reports syntax errors by throwing; this file is the one place the agent-folder loader
// catches them and turns them into Status values.

#include "agent/agent_folder_toml.h"

#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>

#include "agent/agent_folder_internal.h"
#include "mend/base/json.h"

namespace mend::agent::folder_internal {

Result<toml::table> ParseToml(std::string_view text, const std::string& path) {
  try {
    return toml::parse(text, std::string_view(path));
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    std::string what(e.description());
    // `tools = [...]` followed by `[tools.x]` is the likeliest way to get here by mistake.
    if (what.find("'tools.") != std::string::npos) {
      what +=
          " (options of a tool go in [tool_options.<name>]; `tools` is the list of enabled "
          "tools)";
    }
    return InvalidArgumentError(path + ":" + std::to_string(begin.line) + ":" +
                                std::to_string(begin.column) + ": invalid TOML: " + what);
  } catch (const std::exception& e) {
    return InvalidArgumentError(path + ": invalid TOML: " + e.what());
  }
}

std::vector<TomlEntry> EntriesInFileOrder(const toml::table& table) {
  std::vector<TomlEntry> entries;
  for (auto&& [key, node] : table) {
    entries.push_back({std::string(key.str()), static_cast<int>(key.source().begin.line), &node});
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const TomlEntry& a, const TomlEntry& b) { return a.line < b.line; });
  return entries;
}

Status CheckKnownKeys(const toml::table& table, const std::vector<std::string>& known,
                      const std::string& path, const std::string& prefix) {
  for (const TomlEntry& entry : EntriesInFileOrder(table)) {
    if (std::find(known.begin(), known.end(), entry.key) != known.end()) continue;
    const std::string message =
        "unknown key " + prefix + entry.key + DidYouMean(entry.key, known, prefix);
    std::string accepted;
    for (const std::string& k : known) accepted += (accepted.empty() ? "" : ", ") + prefix + k;
    return ErrorAt(path, entry.line, message + "; accepted keys: " + accepted);
  }
  return OkStatus();
}

std::string TomlTypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date or time";
  }
}

int KeyLine(const toml::table& table, std::string_view key) {
  auto it = table.find(key);
  return it == table.end() ? 1 : static_cast<int>(it->first.source().begin.line);
}

namespace {

// A TOML value as an error message quotes it.
std::string Describe(const toml::node& node) {
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* s = node.as_string()) return "\"" + s->get() + "\"";
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  return TomlTypeName(node);
}

Status WrongType(const toml::table& table, std::string_view key, const std::string& path,
                 std::string_view name, std::string_view expected) {
  return ErrorAt(path, KeyLine(table, key),
                 std::string(name) + " must be " + std::string(expected) + ", got " +
                     Describe(*table.get(key)));
}

}  // namespace

Result<std::optional<std::string>> GetTomlString(const toml::table& table, std::string_view key,
                                                 const std::string& path, std::string_view name) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::optional<std::string>();
  if (const auto* s = node->as_string()) return std::optional<std::string>(s->get());
  return WrongType(table, key, path, name, "a string");
}

Result<std::optional<bool>> GetTomlBool(const toml::table& table, std::string_view key,
                                        const std::string& path, std::string_view name) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::optional<bool>();
  if (const auto* b = node->as_boolean()) return std::optional<bool>(b->get());
  return WrongType(table, key, path, name, "true or false");
}

Result<std::optional<std::int64_t>> GetTomlInt(const toml::table& table, std::string_view key,
                                               const std::string& path, std::string_view name,
                                               std::int64_t min, std::int64_t max) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::optional<std::int64_t>();
  const auto* i = node->as_integer();
  if (i == nullptr || i->get() < min || i->get() > max) {
    return WrongType(table, key, path, name,
                     "an integer between " + std::to_string(min) + " and " + std::to_string(max));
  }
  return std::optional<std::int64_t>(i->get());
}

Result<std::optional<std::vector<TomlString>>> GetTomlStringArray(const toml::table& table,
                                                                  std::string_view key,
                                                                  const std::string& path,
                                                                  std::string_view name,
                                                                  std::string_view example) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::optional<std::vector<TomlString>>();
  const std::string expected = "an array of strings, e.g. " + std::string(example);
  const auto* array = node->as_array();
  if (array == nullptr) return WrongType(table, key, path, name, expected);
  std::vector<TomlString> strings;
  for (const toml::node& item : *array) {
    const int line = static_cast<int>(item.source().begin.line);
    const auto* s = item.as_string();
    if (s == nullptr) {
      return ErrorAt(
          path, line,
          std::string(name) + " must be " + expected + ", got an element " + Describe(item));
    }
    strings.push_back({s->get(), line});
  }
  return std::optional<std::vector<TomlString>>(std::move(strings));
}

Result<const toml::table*> GetTomlTable(const toml::table& table, std::string_view key,
                                        const std::string& path, std::string_view name) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return static_cast<const toml::table*>(nullptr);
  if (const auto* t = node->as_table()) return t;
  return ErrorAt(path, KeyLine(table, key),
                 std::string(name) + " must be a table ([" + std::string(name) + "]), got " +
                     TomlTypeName(*node));
}

namespace {

// The argv form of a command written as one string, split on spaces: ["sh", "check.sh"].
std::string SuggestArgv(std::string_view command) {
  std::string suggestion = "[";
  size_t start = 0;
  while (start < command.size()) {
    const size_t space = command.find(' ', start);
    const size_t stop = space == std::string_view::npos ? command.size() : space;
    if (stop > start) {
      if (suggestion.size() > 1) suggestion += ", ";
      suggestion += "\"" + std::string(command.substr(start, stop - start)) + "\"";
    }
    start = stop + 1;
  }
  return suggestion + "]";
}

}  // namespace

Result<std::optional<std::vector<std::string>>> GetTomlArgv(const toml::table& table,
                                                            std::string_view key,
                                                            const std::string& path,
                                                            std::string_view name) {
  using Argv = std::optional<std::vector<std::string>>;
  if (const auto* s = table.get_as<std::string>(key)) {
    return ErrorAt(path, KeyLine(table, key),
                   std::string(name) +
                       " must be an array of strings (the argv, run without a shell), e.g. " +
                       std::string(name) + " = " + SuggestArgv(s->get()));
  }
  MEND_ASSIGN_OR_RETURN(auto argv,
                        GetTomlStringArray(table, key, path, name, R"(["/bin/sh", "check.sh"])"));
  if (!argv.has_value()) return Argv();
  if (argv->empty() || argv->front().value.empty()) {
    return ErrorAt(
        path, KeyLine(table, key),
        std::string(name) + " must not be empty: its first element is the program to run");
  }
  std::vector<std::string> command;
  for (TomlString& arg : *argv) command.push_back(std::move(arg.value));
  return Argv(std::move(command));
}

Result<std::optional<nlohmann::json>> GetTomlJsonDocument(const toml::table& table,
                                                          std::string_view key,
                                                          const std::string& path,
                                                          std::string_view name) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::optional<nlohmann::json>();
  if (node->is_table()) {
    MEND_ASSIGN_OR_RETURN(nlohmann::json document, TomlToJson(*node, path));
    return std::optional<nlohmann::json>(std::move(document));
  }
  const int line = KeyLine(table, key);
  if (const auto* text = node->as_string()) {
    Result<nlohmann::json> parsed = ParseJson(text->get());
    if (!parsed.ok()) {
      return ErrorAt(path, line, std::string(name) + ": " + std::string(parsed.status().message()));
    }
    return std::optional<nlohmann::json>(std::move(parsed).value());
  }
  return ErrorAt(path, line,
                 std::string(name) +
                     " must be a table (a JSON Schema written in TOML) or a string holding JSON, "
                     "got " +
                     TomlTypeName(*node));
}

Result<nlohmann::json> TomlToJson(const toml::node& node, const std::string& path) {
  if (const auto* table = node.as_table()) {
    nlohmann::json object = nlohmann::json::object();
    for (const TomlEntry& entry : EntriesInFileOrder(*table)) {
      MEND_ASSIGN_OR_RETURN(object[entry.key], TomlToJson(*entry.node, path));
    }
    return object;
  }
  if (const auto* array = node.as_array()) {
    nlohmann::json items = nlohmann::json::array();
    for (const toml::node& item : *array) {
      MEND_ASSIGN_OR_RETURN(nlohmann::json value, TomlToJson(item, path));
      items.push_back(std::move(value));
    }
    return items;
  }
  if (const auto* s = node.as_string()) return nlohmann::json(s->get());
  if (const auto* i = node.as_integer()) return nlohmann::json(i->get());
  if (const auto* f = node.as_floating_point()) return nlohmann::json(f->get());
  if (const auto* b = node.as_boolean()) return nlohmann::json(b->get());
  return ErrorAt(path, static_cast<int>(node.source().begin.line),
                 "dates and times cannot appear in a JSON Schema");
}

}  // namespace mend::agent::folder_internal
