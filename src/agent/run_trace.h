#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mend/agent/agent.h"
#include "mend/obs/trace.h"

namespace mend::agent {

// The span of one attempt on a run (`invoke_agent <agent>`, docs/observe.md): a child of `caller`
// when given, else of the thread's active span when it belongs to the run's recorded trace, else
// a root span of that trace (or of a new one when none is recorded). A run with `fork_parent`
// links to the root span its recorded trace names. A no-op span without a tracer.
obs::Span StartAttemptSpan(const AgentOptions& options, const AgentSpec& spec,
                           const std::string& run_id, const RunOrigin& origin,
                           std::string_view attempt, const std::string& fork_parent,
                           const std::optional<obs::SpanContext>& caller);

// Records the trace of `span` in `origin` when the run has none yet and `span` is the run's own
// attempt span (its run id is `run_id`); true when `origin` changed and must be saved.
bool AdoptTrace(RunOrigin& origin, const obs::Span* span, const std::string& run_id);

// Status, step, cost and tokens of the run when the attempt ended; ERROR for a failed run or a
// failure of mend itself. Sets the result's trace_id.
void EndAttemptSpan(obs::Span& span, Result<RunResult>& result);

}  // namespace mend::agent
