// Which tool results are failures (FailureRules in conversation.h). The built-in rules look at
// what agents' tools commonly return when they fail: a JSON object that says so, a non-zero exit
// code, or a first line that reads like an error. They err towards "not a failure": a wrong
// failure becomes a wrong lesson, a missed one only a missed lesson.
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <utility>

#include "mend/base/json.h"
#include "mend/base/utf8.h"
#include "proxy/conversation.h"

namespace mend::proxy {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxErrorBytes = 2000;

bool Truthy(const Json& value) {
  if (value.is_null()) return false;
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_string()) return !value.get_ref<const std::string&>().empty();
  if (value.is_object() || value.is_array()) return !value.empty();
  return true;
}

bool NonZeroNumber(const Json& value) {
  if (value.is_number_integer()) return value.get<int64_t>() != 0;
  if (value.is_number_float()) return value.get<double>() != 0;
  return false;
}

bool JsonSaysFailure(const Json& j) {
  if (!j.is_object()) return false;
  for (const char* key : {"error", "errors", "stderr_error"}) {
    if (auto it = j.find(key); it != j.end() && Truthy(*it)) return true;
  }
  for (const char* key : {"isError", "is_error"}) {
    if (auto it = j.find(key); it != j.end() && it->is_boolean() && it->get<bool>()) return true;
  }
  for (const char* key : {"ok", "success"}) {
    if (auto it = j.find(key); it != j.end() && it->is_boolean() && !it->get<bool>()) return true;
  }
  for (const char* key : {"exit_code", "exitCode", "returncode", "return_code", "exit_status"}) {
    if (auto it = j.find(key); it != j.end() && NonZeroNumber(*it)) return true;
  }
  return false;
}

// "exit code 2", "exit status 1", "exited with code 127": a number after the phrase, not 0.
bool NonZeroExitPhrase(std::string_view lower) {
  for (std::string_view phrase : {"exit code", "exit status", "exited with code", "exit_code"}) {
    size_t at = lower.find(phrase);
    while (at != std::string_view::npos) {
      size_t i = at + phrase.size();
      while (i < lower.size() && (lower[i] == ' ' || lower[i] == ':' || lower[i] == '=')) ++i;
      int code = 0;
      auto [end, ec] = std::from_chars(lower.data() + i, lower.data() + lower.size(), code);
      if (ec == std::errc() && end != lower.data() + i && code != 0) return true;
      at = lower.find(phrase, at + 1);
    }
  }
  return false;
}

bool FirstLineSaysFailure(std::string_view text) {
  std::string_view line = Trim(text);
  line = line.substr(0, line.find('\n'));
  const std::string lower = ToLowerAscii(Trim(line));
  static constexpr std::array<std::string_view, 9> kStarts = {
      "error",     "traceback (most recent call last)",
      "exception", "fatal:",
      "failed",    "failure:",
      "panic:",    "uncaught",
      "err:"};
  for (std::string_view start : kStarts) {
    if (lower.starts_with(start)) return true;
  }
  static constexpr std::array<std::string_view, 6> kAnywhere = {
      "permission denied", "command not found", "no such file or directory",
      "access denied",     "not found: ",       "econnrefused"};
  for (std::string_view phrase : kAnywhere) {
    if (lower.find(phrase) != std::string::npos) return true;
  }
  return NonZeroExitPhrase(lower);
}

}  // namespace

Result<FailureRules> FailureRules::Create(const std::vector<std::string>& patterns) {
  FailureRules rules;
  for (const std::string& text : patterns) {
    Result<Pattern> pattern = Pattern::Compile(text);
    if (!pattern.ok()) {
      return InvalidArgumentError("proxy.failure_patterns: " +
                                  std::string(pattern.status().message()));
    }
    rules.patterns_.push_back(*std::move(pattern));
  }
  return rules;
}

std::optional<std::string> FailureRules::Classify(const ToolExchange& exchange) const {
  if (!exchange.has_result) return std::nullopt;
  const std::string_view result = Trim(exchange.result);
  bool failed = exchange.flagged_error;
  if (!failed && !result.empty() && result.front() == '{') {
    Result<Json> parsed = ParseJson(result);
    failed = parsed.ok() && JsonSaysFailure(*parsed);
  }
  if (!failed) failed = FirstLineSaysFailure(result);
  for (size_t i = 0; !failed && i < patterns_.size(); ++i) failed = patterns_[i].Search(result);
  if (!failed) return std::nullopt;
  std::string error = TruncateUtf8Bytes(result, kMaxErrorBytes);
  if (error.empty()) error = "(the tool returned an empty error)";
  return error;
}

}  // namespace mend::proxy
