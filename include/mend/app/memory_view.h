#pragma once

// Long-term memory as `mend memory` and `mend serve`'s /api/v1/memory show it: the JSON shapes of
// docs/memory_cli.md (FACT, search, recall), pages of facts, and recall with the reason an answer
// is empty. Both surfaces call these, so their answers agree. Thread-safe as the runtime's fact
// store and retriever are; the JSON builders are pure.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/retriever.h"

namespace mend::app {

struct Runtime;

/// FACT: {"id","content","category","tags","workspace","source","confidence","created_at",
/// "last_accessed","access_count","helped","hurt","superseded_by","provenance":[{"task","outcome",
/// "at","run_id"}]} with RFC 3339 UTC times; an episode's run_id is null when not known.
nlohmann::json FactJson(const memory::Fact& fact);

/// {"results":[{"id","score","category","tags","content"}]}, in the order given.
nlohmann::json SearchResultsJson(const std::vector<memory::ScoredFact>& hits);

/// What a run for a task would receive from memory, and why it would receive nothing.
struct RecallAnswer {
  memory::Retrieval retrieval;  ///< the retriever's answer
  std::string workspace;        ///< the workspace the run would have
  /// Empty when the section is not; otherwise one of "memory.enabled is false", "no facts",
  /// "below the relevance gate", "no fact matches the task",
  /// "no fact fits memory.max_facts and memory.budget_chars".
  std::string reason;
  /// The injection gate (docs/memory.md, Retrieval): something is injected only when some fact
  /// scores `gate_needed` rare words' worth, or holds `coverage_needed` of the task's weight in two
  /// or more words. The thresholds are 0 when memory is off.
  double gate_needed = 0;
  double coverage_needed = 0;  ///< see gate_needed
  bool below_gate = false;     ///< the reason is the gate's
};

/// RecallForTask for `task` in `workspace` ("" = runtime.caller_dir, where a run of an agent
/// folder without a workspace works). With memory.hyde on, the provider is first built for
/// `model` ("" = the configured one), as a run builds it; a provider that cannot be built only
/// turns HyDE off. kInvalidArgument for an empty task; RecallForTask's errors otherwise.
Result<RecallAnswer> ExplainRecall(Runtime& runtime, std::string_view task,
                                   const std::string& workspace, const std::string& model = "");

/// {"facts":[{"id","category","content"}],"section","workspace","reason":null|"...",
///  "gate":{"score","needed","coverage","coverage_needed"}}: `score` and `coverage` are the best
/// fact's (Retrieval::gate_score, Retrieval::coverage), beside the thresholds.
nlohmann::json RecallAnswerJson(const RecallAnswer& answer);

/// "below the relevance gate: best score 0.42, gate 1.90 (rare words' worth); best coverage 0.20,
/// gate 0.50" for an answer the gate refused; `answer.reason` otherwise.
std::string RecallReasonText(const RecallAnswer& answer);

/// The most facts one page may hold.
inline constexpr size_t kMaxFactPageSize = 1000;

/// One page of ListFactPage: facts newest first, in the store's order (FactStore::List: created_at
/// descending; of facts with one created_at, the one stored last first), and where the next page
/// starts. `total` counts every fact matching the filter, `more` those after this page; `next` is
/// empty on the last page.
struct FactPage {
  std::vector<memory::Fact> facts;  ///< newest first
  int64_t total = 0;                ///< facts matching the filter
  int64_t more = 0;                 ///< of those, the ones after this page
  std::string next;                 ///< the cursor of the next page; empty on the last
};

/// Up to `limit` (1..kMaxFactPageSize) facts of `filter` (its own limit is ignored) after the
/// position `cursor` ("" = the newest): a keyset cursor naming the last fact of the previous page,
/// in the text form of store::FormatRunCursor (its created_at in nanoseconds, ':', its escaped id).
/// Facts added meanwhile come before the cursor, so they never shift a later page; when the
/// cursor's fact was deleted, the page starts at the first older fact. kInvalidArgument for a bad
/// limit or cursor; the store's errors otherwise. Reads every matching fact once per page.
Result<FactPage> ListFactPage(memory::FactStore& facts, const memory::ListOptions& filter,
                              size_t limit, std::string_view cursor);

/// {"facts":[FACT...],"total","more","next":null|"..."}, the page of `mend memory list --json`.
nlohmann::json FactPageJson(const FactPage& page);

}  // namespace mend::app
