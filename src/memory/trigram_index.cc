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
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/utf8.h"
#include "mend/memory/lexical.h"

namespace mend::memory {
namespace {

struct Posting {
  uint32_t text = 0;
  float weight = 0;
};

// (packed trigram, term frequency), sorted by trigram.
using TrigramCounts = std::vector<std::pair<uint32_t, uint32_t>>;

// Sorts packed trigrams (24 bits each) by their bytes, least significant first: a retrieval
// indexes about a hundred texts of a few hundred trigrams, where this is several times quicker
// than a comparison sort.
void SortTrigrams(std::vector<uint32_t>& grams, std::vector<uint32_t>& scratch) {
  if (grams.size() < 64) {
    std::sort(grams.begin(), grams.end());
    return;
  }
  size_t counts[3][257] = {};  // per byte, from the least significant: counts, then starts
  for (uint32_t g : grams) {
    ++counts[0][(g & 0xff) + 1];
    ++counts[1][(g >> 8 & 0xff) + 1];
    ++counts[2][(g >> 16 & 0xff) + 1];
  }
  scratch.resize(grams.size());
  for (int pass = 0; pass < 3; ++pass) {
    size_t* start = counts[pass];
    for (size_t b = 1; b <= 256; ++b) start[b] += start[b - 1];
    const int shift = 8 * pass;
    for (uint32_t g : grams) scratch[start[g >> shift & 0xff]++] = g;
    grams.swap(scratch);
  }
}

// `text` as internal::SortedTrigrams reads it: whitespace collapsed (which trims it too) and
// ASCII lower-cased. An ASCII text is done here in one pass, the rest by CollapseWhitespace.
void Normalize(std::string_view text, std::string& out) {
  if (!std::all_of(text.begin(), text.end(), [](char c) { return (c & 0x80) == 0; })) {
    out = CollapseWhitespace(text);
  } else {
    out.clear();
    bool pending_space = false;
    for (char c : text) {
      if (c == ' ' || (c >= '\t' && c <= '\r')) {
        pending_space = !out.empty();
        continue;
      }
      if (pending_space) out.push_back(' ');
      pending_space = false;
      out.push_back(c);
    }
  }
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
}

// Appends the trigrams of `text` with their counts to `out`, as internal::SortedTrigrams cuts
// them: of the normalised text padded with one space each side.
void CountTrigrams(std::string_view text, TrigramCounts& out) {
  thread_local std::string norm;
  thread_local std::vector<uint32_t> grams;
  thread_local std::vector<uint32_t> scratch;
  Normalize(text, norm);
  grams.clear();
  const size_t n = norm.size();
  auto byte = [&](size_t i) -> uint32_t {  // of the padded text
    return i == 0 || i == n + 1 ? ' ' : static_cast<unsigned char>(norm[i - 1]);
  };
  for (size_t i = 0; i + 3 <= n + 2; ++i)
    grams.push_back(byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2));
  SortTrigrams(grams, scratch);
  const size_t first = out.size();
  for (uint32_t g : grams) {
    if (out.size() > first && out.back().first == g) {
      ++out.back().second;
    } else {
      out.emplace_back(g, 1);
    }
  }
}

// Packed trigram → dense id, by open addressing: the index is built for every query, and a node
// per trigram cost most of the building. Ids are dense (0, 1, ...) in the order trigrams arrive.
class TrigramIds {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  TrigramIds() : keys_(kInitialSlots, kEmpty), ids_(kInitialSlots) {}
  size_t size() const { return size_; }
  // The id of `gram`; a new one (size() before the call) when it had none.
  uint32_t Insert(uint32_t gram) {
    if (2 * (size_ + 1) > keys_.size()) Grow();
    size_t slot = Slot(gram);
    while (keys_[slot] != kEmpty && keys_[slot] != gram) slot = (slot + 1) & Mask();
    if (keys_[slot] == kEmpty) {
      keys_[slot] = gram;
      ids_[slot] = static_cast<uint32_t>(size_++);
    }
    return ids_[slot];
  }
  uint32_t Find(uint32_t gram) const {
    for (size_t slot = Slot(gram); keys_[slot] != kEmpty; slot = (slot + 1) & Mask()) {
      if (keys_[slot] == gram) return ids_[slot];
    }
    return kNone;
  }

 private:
  static constexpr size_t kInitialSlots = 1024;
  static constexpr uint32_t kEmpty = UINT32_MAX;  // no packed trigram has the top byte set
  size_t Mask() const { return keys_.size() - 1; }
  size_t Slot(uint32_t gram) const { return (gram * 2654435761u >> 8) & Mask(); }
  void Grow() {
    std::vector<uint32_t> keys(2 * keys_.size(), kEmpty);
    std::vector<uint32_t> ids(keys.size());
    keys.swap(keys_);
    ids.swap(ids_);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == kEmpty) continue;
      size_t slot = Slot(keys[i]);
      while (keys_[slot] != kEmpty) slot = (slot + 1) & Mask();
      keys_[slot] = keys[i];
      ids_[slot] = ids[i];
    }
  }

  std::vector<uint32_t> keys_;
  std::vector<uint32_t> ids_;
  size_t size_ = 0;
};

