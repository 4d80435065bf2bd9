// TrigramIndex of mend/memory/lexical.h.
//
// Texts become vectors over byte trigrams of their lower-cased, whitespace-collapsed form padded
// with one space at each end (so word starts and ends form trigrams of their own). A trigram is
// its three bytes packed into a uint32 and mapped to a dense id. Weights are (1 + ln tf) × idf with
// idf = ln((N + 1) / (df + 1)) + 1, where N counts documents and df the documents holding the
// trigram in any of their texts; each text's vector is L2-normalised. Postings live in one flat
// array indexed by trigram id (CSR layout), so a query only touches the texts that share at least
// one of its trigrams.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <utility>

#include "memory/trigram_set.h"
#include "mend/base/utf8.h"
#include "mend/memory/lexical.h"

namespace mend::memory {
namespace {

using internal::SortedTrigrams;

struct Posting {
  uint32_t text = 0;
  float weight = 0;
};

// (packed trigram, term frequency), sorted by trigram.
using TrigramCounts = std::vector<std::pair<uint32_t, uint32_t>>;

TrigramCounts CountTrigrams(std::string_view text) {
  std::vector<uint32_t> grams = SortedTrigrams(text);
  TrigramCounts counts;
  for (uint32_t g : grams) {
    if (!counts.empty() && counts.back().first == g) {
      ++counts.back().second;
    } else {
      counts.emplace_back(g, 1);
    }
  }
  return counts;
}

double Idf(size_t docs, size_t df) {
  return std::log(static_cast<double>(docs + 1) / static_cast<double>(df + 1)) + 1.0;
}

// Per-thread accumulator reused across searches, so a query allocates nothing proportional to the
// collection. Every score is back to zero when Search returns.
struct Scratch {
  std::vector<float> text_score;
  std::vector<uint32_t> touched;  // texts with a score, in the sparse mode only
};

// The best k hits seen so far; the heap's front is the worst of them.
class TopK {
 public:
  explicit TopK(size_t k) : k_(k) {}
  void Offer(size_t doc, double score) {
    if (heap_.size() < k_) {
      heap_.push_back({doc, score});
      std::push_heap(heap_.begin(), heap_.end(), Better);
    } else if (Better({doc, score}, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Better);
      heap_.back() = {doc, score};
      std::push_heap(heap_.begin(), heap_.end(), Better);
    }
  }
  std::vector<TrigramIndex::Hit> Take() {
    std::sort(heap_.begin(), heap_.end(), Better);
    return std::move(heap_);
  }

 private:
  static bool Better(const TrigramIndex::Hit& a, const TrigramIndex::Hit& b) {
    return a.score != b.score ? a.score > b.score : a.doc < b.doc;
  }
  size_t k_;
  std::vector<TrigramIndex::Hit> heap_;
};

class TrigramIndexImpl final : public TrigramIndex {
 public:
  explicit TrigramIndexImpl(const std::vector<std::vector<std::string>>& docs);

  std::vector<Hit> Search(std::string_view text, size_t k) const override;
  size_t size() const override { return doc_count_; }

 private:
  // The query's (dense id, weight) pairs for trigrams some document holds, with the weights of
  // the whole query vector normalised to unit length.
  std::vector<std::pair<uint32_t, float>> QueryVector(std::string_view text) const;
  // Few postings to visit: remember which texts got a score and look only at those.
  void SearchSparse(const std::vector<std::pair<uint32_t, float>>& query, Scratch& scratch,
                    TopK& top) const;
  // Many postings: skip the bookkeeping and sweep every document afterwards.
  void SearchDense(const std::vector<std::pair<uint32_t, float>>& query, Scratch& scratch,
                   TopK& top) const;

