#include "improve/failure_report.h"

#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "improve/untrusted.h"
#include "mend/llm/types.h"

namespace mend::improve::internal {
namespace {

// Plain lines hold only names and codes, and even those come partly from outside (a tool name is
// what the model asked for, a run id what a user chose): anything beyond this alphabet becomes '?'
// and the length is capped, so a plain line can neither imitate a block nor grow the report.
constexpr std::size_t kMaxLabelBytes = 64;

std::string Label(std::string_view text) {
  if (text.empty()) return "-";
  std::string out;
  for (char ch : text.substr(0, kMaxLabelBytes)) {
    const bool safe = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') ||
                      std::string_view("._:@+-=#").find(ch) != std::string_view::npos;
    out += safe ? ch : '?';
  }
  if (text.size() > kMaxLabelBytes) out.replace(kMaxLabelBytes - 3, 3, "...");
  return out;
}

std::string Plural(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string Usd(double usd) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.4f", usd);
  return buf;
}

class Renderer {
 public:
  Renderer(const agent::RunView& view, const RunTrace& trace, const FailureOptions& options)
      : view_(view), trace_(trace), options_(options) {
    for (const agent::TranscriptEntry& entry : view.transcript) {
      const llm::Message& m = entry.message;
      if (m.role == llm::Role::kTool) tool_results_[m.tool_call_id] = &m.content;
    }
  }

  std::string Header(FailureKind kind, int duplicates) const;
  std::vector<std::string> TranscriptEntries() const;
  std::vector<std::string> TraceEntries() const;

 private:
  std::string Block(std::string_view source, std::string_view text) const {
    return UntrustedBlock(source, text, options_.max_block_bytes);
  }
  std::string ToolEntry(std::size_t n, const agent::TranscriptEntry& entry) const;
  std::string TraceSummary() const;
  bool InResultOf(const std::string& call_id, std::string_view text) const;
  std::string Detail(std::string_view source, const std::string& call_id,
                     std::string_view text) const;
  std::string AttemptEntry(const obs::SpanData& span) const;
  void SpanEntries(const obs::SpanData& span, std::vector<std::string>& out) const;