// ln(tf), exactly as std::log computes it, for the small counts most trigrams have.
double LogCount(uint32_t tf) {
  static const auto* const table = [] {
    auto* t = new std::array<double, 32>();
    for (size_t i = 1; i < t->size(); ++i) (*t)[i] = std::log(static_cast<double>(i));
    return t;
  }();
  return tf < table->size() ? (*table)[tf] : std::log(static_cast<double>(tf));
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
  TrigramIds ids_;                 // packed trigram -> dense id
  std::vector<float> idf_;         // by dense id
  std::vector<uint32_t> offsets_;  // postings of id t: [offsets_[t], offsets_[t+1])
  std::vector<Posting> postings_;
  std::vector<uint32_t> text_doc_;   // text -> document
  std::vector<uint32_t> doc_texts_;  // texts of document d: [doc_texts_[d], doc_texts_[d+1])
};

TrigramIndexImpl::TrigramIndexImpl(const std::vector<std::vector<std::string>>& docs)
    : doc_count_(docs.size()), doc_texts_{0} {
  // Pass 1: trigram counts per text, dense ids, document frequencies.
  std::vector<std::pair<uint32_t, uint32_t>> terms;  // (trigram, then dense id; tf), text by text
  std::vector<uint32_t> text_terms{0};               // terms of text x: [text_terms[x], [x+1])
  for (const std::vector<std::string>& texts : docs) {
    for (const std::string& text : texts) {
      CountTrigrams(text, terms);
      text_terms.push_back(static_cast<uint32_t>(terms.size()));
    }
  }
  std::vector<uint32_t> df;
  std::vector<uint32_t> last_doc;  // by dense id: last document counted in df, plus one
  size_t x = 0;
  for (size_t d = 0; d < docs.size(); ++d) {
    for (size_t i = 0; i < docs[d].size(); ++i, ++x) {
      for (uint32_t t = text_terms[x]; t < text_terms[x + 1]; ++t) {
        const uint32_t id = ids_.Insert(terms[t].first);
        if (id == df.size()) {
          df.push_back(0);
          last_doc.push_back(0);
        }
        if (last_doc[id] != d + 1) {
          last_doc[id] = static_cast<uint32_t>(d + 1);
          ++df[id];
        }
        terms[t].first = id;
      }
      text_doc_.push_back(static_cast<uint32_t>(d));
    }
    doc_texts_.push_back(static_cast<uint32_t>(text_doc_.size()));
  }
  idf_.resize(df.size());
  for (size_t t = 0; t < df.size(); ++t) idf_[t] = static_cast<float>(Idf(doc_count_, df[t]));

  // Pass 2: normalised weights into the flat posting lists.
  offsets_.assign(df.size() + 1, 0);
  for (const auto& term : terms) ++offsets_[term.first + 1];
  for (size_t t = 0; t < df.size(); ++t) offsets_[t + 1] += offsets_[t];
  postings_.resize(offsets_.back());
  std::vector<uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
  std::vector<double> weights;
  for (size_t text = 0; text + 1 < text_terms.size(); ++text) {
    double norm = 0;
    weights.clear();
    for (uint32_t i = text_terms[text]; i < text_terms[text + 1]; ++i) {
      const auto [id, tf] = terms[i];
      weights.push_back((1.0 + LogCount(tf)) * idf_[id]);
      norm += weights.back() * weights.back();
    }
    norm = std::sqrt(norm);
    for (uint32_t i = text_terms[text]; i < text_terms[text + 1]; ++i) {
      postings_[fill[terms[i].first]++] = {
          static_cast<uint32_t>(text), static_cast<float>(weights[i - text_terms[text]] / norm)};
    }
  }
}

std::vector<std::pair<uint32_t, float>> TrigramIndexImpl::QueryVector(std::string_view text) const {
  std::vector<std::pair<uint32_t, double>> known;
  double norm = 0;
  TrigramCounts counts;
  CountTrigrams(text, counts);
  for (const auto& [gram, tf] : counts) {
    const uint32_t id = ids_.Find(gram);
    // A trigram no document holds still lengthens the query vector, as cosine requires.
    double idf = id == TrigramIds::kNone ? Idf(doc_count_, 0) : idf_[id];
    double w = (1.0 + LogCount(tf)) * idf;
    norm += w * w;
    if (id != TrigramIds::kNone) known.emplace_back(id, w);
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
