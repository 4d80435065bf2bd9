#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/llm/embedder.h"
#include "mend/llm/provider.h"
#include "mend/memory/fact.h"
#include "mend/memory/fact_store.h"

namespace mend::memory {

struct RetrieverOptions {
  size_t max_facts = 5;        // facts injected at most
  size_t budget_chars = 4000;  // size of the prompt section
  size_t candidates = 50;      // per signal, before fusion
  size_t max_query_terms = 32;
  // Weights of the reciprocal-rank fusion.
  double bm25_weight = 1.5;
  double trigram_weight = 0.6;
  double vector_weight = 1.0;
  double hint_weight = 0.5;
  double rrf_k = 60;
  // Nudges on the fused score (multiplicative, small): recency half-life of the last access,
  // confidence, and helped/hurt usefulness.
  std::chrono::hours recency_half_life{24 * 90};
  double recency_weight = 0.05;
  double confidence_weight = 0.1;
  double usefulness_weight = 0.15;
  double mmr_lambda = 0.75;
  // The injection gate: something is injected only when the best BM25 match of the task clears
  // `gate` × the collection's reference score (docs/memory.md); an unrelated task gets nothing.
  double gate = 1.9;
  // Past the gate, a fact is injected only when its own BM25 relevance reaches `fact_gate` × the
  // gate's threshold: the best match always does; unrelated facts ranked after it do not.
  double fact_gate = 0.5;
  bool hyde = false;       // ask the model for a hypothetical lesson first
  std::string hyde_model;  // "" = the provider's configured model
  size_t vector_exact_limit = 20000;
};

struct RetrievalQuery {
  std::string task;
  std::string error;      // optional error text of the task
  std::string workspace;  // facts of this workspace and global ones; "" = all
};

struct ScoredFact {
  Fact fact;
  double score = 0;  // fused, nudged score (larger is better; only comparable within one query)
};

struct Retrieval {
  std::vector<ScoredFact> ranked;    // best first, up to 10, before the gate (for evaluation)
  std::vector<ScoredFact> selected;  // what a run receives: gated, diversified, within budget
  std::string section;               // the prompt section for `selected` ("" when none)
  bool gated = false;                // true when the gate refused to inject anything
  double top_lexical = 0;            // best BM25 relevance of the query
  double gate_score = 0;             // the score the gate compared with
  std::string hyde_text;             // the hypothetical lesson, when HyDE ran
};

// Finds the facts a task should receive (DESIGN.md §8; docs/memory.md): candidates from a
// tag/keyword hint scorer, BM25 over FTS5, a character-trigram index, vectors when an embedder is
// given, and HyDE when enabled; weighted reciprocal-rank fusion; recency, confidence and
// usefulness nudges; MMR diversification; workspace scoping; an injection gate. In-memory
// indexes are rebuilt when the store's generation changes. Thread-safe.
class Retriever {
 public:
  // `store` and `clock` are required and must outlive the retriever; `embedder` (vectors) and
  // `provider` (HyDE) may be null.
  Retriever(FactStore* store, Clock* clock, RetrieverOptions options,
            llm::Embedder* embedder = nullptr, llm::LlmProvider* provider = nullptr);
  ~Retriever();

  // The full retrieval for a run. A HyDE or embedding failure degrades to the lexical signals
  // (and is reported in `warnings`); store errors are returned.
  Result<Retrieval> Retrieve(const RetrievalQuery& query,
                             std::vector<std::string>* warnings = nullptr);

  // `mend memory search`: the fused ranking without gate, budget or HyDE, up to `k`.
  Result<std::vector<ScoredFact>> Search(const std::string& text, size_t k);

  const RetrieverOptions& options() const { return options_; }

 private:
  class Impl;
  RetrieverOptions options_;
  std::unique_ptr<Impl> impl_;
};

// The instruction HyDE sends, and its user message for a task.
std::string HydeSystemPrompt();
std::string HydeUserMessage(const RetrievalQuery& query);

}  // namespace mend::memory
