// TermStatistics of mend/memory/lexical.h.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "memory/document_terms.h"
#include "memory/words.h"
#include "mend/memory/lexical.h"

namespace mend::memory {
namespace {

constexpr double kK1 = 1.2;
constexpr double kB = 0.75;

using internal::TokenKind;

// Which tokens may have one of a query's stems. PorterStem keeps a token's first byte, and its
// first two when the stem is three bytes or longer (its rules change only what follows a stem of
// measure > 0, which has two letters or more;
// TermStatisticsTest.PorterStemKeepsAStemsFirstTwoBytes), so only tokens starting like a query stem
// need stemming: about one in ten.
class StemPrefixes {
 public:
  explicit StemPrefixes(const std::vector<TermStatistics::QueryTerm>& query) {
    for (const TermStatistics::QueryTerm& q : query) {
      if (q.term.empty()) continue;
      const auto first = static_cast<unsigned char>(q.term[0]);
      if (q.term.size() < 3) {
        first_[first] = true;
      } else {
        pairs_.push_back(static_cast<uint16_t>(first << 8 | static_cast<unsigned char>(q.term[1])));
      }
    }
  }
  bool MayMatch(std::string_view token) const {
    const auto first = static_cast<unsigned char>(token[0]);
    if (first_[first]) return true;
    if (token.size() < 3) return false;
    const auto pair = static_cast<uint16_t>(first << 8 | static_cast<unsigned char>(token[1]));
    return std::find(pairs_.begin(), pairs_.end(), pair) != pairs_.end();
  }

