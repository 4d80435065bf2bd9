#include "improve/evaluate_check.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend::improve::internal {
namespace {

using nlohmann::json;

CheckVerdict Failed(std::string error) {
  CheckVerdict verdict;
  verdict.error = std::move(error);
  return verdict;
}

// The first line of a failing check's stderr, bounded, so an error names the check's own reason
// without carrying a whole log.
std::string StderrExcerpt(std::string_view stderr_data) {
  std::string_view line = stderr_data.substr(0, stderr_data.find('\n'));
  line = Trim(line);
  std::string excerpt = TruncateUtf8Bytes(line, kMaxCheckStderrExcerptBytes);
  if (excerpt.size() < line.size()) excerpt += "...";
  return SanitizeUtf8(excerpt);
}

}  // namespace

std::string CheckMessageExcerpt(std::string_view text) {
  const std::string_view all = Trim(text);
  std::size_t end = 0;
  for (size_t lines = 0; end < all.size() && lines < kMaxCheckMessageLines; ++lines) {
    const std::size_t newline = all.find('\n', end);
    end = newline == std::string_view::npos ? all.size() : newline + 1;
  }
  // A repaired byte takes three, a character at most four: this many bytes fill the bound, so a
  // check's 64 KiB of binary output is never repaired whole.
  const std::string_view head = all.substr(0, std::min(end, kMaxCheckMessageBytes + 4));
  const std::string repaired = SanitizeUtf8(head);
  std::string excerpt = TruncateUtf8Bytes(repaired, kMaxCheckMessageBytes);
  const bool cut = head.size() < all.size() || excerpt.size() < repaired.size();
  excerpt = std::string(Trim(excerpt));
  if (cut) excerpt += "...";
  return excerpt;
}

std::string CheckInput(const Case& c, const CaseRun& run, const json& transcript) {
  json case_json{{"id", c.id}, {"task", c.task}, {"tags", c.tags}, {"check_args", c.check_args}};
  json input{{"task", c.task},      {"status", run.status},     {"output", run.output},
             {"error", run.error},  {"transcript", transcript}, {"case", std::move(case_json)},
             {"repeat", run.repeat}};
  return DumpJson(input);
}

CheckVerdict ParseVerdict(std::string_view stdout_text) {
  Result<json> parsed = ParseJson(stdout_text);
  if (!parsed.ok()) {
    return Failed("printed no JSON object: " + std::string(parsed.status().message()));
  }
  if (!parsed->is_object()) {
    return Failed(std::string("printed no JSON object: got ") + parsed->type_name());
  }
  Result<bool> pass = GetBool(*parsed, "pass");
  if (!pass.ok()) {
    return Failed("printed an invalid verdict: " + std::string(pass.status().message()));
  }
  Result<std::optional<double>> score = GetOptionalDouble(*parsed, "score");
  if (!score.ok()) {
    return Failed("printed an invalid verdict: " + std::string(score.status().message()));
  }
  // ParseJson already refuses a literal too large for a double (1e999); the verdict's contract is
  // checked here anyway, so it does not rest on that parser detail.
  if (score->has_value() && !std::isfinite(**score)) {
    return Failed("printed an invalid verdict: JSON key \"score\" is not a finite number");
  }
  CheckVerdict verdict;
  verdict.pass = *pass;
  verdict.score = score->value_or(*pass ? 1.0 : 0.0);
  auto reason = parsed->find("reason");
  if (reason != parsed->end() && reason->is_string()) {
    verdict.message = CheckMessageExcerpt(reason->get<std::string>());
  }
  return verdict;
}

namespace {

CheckVerdict Judge(const SubprocessResult& result, std::chrono::milliseconds timeout) {
  if (result.timed_out) return Failed("timed out after " + FormatTimeout(timeout));
  if (result.term_signal != 0) {
    return Failed("killed by signal " + std::to_string(result.term_signal));
  }
  if (result.exit_code != 0) {
    std::string error = "exited " + std::to_string(result.exit_code);
    std::string excerpt = StderrExcerpt(result.stderr_data);
    if (!excerpt.empty()) error += ": " + excerpt;
    return Failed(std::move(error));
  }
  if (result.stdout_total > kMaxCheckStdoutBytes) {
    return Failed("printed " + std::to_string(result.stdout_total) + " bytes, more than the " +
                  std::to_string(kMaxCheckStdoutBytes) + " a verdict may take");
  }
  return ParseVerdict(result.stdout_data);
}

}  // namespace

CheckVerdict VerdictOf(const SubprocessResult& result, std::chrono::milliseconds timeout) {
  CheckVerdict verdict = Judge(result, timeout);
  if (verdict.message.empty()) verdict.message = CheckMessageExcerpt(result.stderr_data);
  // Without a valid verdict, stdout holds the check's own words (prose, a broken object).
  if (verdict.message.empty() && !verdict.error.empty()) {
    verdict.message = CheckMessageExcerpt(result.stdout_data);
  }
  return verdict;
}

std::string FormatTimeout(std::chrono::milliseconds d) {
  const int64_t ms = d.count();
  if (ms != 0 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

CheckVerdict RunCheck(const std::vector<std::string>& argv, const std::string& cwd,
                      const std::string& stdin_data, std::chrono::milliseconds timeout) {
  SubprocessOptions options;
  options.argv = argv;
  options.cwd = cwd;
  options.stdin_data = stdin_data;
  options.timeout = timeout;
  options.max_output_bytes = kMaxCheckStdoutBytes;
  Result<SubprocessResult> result = RunSubprocess(options);
  if (!result.ok()) return Failed("could not start: " + std::string(result.status().message()));
  return VerdictOf(*result, timeout);
}

}  // namespace mend::improve::internal
