#include "mend/memory/retriever.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memory/fusion.h"
#include "memory/memory_section.h"
#include "memory/vector_index.h"
#include "mend/base/utf8.h"
#include "mend/memory/lexical.h"

namespace mend::memory {
namespace {

constexpr size_t kRankedSize = 10;
// Coverage alone opens the gate only with at least two of the query's words: one shared word says
// too little, however short the query.
constexpr size_t kCoverageWords = 2;
constexpr size_t kHydeMaxBytes = 2000;
// The trigram index reads the head of each text: the situation line of a lesson, the start of a
// task. It bounds the index to a few hundred postings per text.
constexpr size_t kTrigramTextBytes = 600;

// The content trigram sets of the facts the diversification compares (internal::TrigramSet's),
// as bitsets over the trigrams they hold between them: a Jaccard is then a few dozen word
// operations rather than a merge of two sorted sets, and the sets need no sorting (a trigram is
// numbered through an open-addressing table).
class TrigramSets {
 public:
  explicit TrigramSets(const std::vector<ScoredFact>& facts) : sizes_(facts.size()) {
    std::vector<std::vector<uint32_t>> grams(facts.size());
    size_t total = 0;
    for (size_t i = 0; i < facts.size(); ++i) {
      const std::string norm =
          " " + ToLowerAscii(CollapseWhitespace(Trim(facts[i].fact.content))) + " ";
      for (size_t k = 0; k + 3 <= norm.size(); ++k) {
        grams[i].push_back(Byte(norm[k]) << 16 | Byte(norm[k + 1]) << 8 | Byte(norm[k + 2]));
      }
      total += grams[i].size();
    }
    size_t slots = 64;
    while (slots < 2 * total) slots *= 2;
    std::vector<uint32_t> keys(slots, kEmpty);  // no packed trigram has its top byte set
    std::vector<uint32_t> numbers(slots);
    uint32_t next = 0;
    for (std::vector<uint32_t>& g : grams) {
      for (uint32_t& gram : g) {
        size_t slot = (gram * 2654435761u >> 8) & (slots - 1);
        while (keys[slot] != kEmpty && keys[slot] != gram) slot = (slot + 1) & (slots - 1);
        if (keys[slot] == kEmpty) {
          keys[slot] = gram;
          numbers[slot] = next++;
        }
        gram = numbers[slot];
      }
    }
    words_ = (next + 63) / 64;
    bits_.assign(facts.size() * words_, 0);
    for (size_t i = 0; i < facts.size(); ++i) {
      uint64_t* set = &bits_[i * words_];
      for (uint32_t n : grams[i]) set[n / 64] |= uint64_t{1} << (n % 64);
      for (size_t w = 0; w < words_; ++w) sizes_[i] += std::popcount(set[w]);
    }
  }
  // internal::JaccardOfSets of facts a's and b's sets.
  double Jaccard(size_t a, size_t b) const {
    if (sizes_[a] == 0 && sizes_[b] == 0) return 1.0;
    size_t common = 0;
    for (size_t w = 0; w < words_; ++w) {
      common += std::popcount(bits_[a * words_ + w] & bits_[b * words_ + w]);
    }
    return static_cast<double>(common) / static_cast<double>(sizes_[a] + sizes_[b] - common);
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  static uint32_t Byte(char c) { return static_cast<unsigned char>(c); }

  size_t words_ = 0;            // bitset words per fact
  std::vector<uint64_t> bits_;  // fact i's set: [i * words_, (i + 1) * words_)
  std::vector<size_t> sizes_;   // trigrams in each set
};

}  // namespace

class Retriever::Impl {
 public:
  Impl(FactStore* store, Clock* clock, const RetrieverOptions& options, llm::Embedder* embedder,
       llm::LlmProvider* provider)
      : store_(store), clock_(clock), options_(options), embedder_(embedder), provider_(provider) {}

  Result<Retrieval> Retrieve(const RetrievalQuery& query, std::vector<std::string>* warnings);
  Result<std::vector<ScoredFact>> Search(const std::string& text, size_t k);

 private:
  struct Signals {
    std::vector<RankedList> lists;
    std::unordered_map<std::string, LexicalMatch> lexical;  // BM25 candidates by fact id
    std::vector<size_t> bm25_hits;  // the BM25 list as indexes into the lexical hits
    // The idf of a word found in one fact: lexical relevance divided by it counts "rare words'
    // worth" of overlap, comparable from one fact to a hundred thousand.
    double rare_idf = 1;
  };

