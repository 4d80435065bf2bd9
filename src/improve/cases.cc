#include "mend/improve/cases.h"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend::improve {
namespace {

Status LineError(std::size_t line, std::string_view message) {
  return InvalidArgumentError("line " + std::to_string(line) + ": " + std::string(message));
}

}  // namespace

bool IsValidCaseId(std::string_view id) {
  if (id.empty() || id.size() > kMaxCaseIdLength) return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (alnum) continue;
    if (i > 0 && (c == '.' || c == '_' || c == '-')) continue;
    return false;
  }
  return true;
}

namespace {

Result<std::vector<std::string>> GetStringList(const nlohmann::json& obj, std::string_view key) {
  MEND_ASSIGN_OR_RETURN(std::optional<const nlohmann::json*> array, GetOptionalArray(obj, key));
  std::vector<std::string> out;
  if (!array.has_value()) return out;
  for (const nlohmann::json& item : **array) {
    if (!item.is_string()) {
      return InvalidArgumentError(std::string(key) + " must hold strings only, found " +
                                  item.type_name());
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

bool IsAbsolute(std::string_view path) { return !path.empty() && path.front() == '/'; }

// Unknown keys are errors so that a misspelt "check_arg" does not silently drop the arguments.
Status CheckKeys(const nlohmann::json& obj) {
  static constexpr std::string_view kKeys[] = {"id", "task", "workspace", "check_args", "tags"};
  for (const auto& [key, value] : obj.items()) {
    bool known = false;
    for (std::string_view k : kKeys) known = known || key == k;
    if (!known) {
      return InvalidArgumentError("unknown key \"" + key +
                                  "\" (known: id, task, workspace, check_args, tags)");
    }
  }
  return OkStatus();
}

Result<Case> ParseCaseObject(const nlohmann::json& obj, std::size_t line,
                             std::string_view base_dir) {
  if (!obj.is_object()) {
    return InvalidArgumentError(std::string("a case must be a JSON object, found ") +
                                obj.type_name());
  }
  MEND_RETURN_IF_ERROR(CheckKeys(obj));
  Case c;
  MEND_ASSIGN_OR_RETURN(c.task, GetString(obj, "task"));
  if (Trim(c.task).empty()) return InvalidArgumentError("task is empty");
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> id, GetOptionalString(obj, "id"));
  c.id = id.has_value() ? *std::move(id) : "case-" + std::to_string(line);
  if (!IsValidCaseId(c.id)) {
    return InvalidArgumentError("invalid id \"" + c.id +
                                "\" (1 to 128 of A-Z a-z 0-9 . _ -, starting with a letter or a "
                                "digit)");
  }
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> workspace, GetOptionalString(obj, "workspace"));
  if (workspace.has_value()) {
    if (workspace->empty()) return InvalidArgumentError("workspace is empty");
    c.workspace = IsAbsolute(*workspace) ? *workspace : JoinPath(base_dir, *workspace);
  }
  MEND_ASSIGN_OR_RETURN(c.check_args, GetStringList(obj, "check_args"));
  MEND_ASSIGN_OR_RETURN(c.tags, GetStringList(obj, "tags"));
  return c;
}

}  // namespace

Result<std::vector<Case>> ParseCasesJsonl(std::string_view text, std::string_view base_dir) {
  std::vector<Case> cases;
  std::map<std::string, std::size_t, std::less<>> first_line_of_id;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Trim(line).empty()) continue;

    Result<nlohmann::json> json = ParseJson(line);
    if (!json.ok()) return LineError(line_number, json.status().message());
    Result<Case> parsed = ParseCaseObject(*json, line_number, base_dir);
    if (!parsed.ok()) return LineError(line_number, parsed.status().message());
    auto [it, inserted] = first_line_of_id.emplace(parsed->id, line_number);
    if (!inserted) {
      return LineError(line_number, "duplicate id \"" + parsed->id + "\" (first used on line " +
                                        std::to_string(it->second) + ")");
    }
    cases.push_back(*std::move(parsed));
  }
  if (cases.empty()) return InvalidArgumentError("no cases: the text holds no JSON object line");
  return cases;
}

Result<std::vector<Case>> LoadCasesFile(FileSystem& fs, const std::string& path) {
  Result<std::string> text = ReadFileToString(fs, path);
  if (!text.ok()) return text.status().Annotate("cases file " + path);
  Result<std::vector<Case>> cases = ParseCasesJsonl(*text, DirName(path));
  if (!cases.ok()) return cases.status().Annotate(path);
  return cases;
}

}  // namespace mend::improve
