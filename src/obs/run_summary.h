#pragma once

#include <cstdint>

#include "mend/obs/span_store.h"
#include "mend/obs/trace.h"

namespace mend::obs::internal {

// A run's summary while spans are added to it, with what is needed to merge it with the stored
// one (SpanStore keeps the same rules in SQL, see kUpsertRun in span_store.cc).
struct RunAccumulator {
  RunTraceSummary summary;
  bool empty = true;
  // 1 when trace_id came from an invoke_agent span: it then wins over one from another span.
  int64_t trace_rank = -1;
  // End of the invoke_agent span that gave `status`; -1 when none did.
  int64_t status_end_ns = -1;

  void Add(const SpanData& span);
};

// "invoke_agent", "chat", "execute_tool", ...: gen_ai.operation.name, else the span name's first
// word.
std::string_view OperationOf(const SpanData& span);

}  // namespace mend::obs::internal
