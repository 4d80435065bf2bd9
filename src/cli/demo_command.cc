// `mend demo`: an offline end-to-end scenario of a durable run (demo_scenario.cc): a scripted
// model whose first tool call fails and who corrects itself, a simulated crash right after a
// checkpoint, and a resume by a new process that repeats no completed step; then a failed run's
// lesson travels through the durable lesson queue (surviving a crash before it was processed) to
// a similar task, and the self-healing story. The state lives in
// --home when given, else in a fresh temporary directory, so the run can be inspected afterwards.
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/demo_scenario.h"
#include "mend/base/json.h"

namespace mend::cli {
namespace {

Result<std::string> DemoHome(const CliContext& ctx) {
  if (!ctx.home.empty()) return ctx.home;
  const auto tmp = ctx.env.find("TMPDIR");
  std::string pattern = JoinPath(
      tmp != ctx.env.end() && !tmp->second.empty() ? tmp->second : "/tmp", "mend-demo-XXXXXX");
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return InternalError("cannot create a temporary directory from " + pattern);
  }
  return std::string(buf.data());
}

// Model turns asked more than once and tool calls executed more than once.
int RepeatedSteps(const DemoReport& r) {
  int repeated = 0;
  const size_t requests = r.requests_before_crash + r.requests_after_resume;
  if (requests > r.scripted_responses)
    repeated += static_cast<int>(requests - r.scripted_responses);
  for (const auto& [id, n] : r.tool_executions) repeated += n > 1 ? n - 1 : 0;
  return repeated;
}

std::string Dollars(double usd) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "$%.6f", usd);
  return buf;
}

void PrintPhase(const DemoReport& r, const std::string& phase, std::ostream& out) {
  for (const DemoEvent& e : r.events) {
    if (e.phase == phase) out << "  " << e.text << "\n";
  }
}

std::string ErrorText(const agent::RunResult& r) {
  if (!r.error.has_value()) return "no error";
  return r.error->code + " (" + r.error->error_class + ", " +
         (r.error->retryable ? "retryable" : "not retryable") + ")";
}

void PrintQuoted(const std::string& text, std::ostream& out) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out << "    | " << text.substr(start, end - start) << "\n";
    start = end + 1;
  }
}

void PrintReflexion(const DemoReport& r, std::ostream& out) {
  out << "\nreflexion:\n  a run that keeps guessing a wrong file name: " << r.failing_task << "\n";
  PrintPhase(r, "learn", out);
  out << "  result: " << store::RunStatusName(r.failing.status) << " with " << ErrorText(r.failing)
      << "\n  the reflexion hook wrote lesson job " << r.lesson_job_id
      << " to reflexion/wal/ and returned at once\n  simulated crash: the process ended before a "
         "lesson worker ran; the job stayed in the WAL\n  a new process replayed the WAL: "
      << r.lesson_drain.succeeded << " lesson stored, " << r.lesson_drain.remaining
      << " job(s) left; the model's lesson is fact " << r.lesson_id << ":\n";
  PrintQuoted(r.lesson, out);
}

void PrintHeal(const DemoReport& r, std::ostream& out) {
  out << "\nself-healing:\n  a run that keeps asking for a missing file: " << r.looping_task
      << "\n";
  for (const std::string& action : r.heal_actions) out << "    progress guard " << action << "\n";
  out << "  result: " << store::RunStatusName(r.looping.status) << " with " << ErrorText(r.looping)
      << " after " << r.looping_tool_executions
      << " tool executions\n  a run during a provider outage: " << r.outage_task
      << "\n  it asked the model again " << r.outage_retries
      << " times inside the run (provider.retries), the outage outlasted them"
      << "\n  result: " << store::RunStatusName(r.outage_failed.status) << " with "
      << ErrorText(r.outage_failed) << "\n  one pass of the recovery loop: resumed "
      << r.recovery.resumed.size() << ", completed " << r.recovery.completed.size()
      << ", left alone as not retryable " << r.recovery.skipped.non_retryable
      << "\n  the outage run is now " << store::RunStatusName(r.outage_final) << "\n";
}

void PrintImprove(const DemoReport& r, std::ostream& out) {
  out << "\nimprove (layer 2): the failed runs become cases; an editor proposes an instruction "
         "fix;\nevery case reruns twice per arm in shadow mode, one held out from the editor:\n";
  for (const std::string& c : r.improve_cases) out << "  case " << c << "\n";
  out << "  held out: " << r.improve_held_out << "; " << r.improve_runs
      << " agent runs evaluated\n\n";
  std::string card = r.improve_card;
  if (!card.empty() && card.back() == '\n') card.pop_back();
  PrintQuoted(card, out);
  out << "  the proposal is queued (nothing changed yet): mend --home " << r.home
      << " improve show " << r.improve_attempt << "\n";
}