  Status RefreshVectorsLocked(std::vector<std::string>* warnings);
  Result<Signals> Collect(const std::string& text, const std::string& hyde,
                          const std::string& workspace, std::vector<std::string>* warnings);
  RankedList Bm25Ranking(const std::vector<std::string>& terms, const TermStatistics& stats,
                         const std::vector<LexicalHit>& hits, Signals& signals) const;
  RankedList TrigramRanking(const std::string& text, const std::vector<LexicalHit>& hits,
                            const std::vector<size_t>& which) const;
  Result<RankedList> HintRanking(const std::vector<std::string>& terms, size_t documents,
                                 const std::string& workspace) const;
  Result<RankedList> VectorRanking(const std::string& text, const std::string& workspace,
                                   std::vector<std::string>* warnings);
  Result<std::vector<ScoredFact>> Rank(const Signals& signals, size_t n);
  Result<std::vector<ScoredFact>> Nudged(const std::vector<FusedScore>& fused, size_t begin,
                                         size_t end, Time now) const;
  double Nudge(const Fact& fact, Time now) const;
  std::vector<ScoredFact> Diversify(std::vector<ScoredFact> ranked, size_t n) const;
  std::string Hyde(const RetrievalQuery& query, std::vector<std::string>* warnings);
  // The ranking's head, diversified as a whole (docs/memory.md, Retrieval).
  size_t Pool() const { return std::max(kRankedSize, options_.max_facts) * 3; }
  // Whether `match` shows enough lexical evidence: `rare_words` of it, or most of the query's
  // weight in at least kCoverageWords words.
  bool Clears(const LexicalMatch& match, double rare_idf, double rare_words) const {
    return match.bm25 / rare_idf >= rare_words ||
           (match.coverage >= options_.coverage_gate && match.matched >= kCoverageWords);
  }

  FactStore* store_;
  Clock* clock_;
  const RetrieverOptions options_;
  llm::Embedder* embedder_;
  llm::LlmProvider* provider_;

