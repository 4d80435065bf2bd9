#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mend::memory {

// Search terms of a free text: maximal runs of letters and digits (of any script: non-ASCII
// spaces, punctuation and symbols such as ‘ ’ “ ” — … or the byte order mark separate words, as
// in FTS5's unicode61 tokenizer, and so does an invalid byte), ASCII lower-cased; stop words and
// one-character terms dropped, duplicates removed, in order of first appearance, at most
// `max_terms` (0 = no limit).
std::vector<std::string> QueryTerms(std::string_view text, size_t max_terms = 0);

// Whether `term` (lower-case) is an English stop word.
bool IsStopWord(std::string_view term);

// An FTS5 MATCH expression that ORs the terms, each quoted as a string (embedded quotes doubled),
// so no user text can inject FTS5 syntax (NEAR, *, column filters, parentheses). "" for no terms.
std::string BuildFtsQuery(const std::vector<std::string>& terms);

// M. F. Porter's stemmer as SQLite's `porter` tokenizer applies it, for one lower-case token:
// "migrations" and "migrate" become "migrat", "running" becomes "run", "k8s" becomes "k8" (digits
// are consonants). A token with anything but a-z and 0-9, of two bytes or fewer, or longer than
// 64 bytes comes back unchanged.
std::string PorterStem(std::string_view word);

// How much of a query a text holds (TermStatistics::Match).
struct LexicalMatch {
  double bm25 = 0;      // Σ over the query words the text holds of idf × BM25's tf saturation
  double coverage = 0;  // Σ idf of the query words the text holds / Σ idf of all, in [0, 1]
  size_t matched = 0;   // distinct query stems the text holds
};

// BM25 with term statistics mend keeps itself. Texts are cut into tokens the way FTS5's unicode61
// tokenizer cuts them (runs of letters and digits of any script; spaces, punctuation and symbols,
// ASCII or not, separate), ASCII lower-cased, stop words dropped, each reduced by PorterStem, so
// they group as FTS5's porter tokenizer groups them; a query's words (QueryTerms) are cut the same
// way. The IDF is Lucene's, ln(1 + (N − n + 0.5) / (n + 0.5)) for n of N documents holding the
// term: it never reaches zero, unlike FTS5's ln((N − n + 0.5) / (n + 0.5)), which floors a word
// found in more than half the documents to almost nothing and so makes the words a small memory
// shares count for nothing. A document's length is its number of tokens; k1 = 1.2 and b = 0.75
// (the usual values). Built once, then read-only: thread-safe.
class TermStatistics {
 public:
  struct QueryTerm {
    std::string term;  // stemmed
    double idf = 0;
    size_t words = 1;  // words of the query with this stem; each counts
  };

  // `docs[i]` holds the texts of document i (content, tags, episodes), counted as one text.
  static std::unique_ptr<TermStatistics> Build(
      const std::vector<std::vector<std::string_view>>& docs);

  size_t documents() const { return documents_; }
  double Idf(size_t document_frequency) const;
  // The idf of a term found in exactly one document: the most a word of the memory weighs.
  double RareIdf() const { return Idf(1); }

  // The distinct stems of `words` (terms as QueryTerms returns them), in order, with their idf
  // and how many of the words have each.
  std::vector<QueryTerm> Query(const std::vector<std::string>& words) const;
  // What `text` holds of `query` (from Query), its length counted in scoring words.
  LexicalMatch Match(const std::vector<QueryTerm>& query, std::string_view text) const;

 private:
  TermStatistics() = default;

  std::unordered_map<std::string, uint32_t> document_frequency_;
  size_t documents_ = 0;
  double average_length_ = 0;
};

// An in-memory character-trigram TF-IDF index (cosine over sublinear tf × idf weights) over
// documents with one or more texts each; a document's score is the best of its texts. Built once,
// then read-only: Search is thread-safe.
class TrigramIndex {
 public:
  struct Hit {
    size_t doc = 0;  // index into the documents given to Build
    double score = 0;
  };

  // `docs[i]` holds the texts of document i.
  static std::unique_ptr<TrigramIndex> Build(const std::vector<std::vector<std::string>>& docs);
  virtual ~TrigramIndex() = default;

  // The best `k` documents for `text` with a score above 0, best first (ties: lower doc first).
  virtual std::vector<Hit> Search(std::string_view text, size_t k) const = 0;
  virtual size_t size() const = 0;
};

}  // namespace mend::memory