void PrintText(const DemoReport& r, std::ostream& out) {
  const agent::RunResult& f = r.final;
  out << "mend demo: a durable run that crashes and resumes (offline, scripted model)\n"
      << "home: " << r.home << "\nagent: " << r.agent_dir << "\n\nrun:\n";
  PrintPhase(r, "run", out);
  out << "\ncrash:\n  simulated crash: the process died right after checkpoint " << r.crash_step
      << " became durable\n  the store still says \"" << r.status_after_crash
      << "\" with no live holder: the run is interrupted\n\nresume:\n  a new process resumes "
      << r.run_id << " from checkpoint " << r.crash_step << "\n";
  PrintPhase(r, "resume", out);
  size_t executions = 0;
  for (const auto& [id, n] : r.tool_executions) executions += static_cast<size_t>(n);
  out << "\nresult: run " << f.run_id << " " << store::RunStatusName(f.status) << " in " << f.steps
      << " model turns, " << f.input_tokens << " input + " << f.output_tokens << " output tokens, "
      << Dollars(f.cost_usd) << "\n  answer: " << f.output
      << "\n  model requests: " << r.requests_before_crash << " before the crash + "
      << r.requests_after_resume << " after the resume (the script has " << r.scripted_responses
      << " responses)\n  tool executions: " << executions << " for " << r.tool_executions.size()
      << " tool calls, " << r.tool_failures << " failed and corrected by the model\n";
  const int repeated = RepeatedSteps(r);
  out << "  repeated steps after the resume: " << repeated
      << (repeated == 0 ? " (completed steps were not repeated)\n" : "\n");
  PrintReflexion(r, out);
  out << "\nlong-term memory:\n  a similar task: " << r.similar_task
      << "\n  its system prompt received:\n";
  PrintQuoted(r.similar_section.empty() ? "(nothing)" : r.similar_section, out);
  out << "  result: " << store::RunStatusName(r.similar.status) << " in " << r.similar.steps
      << " model turns (the first run needed " << f.steps << "), " << r.similar_tool_failures
      << " failed tool calls\n  an unrelated task: " << r.unrelated_task << "\n  it received "
      << (r.unrelated_received_memory ? "long-term memory (unexpected)" : "no long-term memory")
      << "; " << store::RunStatusName(r.unrelated.status) << "\n  the lesson has helped "
      << r.lesson_helped << " completed run(s) so far\n";
  PrintHeal(r, out);
  PrintImprove(r, out);
  out << "\ntry: mend --home " << r.home << " memory recall \"" << r.similar_task << "\"\n";
  out << "try: mend --home " << r.home
      << " reflect list    (the lesson jobs the two failed heal runs left)\n";
  // The run completed, so `pending` would list nothing; a fork from an early checkpoint is
  // something a reader can try on it.
  out << "try: mend --home " << r.home << " fork " << r.run_id
      << " --from-step 3    (a new run from checkpoint 3; `mend pending` lists it)\n";
}

