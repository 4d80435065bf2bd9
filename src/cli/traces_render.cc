// How `mend traces` renders runs and span trees: JSON for tools, text for people.
#include "cli/traces_render.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string_view>

#include "mend/base/time_format.h"

namespace mend::cli::traces {
namespace {

using nlohmann::json;

double Millis(Duration d) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(d).count()) /
         1000.0;
}

json ValueJson(const obs::AttributeValue& value) {
  return std::visit([](const auto& v) { return json(v); }, value);
}

json AttributesJson(const std::vector<obs::Attribute>& attributes) {
  json object = json::object();
  for (const obs::Attribute& a : attributes) object[a.key] = ValueJson(a.value);
  return object;
}

json SpanJson(const obs::SpanData& s) {
  json events = json::array();
  for (const obs::SpanEvent& e : s.events) {
    events.push_back({{"name", e.name},
                      {"time", FormatRfc3339(e.time)},
                      {"attributes", AttributesJson(e.attributes)}});
  }
  json links = json::array();
  for (const obs::SpanLink& l : s.links) {
    links.push_back({{"trace_id", l.context.trace_id},
                     {"span_id", l.context.span_id},
                     {"attributes", AttributesJson(l.attributes)}});
  }
  return {{"trace_id", s.context.trace_id},
          {"span_id", s.context.span_id},
          {"parent_span_id", s.parent_span_id.empty() ? json(nullptr) : json(s.parent_span_id)},
          {"name", s.name},
          {"kind", std::string(obs::SpanKindName(s.kind))},
          {"start", FormatRfc3339(s.start)},
          {"end", FormatRfc3339(s.end)},
          {"duration_ms", Millis(s.end - s.start)},
          {"status", std::string(obs::SpanStatusName(s.status))},
          {"status_message", s.status_message},
          {"attributes", AttributesJson(s.attributes)},
          {"events", std::move(events)},
          {"links", std::move(links)}};
}

std::string Text(const obs::SpanData& s, std::string_view key) {
  const obs::AttributeValue* v = obs::FindAttribute(s.attributes, key);
  if (v == nullptr) return "";
  if (const auto* text = std::get_if<std::string>(v)) return *text;
  if (const auto* i = std::get_if<int64_t>(v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(v)) return *b ? "true" : "false";
  return "";
}

std::string EventText(const obs::SpanEvent& e, std::string_view key) {
  const obs::AttributeValue* v = obs::FindAttribute(e.attributes, key);
  const auto* text = v == nullptr ? nullptr : std::get_if<std::string>(v);
  return text == nullptr ? "" : *text;
}

std::string Dollars(double usd) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "$%.4f", usd);
  return buf;
}

struct Paint {
  Color color;
  std::string operator()(std::string_view code, const std::string& text) const {
    if (color == Color::kNone || text.empty()) return text;
    return "\033[" + std::string(code) + "m" + text + "\033[0m";
  }
};
constexpr std::string_view kRed = "31", kYellow = "33", kDim = "2", kBold = "1";

