#pragma once

// Retriever, the search that picks the facts a task receives (docs/memory.md): candidate signals
// fused, nudged, diversified and gated, and the `## Long-term Memory` prompt section. Thread-safe.

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

/// How the Retriever searches, ranks and gates (the memory.* keys; docs/memory.md).
struct RetrieverOptions {
  size_t max_facts = 5;         ///< facts injected at most
  size_t budget_chars = 4000;   ///< size of the prompt section
  size_t candidates = 50;       ///< per signal, before fusion
  size_t max_query_terms = 32;  ///< words of the query searched at most
  /// Postings a query reads at most per signal, about: FTS5 searches the query's words rarest
  /// first until the facts holding them add up to this (the rarest is always searched; every word
  /// still scores the candidates), and the tag hint reads its keys the same way. It bounds a
  /// retrieval's cost at any memory size; below it nothing is left out.
  size_t max_postings = 5000;
  ///@{
  /// Weights of the reciprocal-rank fusion.
  double bm25_weight = 1.5;
  double trigram_weight = 0.6;
  double vector_weight = 1.0;
  double hint_weight = 0.5;
  /// The k of reciprocal-rank fusion: 1 / (k + rank).
  double rrf_k = 60;
  ///@}
  ///@{
  /// Nudges on the fused score (multiplicative, small): recency half-life of the last access,
  /// confidence, and helped/hurt usefulness.
  std::chrono::hours recency_half_life{24 * 90};
  double recency_weight = 0.05;
  double confidence_weight = 0.1;
  double usefulness_weight = 0.15;
  ///@}
  double mmr_lambda = 0.75;  ///< MMR: relevance against diversity
  /// The injection gate (docs/memory.md, Retrieval). Lexical relevance is mend's BM25 of a fact
  /// over the words that carry meaning (LexicalMatch::bm25) counted in "rare words' worth":
  /// divided by the idf of a word found in one fact, so the same threshold means the same at any
  /// memory size. Something is injected only when some fact reaches `gate` rare words' worth, or
  /// holds at least `coverage_gate` of the query's idf weight with two or more of its words; an
  /// unrelated task gets nothing.
  double gate = 1.9;
  double coverage_gate = 0.5;  ///< see gate
  /// Past the gate, a fact is injected only when it reaches `fact_gate` × `gate` rare words' worth
  /// of its own, or the coverage above: the best match always does; unrelated facts ranked after
  /// it do not.
  double fact_gate = 0.5;
  bool hyde = false;                  ///< ask the model for a hypothetical lesson first
  std::string hyde_model;             ///< "" = the provider's configured model
  size_t vector_exact_limit = 20000;  ///< vectors searched exactly; above, an HNSW graph
};

/// What a run searches memory for.
struct RetrievalQuery {
  std::string task;       ///< the task text
  std::string error;      ///< optional error text of the task
  std::string workspace;  ///< facts of this workspace and global ones; "" = all
};

/// A fact with its score for one query.
struct ScoredFact {
  Fact fact;         ///< the fact
  double score = 0;  ///< fused, nudged score (larger is better; only comparable within one query)
};

/// What Retrieve found for a query, and what a run receives.
struct Retrieval {
  /// The ranking (the one Retriever::Search returns), best first, its first max(10, max_facts),
  /// before the gate (for evaluation).
  std::vector<ScoredFact> ranked;
  std::vector<ScoredFact> selected;  ///< what a run receives: gated, diversified, within budget
  std::string section;               ///< the prompt section for `selected` ("" when none)
  bool gated = false;                ///< true when the gate refused to inject anything
  double top_lexical = 0;            ///< best BM25 relevance of a fact to the query
  double gate_score = 0;             ///< the same in rare words' worth, as the gate compares it
  double coverage = 0;    ///< best share of the query's weight a fact holds in two or more words
  std::string hyde_text;  ///< the hypothetical lesson, when HyDE ran
};

/// Finds the facts a task should receive (docs/memory.md): candidates from a
/// tag/keyword hint scorer, FTS5 ordered by its BM25 as mend recomputes it, a character-trigram
/// index, vectors when an embedder is given, and HyDE when enabled; weighted reciprocal-rank
/// fusion; recency, confidence and usefulness nudges; MMR diversification; workspace scoping; an
/// injection gate. Term statistics and tag keys are read from the store for each query; only the
/// vectors are cached in memory (rebuilt when the store's vector generation changes).
/// Thread-safe.
class Retriever {
 public:
  /// `store` and `clock` are required and must outlive the retriever; `embedder` (vectors) and
  /// `provider` (HyDE) may be null.
  Retriever(FactStore* store, Clock* clock, RetrieverOptions options,
            llm::Embedder* embedder = nullptr, llm::LlmProvider* provider = nullptr);
  ~Retriever();

  /// The full retrieval for a run. A HyDE or embedding failure degrades to the lexical signals
  /// (and is reported in `warnings`); store errors are returned.
  Result<Retrieval> Retrieve(const RetrievalQuery& query,
                             std::vector<std::string>* warnings = nullptr);

  /// `mend memory search`: the first `k` facts of the ranking Retrieve ranks for a task `text`
  /// (no error text, every workspace), without gate, budget or HyDE. Search(text, k) equals
  /// Retrieve({text}).ranked wherever both have a fact, diversification included.
  Result<std::vector<ScoredFact>> Search(const std::string& text, size_t k);

  /// The options it was built with.
  const RetrieverOptions& options() const { return options_; }

 private:
  class Impl;
  RetrieverOptions options_;
  std::unique_ptr<Impl> impl_;
};

///@{
/// The instruction HyDE sends, and its user message for a task.
std::string HydeSystemPrompt();
std::string HydeUserMessage(const RetrievalQuery& query);
///@}

}  // namespace mend::memory
