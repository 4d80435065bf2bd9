// The failure report of CasesFromFailures: one failed run rendered for an editor model.
#pragma once

#include <string>
#include <vector>

#include "mend/agent/run_view.h"
#include "mend/base/status.h"
#include "mend/improve/failures.h"
#include "mend/obs/trace.h"

namespace mend::improve::internal {

// What observe.db says about the run.
struct RunTrace {
  enum class State {
    kNoStore,     // no observe.db was given
    kNone,        // no span of the run is stored
    kUnreadable,  // reading the spans failed with `error`
    kRead,        // `spans` are the run's spans, by start time
  };
  State state = State::kNoStore;
  std::string trace_id;
  StatusCode error = StatusCode::kOk;
  std::vector<obs::SpanData> spans;
};

// Renders the report of `view` (docs/improve.md, "Cases from failures"). The header (run, error,
// task) is always shown; transcript and trace entries follow, and when they do not all fit in
// options.max_report_bytes the middle ones are replaced by one "[N entries omitted]" line, so no
// block is ever cut by the total bound. Every text from outside mend — the task, user messages,
// the model's text and tool-call arguments, tool results, error messages, span status messages and
// heal reasons — is inside an UntrustedBlock of at most options.max_block_bytes; names and codes
// on plain lines are reduced to a safe alphabet. The result is at most options.max_report_bytes
// for options CasesFromFailures accepts. Pure.
std::string RenderFailureReport(const agent::RunView& view, FailureKind kind, int duplicates,
                                const RunTrace& trace, const FailureOptions& options);

}  // namespace mend::improve::internal
