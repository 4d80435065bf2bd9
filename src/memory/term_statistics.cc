// TermStatistics of mend/memory/lexical.h.

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "memory/words.h"
#include "mend/memory/lexical.h"

namespace mend::memory {
namespace {

constexpr double kK1 = 1.2;
constexpr double kB = 0.75;

}  // namespace

std::unique_ptr<TermStatistics> TermStatistics::Build(
    const std::vector<std::vector<std::string_view>>& docs) {
  auto stats = std::unique_ptr<TermStatistics>(new TermStatistics());
  // Stems get dense ids; a memory repeats a small vocabulary many times over, so each distinct
  // word is stemmed once.
  std::unordered_map<std::string, uint32_t> stem_ids;
  std::unordered_map<std::string, uint32_t> word_ids;
  std::vector<uint32_t> frequency;
  std::vector<uint32_t> doc_terms;
  std::string buffer;
  uint64_t total_length = 0;
  for (const std::vector<std::string_view>& fields : docs) {
    doc_terms.clear();
    for (std::string_view field : fields) {
      internal::ForEachToken(field, buffer, [&](std::string_view word) {
        auto it = word_ids.find(buffer);
        if (it == word_ids.end()) {
          auto stem = stem_ids.emplace(PorterStem(word), static_cast<uint32_t>(stem_ids.size()));
          if (stem.second) frequency.push_back(0);
          it = word_ids.emplace(word, stem.first->second).first;
        }
        doc_terms.push_back(it->second);
      });
    }
    total_length += doc_terms.size();
    // Document frequency counts a document once per term.
    std::sort(doc_terms.begin(), doc_terms.end());
    doc_terms.erase(std::unique(doc_terms.begin(), doc_terms.end()), doc_terms.end());
    for (uint32_t id : doc_terms) ++frequency[id];
  }
  for (auto& [stem, id] : stem_ids) id = frequency[id];
  stats->document_frequency_ = std::move(stem_ids);
  stats->documents_ = docs.size();
  stats->average_length_ =
      docs.empty() ? 0 : static_cast<double>(total_length) / static_cast<double>(docs.size());
  return stats;
}

double TermStatistics::Idf(size_t document_frequency) const {
  const double n = static_cast<double>(std::min(document_frequency, documents_));
  const double total = static_cast<double>(documents_);
  return std::log(1 + (total - n + 0.5) / (n + 0.5));
}

std::vector<TermStatistics::QueryTerm> TermStatistics::Query(
    const std::vector<std::string>& words) const {
  std::vector<QueryTerm> out;
  std::unordered_map<std::string, size_t> index;
  std::string buffer;
  for (const std::string& word : words) {
    // FTS5 cuts a query word as it cuts the text ("‘python3" is "python3"), so mend does too.
    internal::ForEachToken(word, buffer, [&](std::string_view token) {
      std::string stem = PorterStem(token);
      auto [it, added] = index.emplace(stem, out.size());
      if (!added) {
        // Two words of the query with one stem ("migrate the migrations"): the stem counts for
        // both, as in FTS5, which matches each word of the query on its own.
        ++out[it->second].words;
        return;
      }
      auto df = document_frequency_.find(stem);
      out.push_back({std::move(stem), Idf(df == document_frequency_.end() ? 0 : df->second), 1});
    });
  }
  return out;
}

LexicalMatch TermStatistics::Match(const std::vector<QueryTerm>& query,
                                   std::string_view text) const {
  LexicalMatch match;
  if (query.empty()) return match;
  // A stem keeps its word's first letter, so only words starting like a query term are stemmed.
  bool first_letters[256] = {};
  for (const QueryTerm& q : query) {
    if (!q.term.empty()) first_letters[static_cast<unsigned char>(q.term[0])] = true;
  }
  std::vector<uint32_t> tf(query.size(), 0);
  size_t length = 0;
  std::string buffer;
  internal::ForEachToken(text, buffer, [&](std::string_view word) {
    ++length;
    if (!first_letters[static_cast<unsigned char>(word[0])]) return;
    const std::string stem = PorterStem(word);
    for (size_t i = 0; i < query.size(); ++i) {
      if (query[i].term == stem) ++tf[i];
    }
  });
  const double average = average_length_ > 0 ? average_length_ : 1;
  const double norm = kK1 * (1 - kB + kB * static_cast<double>(length) / average);
  double total_idf = 0;
  double matched_idf = 0;
  for (size_t i = 0; i < query.size(); ++i) {
    const double weight = query[i].idf * static_cast<double>(query[i].words);
    total_idf += weight;
    if (tf[i] == 0) continue;
    const double f = static_cast<double>(tf[i]);
    match.bm25 += weight * f * (kK1 + 1) / (f + norm);
    matched_idf += weight;
    ++match.matched;
  }
  match.coverage = total_idf > 0 ? matched_idf / total_idf : 0;
  return match;
}

}  // namespace mend::memory