  std::mutex mu_;  // guards the vector cache below
  int64_t vector_generation_ = -1;
  std::unique_ptr<VectorIndex> vectors_;
  std::unordered_map<std::string, std::string> vector_workspace_;  // fact id → its workspace
};

Status Retriever::Impl::RefreshVectorsLocked(std::vector<std::string>* warnings) {
  MEND_ASSIGN_OR_RETURN(int64_t vector_generation, store_->VectorGeneration());
  if (vector_generation == vector_generation_) return OkStatus();
  MEND_ASSIGN_OR_RETURN(std::vector<FactVector> stored, store_->Embeddings(embedder_->model_id()));
  std::vector<VectorIndex::Entry> entries;
  entries.reserve(stored.size());
  vector_workspace_.clear();
  for (FactVector& v : stored) {
    vector_workspace_.emplace(v.id, std::move(v.workspace));
    entries.push_back({std::move(v.id), std::move(v.vector)});
  }
  Result<std::unique_ptr<VectorIndex>> index =
      VectorIndex::Build(std::move(entries), options_.vector_exact_limit);
  if (!index.ok()) {
    if (warnings) warnings->push_back("vectors unusable: " + std::string(index.status().message()));
    vectors_.reset();
  } else {
    vectors_ = std::move(index).value();
  }
  vector_generation_ = vector_generation;
  return OkStatus();
}

Result<RankedList> Retriever::Impl::HintRanking(const std::vector<std::string>& terms,
                                                size_t documents,
                                                const std::string& workspace) const {
  // Each query term that names a tag votes for the facts carrying it, weighted by how rare the
  // tag is (log N / df), so "python" counts less than "asyncio".
  MEND_ASSIGN_OR_RETURN(std::vector<TagMatch> matches,
                        store_->MatchTags(terms, workspace, options_.max_postings));
  struct Vote {
    int64_t rowid = 0;
    double weight = 0;
    const std::string* id = nullptr;
  };
  std::vector<Vote> votes;
  const double n = static_cast<double>(documents) + 1;
  for (const TagMatch& m : matches) {
    if (m.facts <= 0 || m.ids.empty()) continue;
    const double weight = std::log(n / static_cast<double>(m.facts));
    if (weight <= 0) continue;
    for (size_t i = 0; i < m.ids.size(); ++i) votes.push_back({m.rowids[i], weight, &m.ids[i]});
  }
  // A fact's votes side by side, in the order of the keys, so its score sums as the keys come.
  std::stable_sort(votes.begin(), votes.end(),
                   [](const Vote& a, const Vote& b) { return a.rowid < b.rowid; });
  std::vector<Vote> scored;
  for (const Vote& v : votes) {
    if (!scored.empty() && scored.back().rowid == v.rowid) {
      scored.back().weight += v.weight;
    } else {
      scored.push_back(v);
    }
  }
  // Best first; among equals, the fact added first.
  const size_t kept = std::min(scored.size(), options_.candidates);
  std::partial_sort(scored.begin(), scored.begin() + static_cast<ptrdiff_t>(kept), scored.end(),
                    [](const Vote& a, const Vote& b) {
                      return a.weight != b.weight ? a.weight > b.weight : a.rowid < b.rowid;
                    });
  RankedList hint{{}, options_.hint_weight};
  for (size_t i = 0; i < kept; ++i) hint.ids.push_back(*scored[i].id);
  return hint;
}

RankedList Retriever::Impl::Bm25Ranking(const std::vector<std::string>& terms,
                                        const TermStatistics& stats,
                                        const std::vector<LexicalHit>& hits,
                                        Signals& signals) const {
  // The store finds the candidates; mend orders them by the BM25 FTS5 computes, recomputed from
  // mend's own statistics over every word of the query (LexicalMatch::fts_bm25) so that the words
  // most facts share never weigh nothing. The store's order breaks ties.
  const std::vector<TermStatistics::QueryTerm> query = stats.Query(terms);
  signals.rare_idf = stats.RareIdf();
  std::vector<std::pair<double, size_t>> order;
  order.reserve(hits.size());
  for (size_t i = 0; i < hits.size(); ++i) {
    LexicalMatch match = stats.Match(query, hits[i].text);
    order.push_back({-match.fts_bm25, i});
    signals.lexical.emplace(hits[i].id, match);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  RankedList bm25{{}, options_.bm25_weight};
  for (size_t i = 0; i < order.size() && i < options_.candidates; ++i) {
    bm25.ids.push_back(hits[order[i].second].id);
    signals.bm25_hits.push_back(order[i].second);
  }
  return bm25;
}

RankedList Retriever::Impl::TrigramRanking(const std::string& text,
                                           const std::vector<LexicalHit>& hits,
                                           const std::vector<size_t>& which) const {
  // Character trigrams over the BM25 list's candidates: the head of each one's content with its
  // tags, and the head of its provenance, each a text of its own (a fact scores with its best).
  std::vector<std::vector<std::string>> texts;
  texts.reserve(which.size());
  for (size_t i : which) {
    const LexicalHit& h = hits[i];
    const std::string_view all(h.text);
    const std::string_view content = all.substr(0, h.content_bytes);
    const std::string_view tags =
        all.substr(std::min(all.size(), h.content_bytes + 1), h.tags_bytes);
    const std::string_view provenance =
        all.substr(std::min(all.size(), h.content_bytes + h.tags_bytes + 2));
    std::vector<std::string>& t = texts.emplace_back();
    t.push_back(TruncateUtf8Bytes(content, kTrigramTextBytes));
    if (!tags.empty()) t.back() += ' ' + std::string(tags);
    if (!provenance.empty()) {
      t.push_back(TruncateUtf8Bytes(provenance, kTrigramTextBytes));
    }
  }
  RankedList tri{{}, options_.trigram_weight};
  std::unique_ptr<TrigramIndex> index = TrigramIndex::Build(texts);
  for (const TrigramIndex::Hit& h : index->Search(text, options_.candidates)) {
    tri.ids.push_back(hits[which[h.doc]].id);
  }
  return tri;
}

Result<RankedList> Retriever::Impl::VectorRanking(const std::string& text,
                                                  const std::string& workspace,
                                                  std::vector<std::string>* warnings) {
  RankedList vec{{}, options_.vector_weight};
  std::lock_guard<std::mutex> lock(mu_);
  MEND_RETURN_IF_ERROR(RefreshVectorsLocked(warnings));
  if (!vectors_ || vectors_->size() == 0) return vec;
  Result<std::vector<std::vector<float>>> query = embedder_->Embed({text});
  if (!query.ok() || query->size() != 1) {
    if (warnings) {
      warnings->push_back("embedding the task failed: " +
                          std::string(query.ok() ? "no vector" : query.status().message()));
    }
    return vec;
  }
  for (const VectorIndex::Hit& h : vectors_->Search((*query)[0], options_.candidates * 2)) {
    auto it = vector_workspace_.find(h.id);
    if (it == vector_workspace_.end()) continue;
    if (!workspace.empty() && !it->second.empty() && it->second != workspace) continue;
    vec.ids.push_back(h.id);
    if (vec.ids.size() == options_.candidates) break;
  }
  return vec;
}

Result<Retriever::Impl::Signals> Retriever::Impl::Collect(const std::string& text,
                                                          const std::string& hyde,
                                                          const std::string& workspace,
                                                          std::vector<std::string>* warnings) {
  Signals signals;
  std::string lexical_text = hyde.empty() ? text : text + "\n" + hyde;
  std::vector<std::string> terms = QueryTerms(lexical_text, options_.max_query_terms);
  // The statistics of the query's words only, kept by the store: nothing here reads every fact.
  MEND_ASSIGN_OR_RETURN(TermStatistics::Counts counts,
                        store_->CountTerms(TermStatistics::QueryStems(terms)));
  const size_t documents = counts.documents;
  std::unique_ptr<TermStatistics> stats = TermStatistics::FromCounts(std::move(counts));
  // Twice the candidates: the store ranks by the words it searched, so with the postings budget
  // the best by every word of the query may lie a little further down its list.
  const std::vector<std::string> searched = SearchedWords(terms, *stats, options_.max_postings);
  MEND_ASSIGN_OR_RETURN(std::vector<LexicalHit> hits,
                        store_->SearchLexical(searched, 2 * options_.candidates, workspace));
  signals.lists.push_back(Bm25Ranking(terms, *stats, hits, signals));
  if (options_.trigram_weight > 0 && !hits.empty()) {
    signals.lists.push_back(TrigramRanking(lexical_text, hits, signals.bm25_hits));
  }
  if (options_.hint_weight > 0) {
    MEND_ASSIGN_OR_RETURN(RankedList hint, HintRanking(terms, documents, workspace));
    signals.lists.push_back(std::move(hint));
  }
  if (embedder_ != nullptr && options_.vector_weight > 0) {
    MEND_ASSIGN_OR_RETURN(RankedList vec, VectorRanking(lexical_text, workspace, warnings));
    if (!vec.ids.empty()) signals.lists.push_back(std::move(vec));
  }
  return signals;
}

double Retriever::Impl::Nudge(const Fact& fact, Time now) const {
  double age_hours =
      std::chrono::duration<double, std::ratio<3600>>(now - fact.last_accessed).count();
  double half_life = static_cast<double>(options_.recency_half_life.count());
  double recency = half_life > 0 ? std::exp2(-std::max(0.0, age_hours) / half_life) : 0;
  double usefulness = static_cast<double>(fact.helped - fact.hurt) /
                      static_cast<double>(fact.helped + fact.hurt + 2);
  return 1 + options_.recency_weight * recency +
         options_.confidence_weight * (std::clamp(fact.confidence, 0.0, 1.0) - 1) +
         options_.usefulness_weight * usefulness;
}

Result<std::vector<ScoredFact>> Retriever::Impl::Nudged(const std::vector<FusedScore>& fused,
                                                        size_t begin, size_t end, Time now) const {
  std::vector<ScoredFact> out;
  out.reserve(end - begin);
  std::vector<std::string> ids;
  ids.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) ids.push_back(fused[i].id);
  // A fact removed meanwhile is left out.
  MEND_ASSIGN_OR_RETURN(std::vector<Fact> facts, store_->GetMany(ids));
  std::unordered_map<std::string, double> fused_score;
  for (size_t i = begin; i < end; ++i) fused_score.emplace(fused[i].id, fused[i].score);
  for (Fact& fact : facts) {
    const double score = fused_score[fact.id] * Nudge(fact, now);
    out.push_back({std::move(fact), score});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ScoredFact& a, const ScoredFact& b) { return a.score > b.score; });
  return out;
}

// The one ranking: the best Pool() fused candidates, nudged and diversified, then the others,
// nudged. Its first n are the same whatever n is, so Search(k) and Retrieve agree on every prefix.
Result<std::vector<ScoredFact>> Retriever::Impl::Rank(const Signals& signals, size_t n) {
  std::vector<FusedScore> fused = FuseReciprocalRank(signals.lists, options_.rrf_k);
  const Time now = clock_->Now();
  const size_t pool = std::min(Pool(), fused.size());
  MEND_ASSIGN_OR_RETURN(std::vector<ScoredFact> head, Nudged(fused, 0, pool, now));
  std::vector<ScoredFact> out = Diversify(std::move(head), n);
  if (out.size() < n && fused.size() > pool) {
    MEND_ASSIGN_OR_RETURN(std::vector<ScoredFact> tail, Nudged(fused, pool, fused.size(), now));
    for (size_t i = 0; i < tail.size() && out.size() < n; ++i) out.push_back(std::move(tail[i]));
  }
  return out;
}

std::vector<ScoredFact> Retriever::Impl::Diversify(std::vector<ScoredFact> ranked, size_t n) const {
  if (ranked.empty() || options_.mmr_lambda >= 1) {
    if (ranked.size() > n) ranked.resize(n);
    return ranked;
  }
  double top = ranked.front().score > 0 ? ranked.front().score : 1;
  std::vector<double> relevance;
  for (const ScoredFact& s : ranked) relevance.push_back(s.score / top);
  const TrigramSets sets(ranked);
  std::vector<size_t> order = SelectDiverse(relevance, n, options_.mmr_lambda,
                                            [&](size_t i, size_t j) { return sets.Jaccard(i, j); });
  std::vector<ScoredFact> out;
  for (size_t i : order) out.push_back(ranked[i]);
  return out;
}

std::string Retriever::Impl::Hyde(const RetrievalQuery& query, std::vector<std::string>* warnings) {
  if (!options_.hyde || provider_ == nullptr) return "";
  llm::CompletionRequest request;
  request.model = options_.hyde_model;
  request.messages.push_back({llm::Role::kSystem, HydeSystemPrompt()});
  request.messages.push_back({llm::Role::kUser, HydeUserMessage(query)});
  request.temperature = 0;
  Result<llm::Completion> reply = provider_->Complete(request);
  if (!reply.ok()) {
    if (warnings) warnings->push_back("HyDE skipped: " + std::string(reply.status().message()));
    return "";
  }
  return TruncateUtf8Bytes(SanitizeUtf8(Trim(reply->text)), kHydeMaxBytes);
}

Result<Retrieval> Retriever::Impl::Retrieve(const RetrievalQuery& query,
                                            std::vector<std::string>* warnings) {
  Retrieval out;
  std::string text = query.error.empty() ? query.task : query.task + "\n" + query.error;
  if (Trim(text).empty()) {
    out.gated = true;
    return out;
  }
  out.hyde_text = Hyde(query, warnings);
  MEND_ASSIGN_OR_RETURN(Signals signals, Collect(text, out.hyde_text, query.workspace, warnings));
  MEND_ASSIGN_OR_RETURN(out.ranked, Rank(signals, std::max(kRankedSize, options_.max_facts)));
  bool open = false;
  for (const auto& [id, match] : signals.lexical) {
    out.top_lexical = std::max(out.top_lexical, match.bm25);
    out.gate_score = std::max(out.gate_score, match.bm25 / signals.rare_idf);
    if (match.matched >= kCoverageWords) out.coverage = std::max(out.coverage, match.coverage);
    open = open || Clears(match, signals.rare_idf, options_.gate);
  }
  out.gated = out.ranked.empty() || !open;
  if (out.gated || options_.max_facts == 0) return out;
  // Past the gate, each fact must show lexical evidence of its own, so facts that only ride on
  // the fusion of weak signals stay out of the prompt.
  std::vector<Fact> chosen;
  const double own_floor = options_.fact_gate * options_.gate;
  for (size_t i = 0; i < out.ranked.size() && chosen.size() < options_.max_facts; ++i) {
    auto it = signals.lexical.find(out.ranked[i].fact.id);
    if (it == signals.lexical.end() || !Clears(it->second, signals.rare_idf, own_floor)) continue;
    chosen.push_back(out.ranked[i].fact);
  }
  std::vector<std::string> included;
  out.section = RenderMemorySection(chosen, options_.budget_chars, &included);
  for (const ScoredFact& s : out.ranked) {
    if (std::find(included.begin(), included.end(), s.fact.id) != included.end()) {
      out.selected.push_back(s);
    }
  }
  return out;
}

Result<std::vector<ScoredFact>> Retriever::Impl::Search(const std::string& text, size_t k) {
  if (Trim(text).empty() || k == 0) return std::vector<ScoredFact>();
  MEND_ASSIGN_OR_RETURN(Signals signals, Collect(text, "", "", nullptr));
  return Rank(signals, k);
}

Retriever::Retriever(FactStore* store, Clock* clock, RetrieverOptions options,
                     llm::Embedder* embedder, llm::LlmProvider* provider)
    : options_(options),
      impl_(std::make_unique<Impl>(store, clock, options_, embedder, provider)) {}

Retriever::~Retriever() = default;

Result<Retrieval> Retriever::Retrieve(const RetrievalQuery& query,
                                      std::vector<std::string>* warnings) {
  return impl_->Retrieve(query, warnings);
}

Result<std::vector<ScoredFact>> Retriever::Search(const std::string& text, size_t k) {
  return impl_->Search(text, k);
}

}  // namespace mend::memory