nlohmann::json ToJson(const DemoReport& r) {
  const agent::RunResult& f = r.final;
  nlohmann::json events = nlohmann::json::array();
  for (const DemoEvent& e : r.events) events.push_back({{"phase", e.phase}, {"text", e.text}});
  return {{"scenario", "crash-and-resume"},
          {"home", r.home},
          {"agent_dir", r.agent_dir},
          {"run_id", r.run_id},
          {"trace_id", r.final.trace_id},
          {"status", std::string(store::RunStatusName(f.status))},
          {"output", f.output},
          {"steps", f.steps},
          {"usage", {{"input_tokens", f.input_tokens}, {"output_tokens", f.output_tokens}}},
          {"cost_usd", f.cost_usd},
          {"crash", {{"after_checkpoint", r.crash_step}, {"status", r.status_after_crash}}},
          {"model_requests",
           {{"before_crash", r.requests_before_crash},
            {"after_resume", r.requests_after_resume},
            {"scripted", r.scripted_responses}}},
          {"tool_executions", r.tool_executions},
          {"tool_failures", r.tool_failures},
          {"repeated_steps", RepeatedSteps(r)},
          {"events", events},
          {"reflexion",
           {{"failing_task", r.failing_task},
            {"failing_status", std::string(store::RunStatusName(r.failing.status))},
            {"failing_error", r.failing.error.has_value() ? r.failing.error->code : ""},
            {"lesson_job_id", r.lesson_job_id},
            {"replay",
             {{"succeeded", r.lesson_drain.succeeded},
              {"skipped", r.lesson_drain.skipped},
              {"retried", r.lesson_drain.retried},
              {"dead_lettered", r.lesson_drain.dead_lettered},
              {"remaining", r.lesson_drain.remaining}}},
            {"lesson_id", r.lesson_id},
            {"lesson", r.lesson}}},
          {"memory",
           {{"lesson_id", r.lesson_id},
            {"lesson", r.lesson},
            {"similar_task", r.similar_task},
            {"similar_section", r.similar_section},
            {"similar_status", std::string(store::RunStatusName(r.similar.status))},
            {"similar_steps", r.similar.steps},
            {"similar_tool_failures", r.similar_tool_failures},
            {"unrelated_task", r.unrelated_task},
            {"unrelated_received_memory", r.unrelated_received_memory},
            {"unrelated_status", std::string(store::RunStatusName(r.unrelated.status))},
            {"lesson_helped", r.lesson_helped}}},
          {"heal",
           {{"looping_task", r.looping_task},
            {"looping_status", std::string(store::RunStatusName(r.looping.status))},
            {"looping_error", r.looping.error.has_value() ? r.looping.error->code : ""},
            {"looping_retryable", r.looping.error.has_value() && r.looping.error->retryable},
            {"looping_tool_executions", r.looping_tool_executions},
            {"heal_actions", r.heal_actions},
            {"outage_task", r.outage_task},
            {"outage_status", std::string(store::RunStatusName(r.outage_failed.status))},
            {"outage_error", r.outage_failed.error.has_value() ? r.outage_failed.error->code : ""},
            {"outage_retries", r.outage_retries},
            {"recovery",
             {{"resumed", r.recovery.resumed},
              {"completed", r.recovery.completed},
              {"skipped_non_retryable", r.recovery.skipped.non_retryable}}},
            {"outage_final_status", std::string(store::RunStatusName(r.outage_final))}}},
          {"improve",
           {{"cases", r.improve_cases},
            {"held_out", r.improve_held_out},
            {"attempt_id", r.improve_attempt},
            {"outcome", r.improve_outcome},
            {"runs", r.improve_runs},
            {"card", r.improve_card}}}};
}

Status RunDemo(CliContext& ctx) {
  MEND_ASSIGN_OR_RETURN(std::string home, DemoHome(ctx));
  MEND_ASSIGN_OR_RETURN(DemoReport report, RunDemoScenario(home));
  if (report.final.status != store::RunStatus::kCompleted) {
    return InternalError("the demo run ended " +
                         std::string(store::RunStatusName(report.final.status)));
  }
  if (report.lesson_drain.succeeded != 1 || report.similar_section.empty() ||
      report.unrelated_received_memory) {
    return InternalError("long-term memory did not behave as the demo expects");
  }
  if (report.looping.status != store::RunStatus::kFailed ||
      report.outage_final != store::RunStatus::kCompleted) {
    return InternalError("self-healing did not behave as the demo expects");
  }
  if (report.improve_outcome != "proposal") {
    return InternalError("improve did not make the proposal the demo expects: " +
                         report.improve_outcome);
  }
  if (ctx.json) {
    ctx.out << DumpJson(ToJson(report)) << "\n";
  } else {
    PrintText(report, ctx.out);
    // The story of the crashed-and-resumed run as its trace tells it (docs/observe.md).
    ctx.out << "\ntrace of " << report.run_id << " (mend --home " << report.home << " traces "
            << report.run_id << "):\n";
    if (Status shown = PrintRunTrace(ctx, report.home, report.run_id); !shown.ok()) {
      ctx.out << "  (no trace: " << shown.message() << ")\n";
    }
  }
  return OkStatus();
}

}  // namespace

void AddDemoCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* demo = app.add_subcommand(
      "demo",
      "offline scenario: a durable run crashes and resumes without repeating a step, a failed "
      "run's lesson survives a crash in the lesson queue and reaches a similar task (and not an "
      "unrelated one) through long-term memory, a looping run is stopped and a run failed by an "
      "outage is recovered");
  demo->group("Commands");
  demo->callback([&ctx] { ctx.action = [&ctx] { return RunDemo(ctx); }; });
}

}  // namespace mend::cli
