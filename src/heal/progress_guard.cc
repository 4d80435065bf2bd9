#include "mend/heal/progress_guard.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>

#include "heal/heal_event.h"
#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend::heal {
namespace {

// A streak remembers at most this many distinct failing argument sets, so a model that varies
// its arguments forever cannot grow the guard's memory without bound.
constexpr size_t kMaxFailedArgs = 32;

bool IsHexDigit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Arguments compare as JSON values, so key order and spacing do not make a call look new.
std::string CanonicalArguments(std::string_view arguments) {
  Result<nlohmann::json> parsed = ParseJson(arguments);
  if (parsed.ok()) return DumpJson(*parsed);
  return CollapseWhitespace(arguments);
}

std::string RunIdOf(const agent::ToolCallInfo& call) {
  return call.run == nullptr ? "" : call.run->run_id;
}

}  // namespace

std::string NormalizeError(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (!IsHexDigit(text[i])) {
      out += text[i++];
      continue;
    }
    size_t end = i;
    bool has_digit = false;
    while (end < text.size() && IsHexDigit(text[end])) has_digit |= IsDigit(text[end++]);
    if (has_digit) {
      out += '#';
    } else {
      out.append(text.substr(i, end - i));
    }
    i = end;
  }
  return CollapseWhitespace(out);
}

ProgressGuard::ProgressGuard(ProgressGuardOptions options) : options_(std::move(options)) {}

size_t ProgressGuard::tracked_runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_.size();
}

ProgressGuard::RunState& ProgressGuard::StateFor(const std::string& run_id) {
  auto it = runs_.find(run_id);
  if (it == runs_.end()) {
    if (options_.max_runs > 0 && runs_.size() >= options_.max_runs) {
      auto oldest = std::min_element(runs_.begin(), runs_.end(), [](const auto& a, const auto& b) {
        return a.second.last_used < b.second.last_used;
      });
      runs_.erase(oldest);
    }
    it = runs_.emplace(run_id, RunState{}).first;
  }
  it->second.last_used = ++tick_;
  return it->second;
}

Result<agent::PreToolDecision> ProgressGuard::BeforeTool(const agent::ToolCallInfo& call) {
  std::string run_id = RunIdOf(call);
  std::unique_lock<std::mutex> lock(mu_);
  auto run = runs_.find(run_id);
  if (run == runs_.end()) return agent::PreToolDecision::Allow();
  auto streak_it = run->second.tools.find(call.tool);
  if (streak_it == run->second.tools.end()) return agent::PreToolDecision::Allow();
  Streak& streak = streak_it->second;
  if (streak.failures < std::max(1, options_.repeat_threshold) ||
      streak.failed_args.count(CanonicalArguments(call.arguments)) == 0) {
    return agent::PreToolDecision::Allow();
  }
  std::string failures = std::to_string(streak.failures);
  if (streak.denials >= options_.max_denials) {
    std::string why = "Stopped: " + call.tool + " kept failing the same way (" + failures +
                      " failures, " + std::to_string(streak.denials) +
                      " repeated calls denied): " + streak.excerpt;
    runs_.erase(run);  // the run ends; a resumed run starts with a clean slate
    lock.unlock();
    PublishHealAction(options_.events, call, "stop", why);
    return agent::PreToolDecision::StopRun(why, std::string(kNoProgressCode));
  }
  streak.denials++;
  std::string why = "Not run: " + call.tool + " already failed the same way " + failures +
                    " times with these arguments: " + streak.excerpt +
                    ". Change the arguments or try a different approach.";
  lock.unlock();
  PublishHealAction(options_.events, call, "deny", why);
  return agent::PreToolDecision::Deny(why);
}

Result<agent::PostToolAction> ProgressGuard::AfterTool(const agent::ToolCallInfo& call,
                                                       const agent::ToolResult& result) {
  std::unique_lock<std::mutex> lock(mu_);
  RunState& run = StateFor(RunIdOf(call));
  if (!result.is_error) {
    run.tools.erase(call.tool);
    return agent::PostToolAction{};
  }
  agent::PostToolAction action = RecordFailure(call, result.content, run.tools[call.tool]);
  lock.unlock();
  if (!action.append_hint.empty()) {
    PublishHealAction(options_.events, call, "hint", action.append_hint);
  }
  return action;
}

agent::PostToolAction ProgressGuard::RecordFailure(const agent::ToolCallInfo& call,
                                                   const std::string& text, Streak& streak) {
  std::string key = NormalizeError(text);
  if (streak.failures == 0 || streak.error_key != key) {
    streak = Streak{};
    streak.error_key = std::move(key);
  }
  streak.failures++;
  streak.excerpt = Excerpt(text);
  if (streak.failed_args.size() < kMaxFailedArgs) {
    streak.failed_args.insert(CanonicalArguments(call.arguments));
  }
  agent::PostToolAction action;
  if (streak.failures >= std::max(1, options_.repeat_threshold)) {
    action.append_hint = "This call failed the same way " + std::to_string(streak.failures) +
                         " times: " + streak.excerpt +
                         ". Change the arguments or try a different approach.";
  }
  return action;
}

}  // namespace mend::heal
