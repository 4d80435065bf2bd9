#include "obs/run_summary.h"

#include <algorithm>
#include <string>

#include "obs/span_codec.h"

namespace mend::obs::internal {
namespace {

int64_t IntAttribute(const SpanData& span, std::string_view key) {
  const AttributeValue* v = FindAttribute(span.attributes, key);
  if (v == nullptr) return 0;
  if (const auto* i = std::get_if<int64_t>(v)) return *i;
  if (const auto* d = std::get_if<double>(v)) return static_cast<int64_t>(*d);
  return 0;
}

double DoubleAttribute(const SpanData& span, std::string_view key) {
  const AttributeValue* v = FindAttribute(span.attributes, key);
  if (v == nullptr) return 0;
  if (const auto* d = std::get_if<double>(v)) return *d;
  if (const auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  return 0;
}

std::string StringAttribute(const SpanData& span, std::string_view key) {
  const AttributeValue* v = FindAttribute(span.attributes, key);
  if (v == nullptr) return "";
  const auto* s = std::get_if<std::string>(v);
  return s == nullptr ? "" : *s;
}

void AddAttempt(const SpanData& span, RunAccumulator& acc) {
  RunTraceSummary& sum = acc.summary;
  ++sum.attempts;
  if (acc.trace_rank < 1) {
    sum.trace_id = span.context.trace_id;
    acc.trace_rank = 1;
  }
  if (sum.agent.empty()) sum.agent = StringAttribute(span, "gen_ai.agent.name");
  const int64_t end = UnixNanos(span.end);
  if (end >= acc.status_end_ns) {
    sum.status = StringAttribute(span, "mend.run.status");
    acc.status_end_ns = end;
  }
}

}  // namespace

std::string_view OperationOf(const SpanData& span) {
  const AttributeValue* op = FindAttribute(span.attributes, "gen_ai.operation.name");
  if (op != nullptr) {
    if (const auto* s = std::get_if<std::string>(op)) return *s;
  }
  std::string_view name = span.name;
  return name.substr(0, name.find(' '));
}

void RunAccumulator::Add(const SpanData& span) {
  if (empty) {
    summary.run_id = span.run_id;
    summary.start = span.start;
    summary.end = span.end;
    empty = false;
  }
  summary.start = std::min(summary.start, span.start);
  summary.end = std::max(summary.end, span.end);
  if (trace_rank < 0) {
    summary.trace_id = span.context.trace_id;
    trace_rank = 0;
  }
  const std::string_view op = OperationOf(span);
  if (op == "invoke_agent") {
    AddAttempt(span, *this);
  } else if (op == "chat") {
    ++summary.model_turns;
    summary.cost_usd += DoubleAttribute(span, "mend.cost_usd");
    summary.input_tokens += IntAttribute(span, "gen_ai.usage.input_tokens");
    summary.output_tokens += IntAttribute(span, "gen_ai.usage.output_tokens");
  } else if (op == "execute_tool") {
    ++summary.tool_calls;
    if (span.status == SpanStatus::kError) ++summary.tool_errors;
  }
  for (const SpanEvent& event : span.events) {
    if (event.name == "heal.action") ++summary.heal_actions;
  }
}

}  // namespace mend::obs::internal