// The interesting bits of a span after its name and duration.
std::string Details(const obs::SpanData& s, const Paint& paint) {
  std::vector<std::string> parts;
  const std::string op = Text(s, "gen_ai.operation.name");
  if (op == "chat") {
    std::string model = Text(s, "gen_ai.response.model");
    if (model.empty()) model = Text(s, "gen_ai.request.model");
    if (!model.empty()) parts.push_back("model=" + model);
    const std::string in = Text(s, "gen_ai.usage.input_tokens");
    if (!in.empty()) parts.push_back("tokens=" + in + "/" + Text(s, "gen_ai.usage.output_tokens"));
  } else if (op == "invoke_agent") {
    if (const std::string a = Text(s, "mend.attempt"); !a.empty()) parts.push_back("attempt=" + a);
    if (const std::string st = Text(s, "mend.run.status"); !st.empty()) {
      parts.push_back("status=" + st);
    }
  } else if (op == "execute_tool" && Text(s, "mend.tool.replaced_by_hook") == "true") {
    parts.push_back("replaced by hook");
  }
  if (s.status == obs::SpanStatus::kError) {
    const std::string type = Text(s, "error.type");
    std::string text = "ERROR";
    if (!type.empty()) text += " " + type;
    if (!s.status_message.empty()) text += ": " + s.status_message;
    parts.push_back(paint(kRed, text));
  }
  for (const obs::SpanLink& l : s.links) {
    const obs::AttributeValue* kind = obs::FindAttribute(l.attributes, "mend.link");
    const auto* link = kind == nullptr ? nullptr : std::get_if<std::string>(kind);
    const obs::AttributeValue* run = obs::FindAttribute(l.attributes, "mend.run.id");
    const auto* run_id = run == nullptr ? nullptr : std::get_if<std::string>(run);
    const std::string parent = run_id != nullptr ? *run_id : Text(s, "mend.fork.parent_run_id");
    if (link != nullptr && *link == "enqueued_by") {
      parts.push_back("enqueued by span " + l.context.span_id);
    } else if (!parent.empty()) {
      parts.push_back("fork of " + parent);
    } else {
      parts.push_back("linked to " + l.context.trace_id + "/" + l.context.span_id);
    }
  }
  std::string out;
  for (const std::string& p : parts) out += "  " + p;
  return out;
}

// `line` printed at `indent`, ending in a newline. Messages and reasons come from tools and other
// programs and may hold several lines (a command's stderr); each following line is indented four
// more than the first, so it reads as part of that line and never starts at the left margin in the
// middle of the tree. Trailing line breaks are dropped.
void PrintLine(const std::string& indent, std::string_view line, std::ostream& out) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  const std::string continuation = indent + "    ";
  out << indent;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\r' && i + 1 < line.size() && line[i + 1] == '\n') continue;
    if (line[i] == '\n' || line[i] == '\r') {
      out << "\n" << continuation;
    } else {
      out << line[i];
    }
  }
  out << "\n";
}

void PrintSpan(const obs::SpanData& s, size_t depth,
               const std::map<std::string, std::vector<const obs::SpanData*>>& children,
               const Paint& paint, std::ostream& out) {
  const std::string indent(2 * depth, ' ');
  // A snapshot that was never replaced: the process that ran it died (or still runs).
  const bool unended = Text(s, obs::kInProgressAttribute) == "true";
  PrintLine(indent,
            paint(kBold, s.name) + "  " +
                (unended ? paint(kYellow, "did not end (process killed, or still running)")
                         : paint(kDim, DurationText(s.end - s.start))) +
                Details(s, paint),
            out);
  for (const obs::SpanEvent& e : s.events) {
    if (e.name != "heal.action") continue;
    std::string line = "heal " + EventText(e, "heal.action");
    if (const std::string reason = EventText(e, "heal.reason"); !reason.empty()) {
      line += ": " + reason;
    }
    PrintLine(indent + "  ", paint(kYellow, line), out);
  }
  auto it = children.find(s.context.span_id);
  if (it == children.end()) return;
  for (const obs::SpanData* child : it->second) PrintSpan(*child, depth + 1, children, paint, out);
}

void PrintDropped(int64_t dropped, std::ostream& out) {
  if (dropped <= 0) return;
  out << dropped << " spans were dropped before reaching observe.db (buffer full or write "
      << "errors); traces may be incomplete\n";
}

}  // namespace

std::string DurationText(Duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d);
  if (ms.count() < 1) return "<1ms";
  return FormatDuration(ms);
}