  const agent::RunView& view_;
  const RunTrace& trace_;
  const FailureOptions& options_;
  std::map<std::string, const std::string*> tool_results_;  // by call id
};

std::string Renderer::Header(FailureKind kind, int duplicates) const {
  const store::RunRecord& run = view_.run;
  std::string out = "run " + Label(run.id) + ": " + std::string(FailureKindName(kind)) +
                    " (status " + std::string(store::RunStatusName(run.status));
  if (run.last_error.has_value()) {
    out += ", error " + Label(run.last_error->code) + ", " + Label(run.last_error->error_class) +
           (run.last_error->retryable ? ", retryable" : ", not retryable");
  }
  out += ")\n";
  out += "agent " + Label(run.agent) + "; " + Plural(view_.steps, "model turn", "model turns") +
         "; cost " + Usd(view_.cost_usd) + "; " +
         Plural(static_cast<std::size_t>(duplicates), "other run", "other runs") +
         " of the same task not shown\n";
  out += TraceSummary();
  out += "task:\n" + Block("task", run.task);
  if (run.last_error.has_value()) out += "error:\n" + Block("run:error", run.last_error->message);
  out += "transcript (" + Plural(view_.transcript.size(), "message", "messages") + "):\n";
  return out;
}

std::string Renderer::TraceSummary() const {
  switch (trace_.state) {
    case RunTrace::State::kNoStore:
      return "trace: not read (no observe.db)\n";
    case RunTrace::State::kNone:
      return "trace: no span of this run is stored\n";
    case RunTrace::State::kUnreadable:
      return "trace: could not be read (" + std::string(StatusCodeName(trace_.error)) + ")\n";
    case RunTrace::State::kRead:
      break;
  }
  std::size_t heal = 0;
  std::size_t failed_tools = 0;
  for (const obs::SpanData& span : trace_.spans) {
    for (const obs::SpanEvent& e : span.events) heal += e.name == "heal.action";
    failed_tools += span.name.starts_with("execute_tool") && span.status == obs::SpanStatus::kError;
  }
  return "trace " + Label(trace_.trace_id) + ": " + Plural(trace_.spans.size(), "span", "spans") +
         " of this run, " + Plural(failed_tools, "failed tool call", "failed tool calls") + ", " +
         Plural(heal, "heal action", "heal actions") + " (entries marked \"trace\")\n";
}

std::string Renderer::ToolEntry(std::size_t n, const agent::TranscriptEntry& entry) const {
  const llm::Message& m = entry.message;
  std::string out =
      "[" + std::to_string(n) + "] tool " + Label(m.name) + " (call " + Label(m.tool_call_id) + ")";
  if (m.is_error) out += ", error";
  if (entry.hook_decision == "denied") {
    out += ", denied by a hook (the tool did not run)";
  } else if (entry.hook_decision == "supplied") {
    out += ", result given by a hook (the tool did not run)";
  } else if (entry.hook_decision == "stopped") {
    out += ", the run was stopped here (the tool did not run)";
  } else if (!entry.hook_decision.empty()) {
    out += ", hook decision " + Label(entry.hook_decision);
  }
  if (entry.replaced_by_hook) out += ", result replaced by a hook";
  return out + ":\n" + Block("tool:" + m.name, m.content);
}

std::vector<std::string> Renderer::TranscriptEntries() const {
  std::set<std::string> pending;
  for (const llm::ToolCall& call : view_.pending) pending.insert(call.id);
  std::vector<std::string> out;
  bool task_seen = false;
  for (std::size_t i = 0; i < view_.transcript.size(); ++i) {
    const agent::TranscriptEntry& entry = view_.transcript[i];
    const llm::Message& m = entry.message;
    const std::string n = "[" + std::to_string(i + 1) + "] ";
    switch (m.role) {
      case llm::Role::kSystem:
        // The system prompt is the agent's own instructions and skills, which the editor reads
        // anyway, plus the long-term memory section, which is not the agent's to fix; showing it
        // would spend the report on text the editor cannot act on.
        out.push_back(n + "system: the system prompt, " + std::to_string(m.content.size()) +
                      " bytes (instructions, skills, memory), not shown\n");
        break;
      case llm::Role::kUser:
        if (!task_seen && m.content == view_.run.task) {
          task_seen = true;
          out.push_back(n + "user: the task above\n");
        } else {
          out.push_back(n + "user:\n" + Block("user", m.content));
        }
        break;
      case llm::Role::kAssistant:
        if (!m.content.empty() || m.tool_calls.empty()) {
          out.push_back(n + "assistant:\n" + Block("assistant", m.content));
        }
        for (const llm::ToolCall& call : m.tool_calls) {
          out.push_back(n + "call " + Label(call.id) + " " + Label(call.name) +
                        (pending.count(call.id) != 0 ? " (no result yet)" : "") + ":\n" +
                        Block("arguments:" + call.name, call.arguments));
        }
        break;
      case llm::Role::kTool:
        out.push_back(ToolEntry(i + 1, entry));
        break;
    }
  }
  return out;
}

std::string StringAttribute(const std::vector<obs::Attribute>& attributes, std::string_view key) {
  const obs::AttributeValue* v = obs::FindAttribute(attributes, key);
  if (v == nullptr) return "";
  if (const auto* s = std::get_if<std::string>(v)) return *s;
  if (const auto* i = std::get_if<int64_t>(v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(v)) return *b ? "true" : "false";
  return "";
}

std::string StepPrefix(const std::vector<obs::Attribute>& attributes) {
  const std::string step = StringAttribute(attributes, "mend.step");
  return step.empty() ? "trace: " : "trace: step " + Label(step) + ": ";
}

bool Renderer::InResultOf(const std::string& call_id, std::string_view text) const {
  if (text.ends_with("...")) text.remove_suffix(3);  // a span's excerpt of a long result
  auto it = tool_results_.find(call_id);
  return it != tool_results_.end() && it->second->find(text) != std::string::npos;
}

// The end of a trace line: the text in a block, or — when the transcript already shows it (a
// tool span's message and most heal reasons are the result the model saw) — a pointer to it, so
// the report does not spend its room twice.
std::string Renderer::Detail(std::string_view source, const std::string& call_id,
                             std::string_view text) const {
  if (text.empty()) return "\n";
  if (!call_id.empty() && InResultOf(call_id, text)) {
    return " (text as in the result of call " + Label(call_id) + ")\n";
  }
  return ":\n" + Block(source, text);
}

std::string Renderer::AttemptEntry(const obs::SpanData& span) const {
  std::string line = "trace: attempt " + Label(StringAttribute(span.attributes, "mend.attempt"));
  if (StringAttribute(span.attributes, std::string(obs::kInProgressAttribute)) == "true") {
    return line + " did not end\n";
  }
  line += " ended " + Label(StringAttribute(span.attributes, "mend.run.status"));
  if (span.status != obs::SpanStatus::kError) return line + "\n";
  line += ", error " + Label(StringAttribute(span.attributes, "error.type"));
  const std::optional<store::RunError>& run_error = view_.run.last_error;
  if (run_error.has_value() && run_error->message == span.status_message) {
    return line + " (the error above)\n";
  }
  return line + Detail("trace:attempt", "", span.status_message);
}

void Renderer::SpanEntries(const obs::SpanData& span, std::vector<std::string>& out) const {
  const bool error = span.status == obs::SpanStatus::kError;
  const std::string type = Label(StringAttribute(span.attributes, "error.type"));
  const std::string call_id = StringAttribute(span.attributes, "gen_ai.tool.call.id");
  if (span.name.starts_with("invoke_agent")) {
    out.push_back(AttemptEntry(span));
  } else if (span.name == "mend.recovery.attempt") {
    out.push_back("trace: recovery attempt " +
                  Label(StringAttribute(span.attributes, "mend.recovery.attempt")) + ": " +
                  Label(StringAttribute(span.attributes, "mend.recovery.outcome")) + "\n");
  } else if (span.name.starts_with("chat") && error) {
    out.push_back(StepPrefix(span.attributes) + "model turn failed, " + type +
                  Detail("trace:chat", "", span.status_message));
  } else if (span.name.starts_with("execute_tool") && error) {
    const std::string tool = StringAttribute(span.attributes, "gen_ai.tool.name");
    out.push_back(StepPrefix(span.attributes) + "tool " + Label(tool) + " (call " + Label(call_id) +
                  ") failed, " + type + Detail("trace:tool:" + tool, call_id, span.status_message));
  }
  for (const obs::SpanEvent& event : span.events) {
    if (event.name != "heal.action") continue;
    const std::string action = StringAttribute(event.attributes, "heal.action");
    out.push_back(
        StepPrefix(event.attributes) + "heal " + Label(action) + " on " +
        Label(StringAttribute(event.attributes, "gen_ai.tool.name")) +
        Detail("heal:" + action, call_id, StringAttribute(event.attributes, "heal.reason")));
  }
}

std::vector<std::string> Renderer::TraceEntries() const {
  std::vector<std::string> out;
  if (trace_.state != RunTrace::State::kRead) return out;
  for (const obs::SpanData& span : trace_.spans) SpanEntries(span, out);
  return out;
}

std::string OmittedLine(std::size_t n) {
  return "[" + Plural(n, "entry", "entries") + " omitted]\n";
}

// `head` and then as many entries from both ends as fit in `max_bytes`, taken alternately from
// the front and the back; the entries in between become one omission line. Whole entries only:
// cutting one could cut a block, and a block cut by the total bound would lose its closing tag.
std::string Fit(std::string head, const std::vector<std::string>& entries, std::size_t max_bytes) {
  std::size_t total = head.size();
  for (const std::string& e : entries) total += e.size();
  if (total <= max_bytes) {
    for (const std::string& e : entries) head += e;
    return head;
  }
  const std::size_t reserve = head.size() + OmittedLine(entries.size()).size();
  std::size_t budget = max_bytes > reserve ? max_bytes - reserve : 0;
  std::size_t front = 0;
  std::size_t back = entries.size();  // entries[back..] are kept
  bool front_open = true;
  bool back_open = true;
  bool take_front = true;
  while (front < back && (front_open || back_open)) {
    const bool use_front = (take_front && front_open) || !back_open;
    take_front = !take_front;
    const std::string& e = use_front ? entries[front] : entries[back - 1];
    if (e.size() > budget) {
      (use_front ? front_open : back_open) = false;
      continue;
    }
    budget -= e.size();
    if (use_front) {
      ++front;
    } else {
      --back;
    }
  }
  for (std::size_t i = 0; i < front; ++i) head += entries[i];
  head += OmittedLine(back - front);
  for (std::size_t i = back; i < entries.size(); ++i) head += entries[i];
  return head;
}

}  // namespace

std::string RenderFailureReport(const agent::RunView& view, FailureKind kind, int duplicates,
                                const RunTrace& trace, const FailureOptions& options) {
  Renderer renderer(view, trace, options);
  std::vector<std::string> entries = renderer.TranscriptEntries();
  std::vector<std::string> trace_entries = renderer.TraceEntries();
  entries.insert(entries.end(), std::make_move_iterator(trace_entries.begin()),
                 std::make_move_iterator(trace_entries.end()));
  return Fit(renderer.Header(kind, duplicates), entries, options.max_report_bytes);
}

}  // namespace mend::improve::internal
