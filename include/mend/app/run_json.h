#pragma once

// JSON pieces of a run that `mend show`, `mend pending` and `mend serve`'s runs routes share, so
// the CLI and the API spell them the same way (docs/cli.md shapes; docs/http_api.md). Pure.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mend/agent/run_view.h"
#include "mend/app/run_inspector.h"
#include "mend/llm/types.h"
#include "mend/store/checkpoint_store.h"
#include "mend/store/run_record.h"

namespace mend::app {

/// The text, or null when it is empty.
nlohmann::json NullIfEmpty(const std::string& text);

/// {"code","message","class","retryable"}, or null.
nlohmann::json RunErrorJson(const std::optional<store::RunError>& error);

/// The fields every run shape adds for an interrupted run (docs/runs.md): "interrupted" (true for
/// a `running` run no process drives) and "interruption": {"reason": "process_gone" |
/// "lease_expired" | "not_held", "holder": the lease holder's id or null, "lease_expires_at"} or
/// null. The stored "status" stays `running`.
void AddInterruptionJson(const std::optional<Interruption>& interruption, nlohmann::json& run);

/// One run of a list (`mend pending --json`, the API's GET /api/v1/runs and /api/v1/pending):
/// id, agent, status, checkpoint, step (the old name of "checkpoint"), attempts, quarantined,
/// next_attempt_at, waiting, last_error, workspace and model (both from `origin`; null when not
/// recorded), interrupted and interruption (AddInterruptionJson). Callers add their own fields.
nlohmann::json ListedRunJson(const store::RunRecord& run, const agent::RunOrigin& origin,
                             const std::optional<Interruption>& interruption);

/// A page of listed runs: {"runs": runs, "total", "more", "next": the next page's cursor or null}.
nlohmann::json RunPageJson(nlohmann::json runs, const store::PendingPage& page);

/// [{"id","name","arguments"}]
nlohmann::json ToolCallsJson(const std::vector<llm::ToolCall>& calls);

/// One transcript message: {"role","content"} plus "tool_calls" when the model called tools, and
/// for a tool result "tool_call_id", "name", "is_error", "replaced_by_hook", "hook_decision".
nlohmann::json TranscriptEntryJson(const agent::TranscriptEntry& entry);

}  // namespace mend::app
