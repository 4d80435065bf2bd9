// How `mend show` renders a run: JSON for tools, text for people.
#include "cli/show_render.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "mend/app/run_json.h"
#include "mend/base/time_format.h"
#include "mend/base/utf8.h"

namespace mend::cli::show {
namespace {

using nlohmann::json;

json ModelJson(const agent::RunModel& m) {
  if (m.empty()) return nullptr;
  json j = {{"provider", m.provider}, {"base_url", m.base_url}, {"model", m.model}};
  if (!m.script_file.empty()) j["script_file"] = m.script_file;
  return j;
}

std::string Dollars(double usd) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "$%.4f", usd);
  return buf;
}

std::string StatusLine(const agent::RunView& v, const app::RunOverview& o) {
  if (o.interruption.has_value()) {
    return "interrupted: " + o.interruption->Describe() + "; mend resume " + v.run.id +
           " or mend recover continues it";
  }
  std::string text(store::RunStatusName(v.run.status));
  if (!v.run.waiting.empty()) text += " (" + v.run.waiting + ")";
  return text;
}

// `text` as it fits a terminal: cut at kClipBytes (on a UTF-8 boundary) unless kFull.
std::string Body(const std::string& text, Detail detail) {
  if (detail == Detail::kFull || text.size() <= kClipBytes) return text;
  const std::string cut = TruncateUtf8Bytes(text, kClipBytes);
  return cut + "\n[... " + std::to_string(text.size() - cut.size()) +
         " more bytes; --full or --json shows them]";
}

void Field(std::ostream& out, std::string_view key, const std::string& value) {
  if (value.empty()) return;
  out << key << std::string(key.size() < 12 ? 12 - key.size() : 1, ' ') << value << "\n";
}

void PrintHeader(const agent::RunView& v, const app::RunOverview& o, std::ostream& out) {
  const store::RunRecord& r = v.run;
  Field(out, "run", r.id);
  Field(out, "status", StatusLine(v, o));
  Field(out, "agent", r.agent + (r.agent_dir.empty() ? "" : " (" + r.agent_dir + ")"));
  Field(out, "", o.AgentChangedText());
  Field(out, "task", r.task);
  Field(out, "workspace", o.origin.workspace.empty() ? "(not recorded)" : o.origin.workspace);
  Field(out, "model", agent::DescribeRunModel(o.origin.model));
  for (const agent::ModelChange& c : o.origin.model_changes) {
    Field(out, "", "changed at " + c.at + " from " + agent::DescribeRunModel(c.from));
  }
  if (o.origin.shadow) Field(out, "shadow", "yes: only the read-only tools run");
  if (!o.origin.arm.empty()) {
    Field(out, "arm",
          o.origin.arm == "baseline"
              ? "baseline (the agent folder's files; canary of proposal " + o.origin.canary + ")"
              : o.origin.arm + " (the proposal's files, canaried)");
  }
  Field(out, "usage",
        std::to_string(v.steps) +
            (v.steps == 1 ? " step (model turn), " : " steps (model turns), ") +
            std::to_string(v.input_tokens) + " input + " + std::to_string(v.output_tokens) +
            " output tokens, " + Dollars(v.cost_usd));
  Field(out, "created", FormatRfc3339Seconds(r.created_at));
  Field(out, "updated", FormatRfc3339Seconds(r.updated_at));
  if (!r.parent_id.empty()) {
    Field(out, "forked from", r.parent_id + " at checkpoint " + std::to_string(r.parent_step));
  }
  if (r.attempts > 0) Field(out, "attempts", std::to_string(r.attempts));
  if (r.last_error.has_value()) {
    const store::RunError& e = *r.last_error;
    Field(out, "last error",
          e.code + " (" + e.error_class + (e.retryable ? ", retryable" : ", not retryable") +
              "): " + e.message);
  }
  if (!v.question.empty()) Field(out, "asks", v.question);
  if (!o.origin_error.empty()) Field(out, "metadata", "unreadable: " + o.origin_error);
}

void PrintEntry(const agent::TranscriptEntry& entry, size_t index, Detail detail,
                std::ostream& out) {
  const llm::Message& m = entry.message;
  std::string title = "[" + std::to_string(index) + "] " + std::string(llm::RoleName(m.role));
  if (m.role == llm::Role::kTool) {
    title += " " + m.name + " (" + m.tool_call_id + ")";
    if (m.is_error) title += ", error";
    if (entry.hook_decision == "denied") title += ", denied by a hook";
    if (entry.hook_decision == "supplied") title += ", result given by a hook (not run)";
    if (entry.hook_decision == "stopped") title += ", run stopped by a hook";
    if (entry.replaced_by_hook) title += ", replaced by a hook";
  }
  out << title << "\n";
  if (!m.content.empty()) {
    const std::string body = Body(m.content, detail);
    out << body << (body.ends_with('\n') ? "" : "\n");
  }
  for (const llm::ToolCall& c : m.tool_calls) {
    out << "  call " << c.name << " (" << c.id << ") " << Body(c.arguments, detail) << "\n";
  }
}

}  // namespace

