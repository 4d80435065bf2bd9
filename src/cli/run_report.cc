// How every command that drives a run (run, resume, approve, answer, chat) shows its outcome.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "mend/agent/agent.h"
#include "mend/base/json.h"

namespace mend::cli {
namespace {

// 1234567 -> "1,234,567": token counts are read by people.
std::string WithThousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return n < 0 ? "-" + grouped : grouped;
}

std::string Dollars(double usd) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "$%.4f", usd);
  return buf;
}

nlohmann::json NullOr(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

nlohmann::json RunJson(const agent::RunResult& r) {
  nlohmann::json error = nullptr;
  if (r.error.has_value()) {
    error = {{"code", r.error->code},
             {"message", r.error->message},
             {"class", r.error->error_class},
             {"retryable", r.error->retryable}};
  }
  return {{"run_id", r.run_id},
          {"status", std::string(store::RunStatusName(r.status))},
          {"output", r.output},
          {"steps", r.steps},
          {"usage", {{"input_tokens", r.input_tokens}, {"output_tokens", r.output_tokens}}},
          {"cost_usd", r.cost_usd},
          {"error", error},
          {"waiting", NullOr(r.waiting)},
          {"question", NullOr(r.question)},
          {"trace_id", NullOr(r.trace_id)}};
}

std::string Summary(const agent::RunResult& r) {
  return "run " + r.run_id + " " + std::string(store::RunStatusName(r.status)) + " in " +
         std::to_string(r.steps) + (r.steps == 1 ? " step, " : " steps, ") +
         WithThousands(r.input_tokens + r.output_tokens) + " tokens, " + Dollars(r.cost_usd);
}

void PrintWaiting(const agent::RunResult& r, std::ostream& out) {
  if (r.waiting == "question") {
    out << "run " << r.run_id << " asks: " << r.question << "\n"
        << "answer with: mend answer " << r.run_id << " TEXT\n";
    return;
  }
  out << "run " << r.run_id << " waits for approval: " << r.question << "\n"
      << "continue with: mend approve " << r.run_id << "   (or refuse: mend approve " << r.run_id
      << " --deny --reason TEXT)\n";
}

std::string FailureMessage(const agent::RunResult& r) {
  std::string message = "run " + r.run_id + " " + std::string(store::RunStatusName(r.status));
  if (r.error.has_value()) message += ": " + r.error->message;
  if (r.status == store::RunStatus::kRunning) {
    message += " (interrupted; continue with: mend resume " + r.run_id + ")";
  }
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return message;
}

}  // namespace

Status ReportRun(CliContext& ctx, const agent::RunResult& result) {
  if (ctx.json) ctx.out << DumpJson(RunJson(result)) << "\n";
  switch (result.status) {
    case store::RunStatus::kCompleted:
      if (!ctx.json) {
        ctx.out << result.output;
        if (!result.output.empty() && !result.output.ends_with("\n")) ctx.out << "\n";
        ctx.err << Summary(result) << "\n";
      }
      return OkStatus();
    case store::RunStatus::kWaiting:
      if (!ctx.json) PrintWaiting(result, ctx.out);
      return OkStatus();
    case store::RunStatus::kRunning:
    case store::RunStatus::kFailed:
    case store::RunStatus::kQuarantined:
      break;
  }
  const std::string message = FailureMessage(result);
  ctx.err << "mend: " << message << "\n";
  ctx.error_reported = true;
  return UnknownError(message);
}

}  // namespace mend::cli
