#pragma once

#include <chrono>
#include <vector>

#include "mend/obs/otlp_encode.h"

namespace mend::obs::testing {

inline Time AtNanos(int64_t ns) { return Time{} + std::chrono::nanoseconds(ns); }

// Spans that use every field the encoders write: each attribute type (negative and 64-bit
// integers, a string array, an empty string, non-ASCII text), events, links, a parent, an error
// status with a message, an OK status, each span kind.
inline std::vector<SpanData> SampleSpans() {
  SpanData root;
  root.context = {"0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", 1};
  root.name = "invoke_agent demo";
  root.kind = SpanKind::kInternal;
  root.start = AtNanos(1'700'000'000'123'456'789);
  root.end = AtNanos(1'700'000'002'000'000'001);
  root.status = SpanStatus::kOk;
  root.attributes = {
      {"mend.run.id", std::string("r-1")},
      {"mend.step", int64_t{3}},
      {"big", int64_t{9'007'199'254'740'993}},
      {"negative", int64_t{-42}},
      {"mend.cost_usd", 0.0125},
      {"mend.tool.replaced_by_hook", false},
      {"flag", true},
      {"empty", std::string()},
      {"text", std::string("h\xc3\xa9llo \"q\"\n\ttab\\")},
      {"gen_ai.response.finish_reasons", std::vector<std::string>{"stop", "length"}}};
  root.run_id = "r-1";

  SpanData child;
  child.context = {"0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7", 0};
  child.parent_span_id = "b7ad6b7169203331";
  child.name = "execute_tool shell";
  child.kind = SpanKind::kClient;
  child.start = AtNanos(1'700'000'000'500'000'000);
  child.end = AtNanos(1'700'000'000'750'000'000);
  child.status = SpanStatus::kError;
  child.status_message = "denied by hook";
  child.attributes = {{"error.type", std::string("denied")}};
  child.events = {{"heal.action",
                   AtNanos(1'700'000'000'600'000'000),
                   {{"heal.action", std::string("deny")}, {"heal.reason", std::string("rm -rf")}}},
                  {"empty event", AtNanos(1'700'000'000'700'000'000), {}}};
  child.links = {{{"4bf92f3577b34da6a3ce929d0e0e4736", "53995c3f42cd8ad8", 1},
                  {{"mend.fork.parent_run_id", std::string("r-0")}}}};

  std::vector<SpanData> spans = {root, child};
  for (SpanKind kind : {SpanKind::kServer, SpanKind::kProducer, SpanKind::kConsumer}) {
    SpanData s;
    s.context = {"0af7651916cd43dd8448eb211c80319c", "1000000000000001", 1};
    s.context.span_id[15] = static_cast<char>('0' + static_cast<int>(kind));
    s.parent_span_id = "b7ad6b7169203331";
    s.name = std::string("kind ") + std::string(SpanKindName(kind));
    s.kind = kind;
    s.start = AtNanos(1'700'000'001'000'000'000);
    s.end = s.start;
    s.attributes = {{"weird double", -1.5e-300}};
    spans.push_back(s);
  }
  return spans;
}

inline OtlpResource SampleResource() { return MakeOtlpResource("0.9.0", "build-host"); }

}  // namespace mend::obs::testing