  size_t doc_count_ = 0;
  std::unordered_map<uint32_t, uint32_t> ids_;  // packed trigram -> dense id
  std::vector<float> idf_;                      // by dense id
  std::vector<uint32_t> offsets_;               // postings of id t: [offsets_[t], offsets_[t+1])
  std::vector<Posting> postings_;
  std::vector<uint32_t> text_doc_;   // text -> document
  std::vector<uint32_t> doc_texts_;  // texts of document d: [doc_texts_[d], doc_texts_[d+1])
};

TrigramIndexImpl::TrigramIndexImpl(const std::vector<std::vector<std::string>>& docs)
    : doc_count_(docs.size()), doc_texts_{0} {
  // Pass 1: trigram counts per text, dense ids, document frequencies.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> text_terms;  // (dense id, tf)
  std::vector<uint32_t> df;
  std::vector<uint32_t> last_doc;  // by dense id: last document counted in df, plus one
  for (size_t d = 0; d < docs.size(); ++d) {
    for (const std::string& text : docs[d]) {
      std::vector<std::pair<uint32_t, uint32_t>> terms;
      for (const auto& [gram, tf] : CountTrigrams(text)) {
        // try_emplace builds no node for a trigram already seen (most of them).
        auto [it, inserted] = ids_.try_emplace(gram, static_cast<uint32_t>(df.size()));
        if (inserted) {
          df.push_back(0);
          last_doc.push_back(0);
        }
        uint32_t id = it->second;
        if (last_doc[id] != d + 1) {
          last_doc[id] = static_cast<uint32_t>(d + 1);
          ++df[id];
        }
        terms.emplace_back(id, tf);
      }
      text_terms.push_back(std::move(terms));
      text_doc_.push_back(static_cast<uint32_t>(d));
    }
    doc_texts_.push_back(static_cast<uint32_t>(text_doc_.size()));
  }
  idf_.resize(df.size());
  for (size_t t = 0; t < df.size(); ++t) idf_[t] = static_cast<float>(Idf(doc_count_, df[t]));

  // Pass 2: normalised weights into the flat posting lists.
  offsets_.assign(df.size() + 1, 0);
  for (const auto& terms : text_terms) {
    for (const auto& term : terms) ++offsets_[term.first + 1];
  }
  for (size_t t = 0; t < df.size(); ++t) offsets_[t + 1] += offsets_[t];
  postings_.resize(offsets_.back());
  std::vector<uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
  for (size_t x = 0; x < text_terms.size(); ++x) {
    double norm = 0;
    std::vector<double> weights;
    for (const auto& [id, tf] : text_terms[x]) {
      weights.push_back((1.0 + std::log(static_cast<double>(tf))) * idf_[id]);
      norm += weights.back() * weights.back();
    }
    norm = std::sqrt(norm);
    for (size_t i = 0; i < weights.size(); ++i) {
      postings_[fill[text_terms[x][i].first]++] = {static_cast<uint32_t>(x),
                                                   static_cast<float>(weights[i] / norm)};
    }
  }
}

std::vector<std::pair<uint32_t, float>> TrigramIndexImpl::QueryVector(std::string_view text) const {
  std::vector<std::pair<uint32_t, double>> known;
  double norm = 0;
  for (const auto& [gram, tf] : CountTrigrams(text)) {
    auto it = ids_.find(gram);
    // A trigram no document holds still lengthens the query vector, as cosine requires.
    double idf = it == ids_.end() ? Idf(doc_count_, 0) : idf_[it->second];
    double w = (1.0 + std::log(static_cast<double>(tf))) * idf;
    norm += w * w;
    if (it != ids_.end()) known.emplace_back(it->second, w);
  }
  std::vector<std::pair<uint32_t, float>> query;
  for (const auto& [id, w] : known) query.emplace_back(id, static_cast<float>(w / std::sqrt(norm)));
  return query;
}

void TrigramIndexImpl::SearchSparse(const std::vector<std::pair<uint32_t, float>>& query,
                                    Scratch& scratch, TopK& top) const {
  float* scores = scratch.text_score.data();
  for (const auto& [id, qw] : query) {
    for (uint32_t p = offsets_[id]; p < offsets_[id + 1]; ++p) {
      float& score = scores[postings_[p].text];
      if (score == 0) scratch.touched.push_back(postings_[p].text);
      score += qw * postings_[p].weight;
    }
  }
  // Sorted, the texts of one document sit next to each other.
  std::sort(scratch.touched.begin(), scratch.touched.end());
  size_t i = 0;
  while (i < scratch.touched.size()) {
    uint32_t doc = text_doc_[scratch.touched[i]];
    float best = 0;
    for (; i < scratch.touched.size() && text_doc_[scratch.touched[i]] == doc; ++i) {
      best = std::max(best, scores[scratch.touched[i]]);
      scores[scratch.touched[i]] = 0;
    }
    if (best > 0) top.Offer(doc, best);
  }
  scratch.touched.clear();
}

void TrigramIndexImpl::SearchDense(const std::vector<std::pair<uint32_t, float>>& query,
                                   Scratch& scratch, TopK& top) const {
  float* scores = scratch.text_score.data();
  for (const auto& [id, qw] : query) {
    const Posting* end = postings_.data() + offsets_[id + 1];
    for (const Posting* p = postings_.data() + offsets_[id]; p < end; ++p) {
      scores[p->text] += qw * p->weight;
    }
  }
  for (size_t d = 0; d < doc_count_; ++d) {
    float best = 0;
    for (uint32_t x = doc_texts_[d]; x < doc_texts_[d + 1]; ++x) {
      best = std::max(best, scores[x]);
      scores[x] = 0;
    }
    if (best > 0) top.Offer(d, best);
  }
}

std::vector<TrigramIndex::Hit> TrigramIndexImpl::Search(std::string_view text, size_t k) const {
  if (k == 0 || text_doc_.empty()) return {};
  std::vector<std::pair<uint32_t, float>> query = QueryVector(text);
  size_t volume = 0;
  for (const auto& term : query) volume += offsets_[term.first + 1] - offsets_[term.first];
  thread_local Scratch scratch;
  if (scratch.text_score.size() < text_doc_.size()) scratch.text_score.resize(text_doc_.size());
  TopK top(k);
  // Sweeping all documents costs about as much as a few postings per document; below that the
  // touched list is cheaper.
  if (volume < text_doc_.size() / 4) {
    SearchSparse(query, scratch, top);
  } else {
    SearchDense(query, scratch, top);
  }
  return top.Take();
}

}  // namespace

std::unique_ptr<TrigramIndex> TrigramIndex::Build(
    const std::vector<std::vector<std::string>>& docs) {
  return std::make_unique<TrigramIndexImpl>(docs);
}

}  // namespace mend::memory