// RunViewJson without the interruption fields.
static json ViewJson(const agent::RunView& v, const app::RunOverview& o) {
  const store::RunRecord& r = v.run;
  json transcript = json::array();
  for (const agent::TranscriptEntry& entry : v.transcript)
    transcript.push_back(app::TranscriptEntryJson(entry));
  json checkpoints = json::array();
  for (const store::CheckpointInfo& c : v.checkpoints) {
    // "step" is the old name of "checkpoint" (docs/runs.md, "Steps and checkpoints").
    checkpoints.push_back({{"checkpoint", c.step},
                           {"step", c.step},
                           {"messages", c.message_count},
                           {"created_at", FormatRfc3339(c.created_at)}});
  }
  json changes = json::array();
  for (const agent::ModelChange& c : o.origin.model_changes) {
    changes.push_back({{"from", ModelJson(c.from)}, {"to", ModelJson(c.to)}, {"at", c.at}});
  }
  return {{"run_id", r.id},
          {"status", std::string(store::RunStatusName(r.status))},
          {"output", v.output},
          {"steps", v.steps},
          {"usage", {{"input_tokens", v.input_tokens}, {"output_tokens", v.output_tokens}}},
          {"cost_usd", v.cost_usd},
          {"error", app::RunErrorJson(r.last_error)},
          {"waiting", app::NullIfEmpty(r.waiting)},
          {"question", app::NullIfEmpty(v.question)},
          {"agent", r.agent},
          {"agent_dir", r.agent_dir},
          {"agent_changed", app::NullIfEmpty(o.AgentChangedText())},
          {"task", r.task},
          {"workspace", app::NullIfEmpty(o.origin.workspace)},
          {"model", ModelJson(o.origin.model)},
          {"model_changes", std::move(changes)},
          {"shadow", o.origin.shadow},
          {"arm", app::NullIfEmpty(o.origin.arm)},
          {"canary", app::NullIfEmpty(o.origin.canary)},
          {"attempts", r.attempts},
          {"next_attempt_at",
           r.next_attempt_at.has_value() ? json(FormatRfc3339(*r.next_attempt_at)) : json(nullptr)},
          {"parent",
           r.parent_id.empty()
               ? json(nullptr)
               : json{{"id", r.parent_id}, {"checkpoint", r.parent_step}, {"step", r.parent_step}}},
          {"created_at", FormatRfc3339(r.created_at)},
          {"updated_at", FormatRfc3339(r.updated_at)},
          {"transcript", std::move(transcript)},
          {"pending_calls", app::ToolCallsJson(v.pending)},
          {"checkpoints", std::move(checkpoints)}};
}

json RunViewJson(const agent::RunView& v, const app::RunOverview& o) {
  json j = ViewJson(v, o);
  app::AddInterruptionJson(o.interruption, j);
  return j;
}

void PrintRunView(const agent::RunView& v, const app::RunOverview& o, Detail detail,
                  std::ostream& out) {
  PrintHeader(v, o, out);
  if (!v.output.empty()) out << "\noutput\n" << Body(v.output, detail) << "\n";
  out << "\ntranscript (" << v.transcript.size() << " messages)\n";
  for (size_t i = 0; i < v.transcript.size(); ++i) PrintEntry(v.transcript[i], i + 1, detail, out);
  for (const llm::ToolCall& c : v.pending) {
    out << "pending call " << c.name << " (" << c.id << ") " << Body(c.arguments, detail) << "\n";
  }
  if (v.checkpoints.empty()) {
    out << "\nno checkpoints yet\n";
    return;
  }
  out << "\ncheckpoints (a new run from one: mend fork " << v.run.id
      << " --from-checkpoint CHECKPOINT)\n";
  out << "CHECKPOINT  MESSAGES  SAVED\n";
  for (const store::CheckpointInfo& c : v.checkpoints) {
    std::string number = std::to_string(c.step), count = std::to_string(c.message_count);
    out << number << std::string(number.size() < 12 ? 12 - number.size() : 1, ' ') << count
        << std::string(count.size() < 10 ? 10 - count.size() : 1, ' ')
        << FormatRfc3339Seconds(c.created_at) << "\n";
  }
}

}  // namespace mend::cli::show
