// Long-term memory in runs: the prompt section before a run and the helped/hurt feedback after.
#include "mend/app/memory_hooks.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/runtime_parts.h"
#include "mend/app/runtime.h"
#include "mend/obs/events.h"
#include "mend/obs/trace.h"

namespace mend::app {

Result<memory::Retrieval> RecallForTask(Runtime& runtime, const std::string& task,
                                        const std::string& workspace) {
  if (!runtime.config.GetBool("memory.enabled") || runtime.retriever == nullptr) {
    return memory::Retrieval{};
  }
  memory::RetrievalQuery query;
  query.task = task;
  query.workspace = workspace;
  std::vector<std::string> warnings;
  MEND_ASSIGN_OR_RETURN(memory::Retrieval retrieval, runtime.retriever->Retrieve(query, &warnings));
  // A degraded retrieval still answers; the events say what was missing and why.
  if (runtime.events != nullptr) {
    for (const std::string& warning : warnings) {
      obs::Event e("memory.degraded");
      e.AddString("warning", warning);
      runtime.events->Publish(std::move(e));
    }
  }
  return retrieval;
}

namespace {

struct InjectedSection {
  std::string text;  // "" when nothing was selected
  size_t facts = 0;
};

Result<InjectedSection> BuildSection(Runtime& runtime, const agent::RunInfo& run) {
  MEND_ASSIGN_OR_RETURN(memory::Retrieval retrieval,
                        RecallForTask(runtime, run.task, run.workspace));
  if (retrieval.selected.empty()) return InjectedSection{};
  std::vector<std::string> ids;
  std::vector<memory::InjectedFact> given;
  ids.reserve(retrieval.selected.size());
  given.reserve(retrieval.selected.size());
  for (const memory::ScoredFact& scored : retrieval.selected) {
    ids.push_back(scored.fact.id);
    given.emplace_back(scored.fact.id, scored.score);
  }
  // Only a recall that injected something is a span: the hook acted (docs/observe.md).
  obs::Span span = obs::StartSpan("mend.memory.recall");
  span.SetAttribute("mend.memory.fact_ids", ids)
      .SetAttribute("mend.memory.section_chars", static_cast<int64_t>(retrieval.section.size()))
      .SetContent("mend.memory.section", retrieval.section);
  if (Status s = runtime.facts->RecordInjection(run.run_id, given); !s.ok()) {
    span.SetError(StatusCodeName(s.code()), s.message());
    return s;
  }
  span.SetOk();
  return InjectedSection{std::move(retrieval.section), ids.size()};
}

}  // namespace

Result<std::string> MemoryContextHook::ContextSection(const agent::RunInfo& run) {
  Result<InjectedSection> section = BuildSection(runtime_, run);
  if (internal::PartsOf(runtime_).run_metrics != nullptr) {
    internal::PartsOf(runtime_).run_metrics->RecordMemoryRecall(section.status(),
                                                                section.ok() ? section->facts : 0);
  }
  if (!section.ok()) return section.status();
  return std::move(section->text);
}

Status MemoryFeedbackHook::AfterRun(agent::RunOutcome& outcome) {
  if (outcome.run == nullptr) return OkStatus();
  return runtime_.facts->RecordOutcome(outcome.run->run_id, outcome.error.ok());
}

void AddMemoryHooks(Runtime& runtime, agent::Agent& agent) {
  agent.AddPreRunHook(std::make_shared<MemoryContextHook>(runtime));
  agent.AddPostRunHook(std::make_shared<MemoryFeedbackHook>(runtime));
}

}  // namespace mend::app