json RunListJson(const obs::RunTracePage& page, int64_t dropped_spans) {
  json runs = json::array();
  for (const obs::RunTraceSummary& r : page.runs) {
    runs.push_back({{"run_id", r.run_id},
                    {"trace_id", r.trace_id},
                    {"agent", r.agent},
                    {"status", r.status},
                    {"start", FormatRfc3339(r.start)},
                    {"end", FormatRfc3339(r.end)},
                    {"duration_ms", Millis(r.end - r.start)},
                    {"attempts", r.attempts},
                    {"model_turns", r.model_turns},
                    {"tool_calls", r.tool_calls},
                    {"tool_errors", r.tool_errors},
                    {"heal_actions", r.heal_actions},
                    {"cost_usd", r.cost_usd},
                    {"input_tokens", r.input_tokens},
                    {"output_tokens", r.output_tokens}});
  }
  json next = page.next.has_value() ? json(obs::FormatRunTraceCursor(*page.next)) : json(nullptr);
  // `next` is the next-page field of every paged list; `next_cursor`, its first name here, stays.
  return {{"runs", std::move(runs)},
          {"next", next},
          {"next_cursor", next},
          {"dropped_spans", dropped_spans}};
}

json TraceJson(const obs::RunTraceSummary& run, const std::vector<obs::SpanData>& spans,
               int64_t dropped_spans) {
  json list = json::array();
  for (const obs::SpanData& s : spans) list.push_back(SpanJson(s));
  return {{"run_id", run.run_id},
          {"trace_id", run.trace_id},
          {"dropped_spans", dropped_spans},
          {"spans", std::move(list)}};
}

void PrintRunList(const obs::RunTracePage& page, int64_t dropped_spans, Color color,
                  std::ostream& out) {
  const Paint paint{color};
  std::vector<std::vector<std::string>> rows = {
      {"RUN", "AGENT", "STATUS", "DURATION", "TURNS", "TOOLS", "HEAL", "COST"}};
  for (const obs::RunTraceSummary& r : page.runs) {
    std::string tools = std::to_string(r.tool_calls);
    if (r.tool_errors > 0) tools += " (" + std::to_string(r.tool_errors) + " failed)";
    rows.push_back({r.run_id, r.agent.empty() ? "-" : r.agent, r.status.empty() ? "-" : r.status,
                    DurationText(r.end - r.start), std::to_string(r.model_turns), tools,
                    std::to_string(r.heal_actions), Dollars(r.cost_usd)});
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (size_t c = 0; c < rows[i].size(); ++c) {
      std::string cell = rows[i][c];
      const std::string pad(c + 1 < rows[i].size() ? widths[c] + 2 - cell.size() : 0, ' ');
      if (i > 0 && c == 2 && (cell == "failed" || cell == "quarantined")) cell = paint(kRed, cell);
      line += cell + pad;
    }
    out << (i == 0 ? paint(kBold, line) : line) << "\n";
  }
  PrintDropped(dropped_spans, out);
}

void PrintTrace(const obs::RunTraceSummary& run, const std::vector<obs::SpanData>& spans,
                int64_t dropped_spans, Color color, std::ostream& out) {
  const Paint paint{color};
  out << "run " << run.run_id << "  trace " << run.trace_id << "  " << spans.size() << " spans\n";
  std::set<std::string> ids;
  for (const obs::SpanData& s : spans) ids.insert(s.context.span_id);
  std::map<std::string, std::vector<const obs::SpanData*>> children;
  std::vector<const obs::SpanData*> roots;
  for (const obs::SpanData& s : spans) {
    if (s.parent_span_id.empty() || !ids.contains(s.parent_span_id)) {
      roots.push_back(&s);
    } else {
      children[s.parent_span_id].push_back(&s);
    }
  }
  auto by_start = [](const obs::SpanData* a, const obs::SpanData* b) {
    return a->start != b->start ? a->start < b->start : a->context.span_id < b->context.span_id;
  };
  std::sort(roots.begin(), roots.end(), by_start);
  for (auto& [id, list] : children) std::sort(list.begin(), list.end(), by_start);
  for (const obs::SpanData* root : roots) PrintSpan(*root, 0, children, paint, out);
  PrintDropped(dropped_spans, out);
}

}  // namespace mend::cli::traces
