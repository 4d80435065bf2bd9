// Long-term memory as the CLI and the HTTP API show it (memory_view.h).
#include "mend/app/memory_view.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "mend/app/memory_hooks.h"
#include "mend/app/runtime.h"
#include "mend/base/time_format.h"
#include "mend/base/utf8.h"
#include "mend/store/run_page.h"

namespace mend::app {
namespace {

// Why a recall came back empty, for the person who asked: sets answer.reason (and below_gate).
Status ExplainEmpty(Runtime& runtime, RecallAnswer& answer) {
  if (!runtime.config.GetBool("memory.enabled")) {
    answer.reason = "memory.enabled is false";
    return OkStatus();
  }
  MEND_ASSIGN_OR_RETURN(int64_t count, runtime.facts->Count());
  if (count == 0) {
    answer.reason = "no facts";
  } else if (answer.retrieval.gated) {
    answer.reason = "below the relevance gate";
    answer.below_gate = true;
  } else if (answer.retrieval.ranked.empty()) {
    answer.reason = "no fact matches the task";
  } else {
    answer.reason = "no fact fits memory.max_facts and memory.budget_chars";
  }
  return OkStatus();
}

int64_t Millis(Time t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// Where the page after `cursor` starts in `listed` (the store's order, newest first): after the
// cursor's fact, or, when that fact is gone, at the first fact older than it. The store orders by
// the millisecond (an imported fact's time may hold nanoseconds), so "older" is compared so too.
size_t PageStart(const std::vector<memory::Fact>& listed, const store::RunCursor& cursor) {
  for (size_t i = 0; i < listed.size(); ++i) {
    const memory::Fact& f = listed[i];
    if (f.created_at == cursor.created_at && f.id == cursor.id) return i + 1;
    if (Millis(f.created_at) < Millis(cursor.created_at)) return i;
  }
  return listed.size();
}

}  // namespace

nlohmann::json FactJson(const memory::Fact& fact) {
  nlohmann::json episodes = nlohmann::json::array();
  for (const memory::Episode& e : fact.provenance) {
    episodes.push_back(
        {{"task", e.task},
         {"outcome", e.outcome},
         {"at", FormatRfc3339(e.at)},
         {"run_id", e.run_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.run_id)}});
  }
  return {{"id", fact.id},
          {"content", fact.content},
          {"category", fact.category},
          {"tags", fact.tags},
          {"workspace", fact.workspace},
          {"source", fact.source},
          {"confidence", fact.confidence},
          {"created_at", FormatRfc3339(fact.created_at)},
          {"last_accessed", FormatRfc3339(fact.last_accessed)},
          {"access_count", fact.access_count},
          {"helped", fact.helped},
          {"hurt", fact.hurt},
          {"superseded_by", fact.superseded_by.empty() ? nlohmann::json(nullptr)
                                                       : nlohmann::json(fact.superseded_by)},
          {"provenance", episodes}};
}

nlohmann::json SearchResultsJson(const std::vector<memory::ScoredFact>& hits) {
  nlohmann::json results = nlohmann::json::array();
  for (const memory::ScoredFact& hit : hits) {
    results.push_back({{"id", hit.fact.id},
                       {"score", hit.score},
                       {"category", hit.fact.category},
                       {"tags", hit.fact.tags},
                       {"content", hit.fact.content}});
  }
  return {{"results", results}};
}

Result<RecallAnswer> ExplainRecall(Runtime& runtime, std::string_view task,
                                   const std::string& workspace, const std::string& model) {
  const std::string text(Trim(task));
  if (text.empty()) return InvalidArgumentError("the task is empty");
  RecallAnswer answer;
  answer.workspace = workspace.empty() ? runtime.caller_dir : workspace;
  // A run builds its model before asking memory, so HyDE sees the same model here; a provider
  // that cannot be built only turns HyDE off, as in a run.
  if (runtime.config.GetBool("memory.hyde")) PrepareProvider(runtime, model).IgnoreError();
  MEND_ASSIGN_OR_RETURN(answer.retrieval, RecallForTask(runtime, text, answer.workspace));
  if (runtime.config.GetBool("memory.enabled") && runtime.retriever != nullptr) {
    answer.gate_needed = runtime.retriever->options().gate;
    answer.coverage_needed = runtime.retriever->options().coverage_gate;
  }
  if (answer.retrieval.section.empty()) MEND_RETURN_IF_ERROR(ExplainEmpty(runtime, answer));
  return answer;
}

nlohmann::json RecallAnswerJson(const RecallAnswer& answer) {
  nlohmann::json facts = nlohmann::json::array();
  for (const memory::ScoredFact& s : answer.retrieval.selected) {
    facts.push_back(
        {{"id", s.fact.id}, {"category", s.fact.category}, {"content", s.fact.content}});
  }
  return {
      {"facts", facts},
      {"section", answer.retrieval.section},
      {"workspace", answer.workspace},
      {"reason", answer.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(answer.reason)},
      {"gate",
       {{"score", answer.retrieval.gate_score},
        {"needed", answer.gate_needed},
        {"coverage", answer.retrieval.coverage},
        {"coverage_needed", answer.coverage_needed}}}};
}

std::string RecallReasonText(const RecallAnswer& answer) {
  if (!answer.below_gate) return answer.reason;
  char figures[160];
  std::snprintf(figures, sizeof(figures),
                ": best score %.2f, gate %.2f (rare words' worth); best coverage %.2f, gate %.2f",
                answer.retrieval.gate_score, answer.gate_needed, answer.retrieval.coverage,
                answer.coverage_needed);
  return answer.reason + figures;
}

Result<FactPage> ListFactPage(memory::FactStore& facts, const memory::ListOptions& filter,
                              size_t limit, std::string_view cursor) {
  if (limit < 1 || limit > kMaxFactPageSize) {
    return InvalidArgumentError("limit must be from 1 to " + std::to_string(kMaxFactPageSize));
  }
  std::optional<store::RunCursor> after;
  if (!cursor.empty()) {
    Result<store::RunCursor> parsed = store::ParseRunCursor(cursor);
    if (!parsed.ok())
      return InvalidArgumentError("cursor \"" + std::string(cursor) + "\" is not valid");
    after = *std::move(parsed);
  }
  // One snapshot gives every figure of the page. The store's order puts a fact added later first
  // even within one millisecond, so facts added meanwhile land before the cursor, never after.
  memory::ListOptions all = filter;
  all.limit = 0;
  MEND_ASSIGN_OR_RETURN(std::vector<memory::Fact> listed, facts.List(all));
  FactPage page;
  page.total = static_cast<int64_t>(listed.size());
  auto first = listed.begin();
  if (after.has_value()) first += static_cast<std::ptrdiff_t>(PageStart(listed, *after));
  const size_t left = static_cast<size_t>(listed.end() - first);
  const size_t take = std::min(limit, left);
  page.facts.assign(std::make_move_iterator(first), std::make_move_iterator(first + take));
  page.more = static_cast<int64_t>(left - take);
  if (page.more > 0) {
    const memory::Fact& last = page.facts.back();
    page.next = store::FormatRunCursor({last.created_at, last.id});
  }
  return page;
}

nlohmann::json FactPageJson(const FactPage& page) {
  nlohmann::json list = nlohmann::json::array();
  for (const memory::Fact& fact : page.facts) list.push_back(FactJson(fact));
  return {{"facts", list},
          {"total", page.total},
          {"more", page.more},
          {"next", page.next.empty() ? nlohmann::json(nullptr) : nlohmann::json(page.next)}};
}

}  // namespace mend::app