 private:
  bool first_[256] = {};
  std::vector<uint16_t> pairs_;
};

double Saturation(double tf, double length, double average) {
  const double norm = kK1 * (1 - kB + kB * length / (average > 0 ? average : 1));
  return tf * (kK1 + 1) / (tf + norm);
}

}  // namespace

std::unique_ptr<TermStatistics> TermStatistics::Build(
    const std::vector<std::vector<std::string_view>>& docs) {
  auto stats = std::unique_ptr<TermStatistics>(new TermStatistics());
  // Stems get dense ids; a memory repeats a small vocabulary many times over, so each distinct
  // token is stemmed once.
  std::unordered_map<std::string, uint32_t> stem_ids;
  std::unordered_map<std::string, uint32_t> token_ids;
  std::vector<Frequency> frequency;
  // A document's stems, each shifted left by one with the low bit set when a word (not a stop
  // word) has it, so one sort groups them.
  std::vector<uint32_t> doc_stems;
  std::string buffer;
  uint64_t total_words = 0;
  uint64_t total_tokens = 0;
  for (const std::vector<std::string_view>& fields : docs) {
    doc_stems.clear();
    for (std::string_view field : fields) {
      internal::ForEachToken(field, buffer, [&](std::string_view token, TokenKind kind) {
        auto it = token_ids.find(buffer);
        if (it == token_ids.end()) {
          auto stem = stem_ids.emplace(PorterStem(token), static_cast<uint32_t>(stem_ids.size()));
          if (stem.second) frequency.emplace_back();
          it = token_ids.emplace(token, stem.first->second).first;
        }
        const bool word = kind == TokenKind::kWord;
        total_words += word;
        doc_stems.push_back(it->second << 1 | (word ? 1u : 0u));
      });
    }
    total_tokens += doc_stems.size();
    // Document frequency counts a document once per stem.
    std::sort(doc_stems.begin(), doc_stems.end());
    for (size_t i = 0; i < doc_stems.size(); ++i) {
      const uint32_t id = doc_stems[i] >> 1;
      if (i + 1 < doc_stems.size() && doc_stems[i + 1] >> 1 == id) continue;
      // The last entry of a stem's group has the word bit if any entry does.
      ++frequency[id].tokens;
      frequency[id].words += doc_stems[i] & 1;
    }
  }
  for (auto& [stem, id] : stem_ids) stats->document_frequency_.emplace(stem, frequency[id]);
  stats->documents_ = docs.size();
  if (!docs.empty()) {
    const double n = static_cast<double>(docs.size());
    stats->average_words_ = static_cast<double>(total_words) / n;
    stats->average_tokens_ = static_cast<double>(total_tokens) / n;
  }
  return stats;
}

std::unique_ptr<TermStatistics> TermStatistics::FromCounts(Counts counts) {
  auto stats = std::unique_ptr<TermStatistics>(new TermStatistics());
  stats->document_frequency_ = std::move(counts.stems);
  stats->documents_ = counts.documents;
  if (counts.documents > 0) {
    const double n = static_cast<double>(counts.documents);
    stats->average_words_ = static_cast<double>(counts.words) / n;
    stats->average_tokens_ = static_cast<double>(counts.tokens) / n;
  }
  return stats;
}

std::vector<std::string> TermStatistics::QueryStems(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  std::string buffer;
  for (const std::string& word : words) {
    internal::ForEachToken(word, buffer, [&](std::string_view token, TokenKind kind) {
      if (kind == TokenKind::kStopWord) return;
      std::string stem = PorterStem(token);
      if (std::find(out.begin(), out.end(), stem) == out.end()) out.push_back(std::move(stem));
    });
  }
  return out;
}

std::vector<std::string> SearchedWords(const std::vector<std::string>& words,
                                       const TermStatistics& stats, size_t max_postings) {
  std::vector<std::pair<size_t, size_t>> order;  // (facts holding it, index)
  for (size_t i = 0; i < words.size(); ++i) {
    std::vector<std::string> stems = TermStatistics::QueryStems({words[i]});
    size_t facts = 0;
    for (const std::string& stem : stems)
      facts = std::max<size_t>(facts, stats.FrequencyOf(stem).tokens);
    if (facts > 0) order.push_back({facts, i});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<size_t> chosen;
  size_t postings = 0;
  for (const auto& [facts, i] : order) {
    if (!chosen.empty() && postings + facts > max_postings) break;
    postings += facts;
    chosen.push_back(i);
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<std::string> out;
  out.reserve(chosen.size());
  for (size_t i : chosen) out.push_back(words[i]);
  return out;
}

namespace internal {

DocumentTerms CountDocumentTerms(const std::vector<std::string_view>& fields,
                                 std::unordered_map<std::string, std::string>* stem_cache) {
  DocumentTerms out;
  std::string buffer;
  for (std::string_view field : fields) {
    ForEachToken(field, buffer, [&](std::string_view token, TokenKind kind) {
      const bool word = kind == TokenKind::kWord;
      out.words += word;
      ++out.tokens;
      if (stem_cache == nullptr) {
        out.stems.push_back({PorterStem(token), word});
        return;
      }
      auto it = stem_cache->find(buffer);
      if (it == stem_cache->end()) it = stem_cache->emplace(token, PorterStem(token)).first;
      out.stems.push_back({it->second, word});
    });
  }
  // One entry per stem, with the word flag set when any of its tokens is a word.
  std::sort(out.stems.begin(), out.stems.end(),
            [](const DocumentTerms::Stem& a, const DocumentTerms::Stem& b) {
              return a.stem != b.stem ? a.stem < b.stem : a.word > b.word;
            });
  out.stems.erase(std::unique(out.stems.begin(), out.stems.end(),
                              [](const DocumentTerms::Stem& a, const DocumentTerms::Stem& b) {
                                return a.stem == b.stem;
                              }),
                  out.stems.end());
  return out;
}

void TermDeltas::Count(std::string_view content, std::string_view tags, std::string_view provenance,
                       int sign) {
  const DocumentTerms terms = CountDocumentTerms({content, tags, provenance}, &stem_cache);
  for (const DocumentTerms::Stem& s : terms.stems) {
    Delta& d = stems[s.stem];
    d.words += s.word ? sign : 0;
    d.tokens += sign;
  }
  documents += sign;
  words += sign * static_cast<int64_t>(terms.words);
  tokens += sign * static_cast<int64_t>(terms.tokens);
}

std::vector<std::string> TagKeys(const std::string& tag) {
  std::vector<std::string> keys = QueryTerms(tag);
  if (std::find(keys.begin(), keys.end(), tag) == keys.end()) keys.push_back(tag);
  return keys;
}

}  // namespace internal

TermStatistics::Frequency TermStatistics::FrequencyOf(const std::string& stem) const {
  auto it = document_frequency_.find(stem);
  return it == document_frequency_.end() ? Frequency{} : it->second;
}

double TermStatistics::Idf(size_t document_frequency) const {
  const double n = static_cast<double>(std::min(document_frequency, documents_));
  const double total = static_cast<double>(documents_);
  return std::log(1 + (total - n + 0.5) / (n + 0.5));
}

double TermStatistics::FtsIdf(size_t document_frequency) const {
  const double n = static_cast<double>(std::min(document_frequency, documents_));
  const double total = static_cast<double>(documents_);
  // FTS5's where it is at least ln 2, i.e. n ≤ (N − 0.5) / 3; from there on the larger of it and
  // Lucene's capped at ln 2, Lucene's value for n = N / 2. The two meet at n = (N − 0.5) / 3 and
  // FTS5's falls to zero at n = N / 2, so the weight is continuous and falls with n.
  const double fts = std::log((total - n + 0.5) / (n + 0.5));
  return std::max(fts, std::min(std::numbers::ln2, Idf(document_frequency)));
}

std::vector<TermStatistics::QueryTerm> TermStatistics::Query(
    const std::vector<std::string>& words) const {
  std::vector<QueryTerm> out;
  std::unordered_map<std::string, size_t> index;
  std::string buffer;
  for (const std::string& word : words) {
    // FTS5 cuts a query word as it cuts the text ("‘python3" is "python3"), so mend does too.
    internal::ForEachToken(word, buffer, [&](std::string_view token, TokenKind kind) {
      if (kind == TokenKind::kStopWord) return;
      std::string stem = PorterStem(token);
      auto [it, added] = index.emplace(stem, out.size());
      if (!added) {
        // Two words of the query with one stem ("migrate the migrations"): the stem counts for
        // both, as in FTS5, which matches each word of the query on its own.
        ++out[it->second].words;
        return;
      }
      auto df = document_frequency_.find(stem);
      const Frequency f = df == document_frequency_.end() ? Frequency{} : df->second;
      out.push_back({std::move(stem), Idf(f.words), FtsIdf(f.tokens), 1});
    });
  }
  return out;
}

LexicalMatch TermStatistics::Match(const std::vector<QueryTerm>& query,
                                   std::string_view text) const {
  LexicalMatch match;
  if (query.empty()) return match;
  const StemPrefixes prefixes(query);
  std::vector<uint32_t> word_tf(query.size(), 0);
  std::vector<uint32_t> token_tf(query.size(), 0);
  size_t words = 0;
  size_t tokens = 0;
  std::string buffer;
  internal::ForEachToken(text, buffer, [&](std::string_view token, TokenKind kind) {
    ++tokens;
    const bool word = kind == TokenKind::kWord;
    words += word;
    if (!prefixes.MayMatch(token)) return;
    const std::string stem = PorterStem(token);
    for (size_t i = 0; i < query.size(); ++i) {
      if (query[i].term != stem) continue;
      ++token_tf[i];
      word_tf[i] += word;
    }
  });
  double total_idf = 0;
  double matched_idf = 0;
  for (size_t i = 0; i < query.size(); ++i) {
    const double repeats = static_cast<double>(query[i].words);
    if (token_tf[i] > 0) {
      match.fts_bm25 += query[i].fts_idf * repeats *
                        Saturation(token_tf[i], static_cast<double>(tokens), average_tokens_);
    }
    const double weight = query[i].idf * repeats;
    total_idf += weight;
    if (word_tf[i] == 0) continue;
    match.bm25 += weight * Saturation(word_tf[i], static_cast<double>(words), average_words_);
    matched_idf += weight;
    ++match.matched;
  }
  match.coverage = total_idf > 0 ? matched_idf / total_idf : 0;
  return match;
}

}  // namespace mend::memory
