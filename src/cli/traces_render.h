#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "mend/obs/span_store.h"
#include "mend/obs/trace.h"

namespace mend::cli::traces {

// ANSI colour for a terminal, none for pipes and files.
enum class Color { kNone, kAnsi };

// The `traces` list JSON shape (docs/traces_cli.md): {"runs":[...],"next","next_cursor",
// "dropped_spans"}; `next_cursor` is the older name of `next`.
nlohmann::json RunListJson(const obs::RunTracePage& page, int64_t dropped_spans);
// The `traces RUN_ID` JSON shape: {"run_id","trace_id","dropped_spans","spans":[...]}.
nlohmann::json TraceJson(const obs::RunTraceSummary& run, const std::vector<obs::SpanData>& spans,
                         int64_t dropped_spans);

// One line per run (newest first) under a header, then a line about dropped spans when any.
void PrintRunList(const obs::RunTracePage& page, int64_t dropped_spans, Color color,
                  std::ostream& out);
// A header line for the run, then the span tree of its trace: children indented under their
// parent, siblings by start time; spans whose parent is not stored are roots (one per attempt).
// Heal actions are lines of their own under their span. A message of several lines (a tool's
// stderr) continues on lines indented four more than its first.
void PrintTrace(const obs::RunTraceSummary& run, const std::vector<obs::SpanData>& spans,
                int64_t dropped_spans, Color color, std::ostream& out);

// "1.5s", "250ms", "1m30s", "<1ms".
std::string DurationText(Duration d);

}  // namespace mend::cli::traces
