#pragma once

// The lexical side of retrieval (docs/memory.md): query terms, the FTS5 query, the Porter stemmer,
// BM25 over term statistics mend keeps itself (TermStatistics) and a character-trigram index
// (TrigramIndex). Indexes are built once, then read-only and thread-safe.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mend::memory {

/// Search terms of a free text: maximal runs of letters and digits (of any script: non-ASCII
/// spaces, punctuation and symbols such as ‘ ’ “ ” — … or the byte order mark separate words, as
/// in FTS5's unicode61 tokenizer, and so does an invalid byte), ASCII lower-cased; stop words and
/// one-character terms dropped, duplicates removed, in order of first appearance, at most
/// `max_terms` (0 = no limit).
std::vector<std::string> QueryTerms(std::string_view text, size_t max_terms = 0);

/// Whether `term` (lower-case) is an English stop word.
bool IsStopWord(std::string_view term);

/// An FTS5 MATCH expression that ORs the terms, each quoted as a string (embedded quotes doubled),
/// so no user text can inject FTS5 syntax (NEAR, *, column filters, parentheses). "" for no terms.
std::string BuildFtsQuery(const std::vector<std::string>& terms);

/// M. F. Porter's stemmer as SQLite's `porter` tokenizer applies it, for one lower-case token:
/// "migrations" and "migrate" become "migrat", "running" becomes "run", "k8s" becomes "k8" (digits
/// are consonants). A token with anything but a-z and 0-9, of two bytes or fewer, or longer than
/// 64 bytes comes back unchanged.
std::string PorterStem(std::string_view word);

/// How much of a query a text holds (TermStatistics::Match).
struct LexicalMatch {
  /// BM25 as FTS5's bm25() computes it for the text (every token FTS5 indexes, stop words
  /// included, and FTS5's IDF), except that no IDF falls below TermStatistics::FtsIdf's floor:
  /// what orders the candidates.
  double fts_bm25 = 0;
  double bm25 = 0;      ///< Σ over the query words the text holds of idf × BM25's tf saturation
  double coverage = 0;  ///< Σ idf of the query words the text holds / Σ idf of all, in [0, 1]
  size_t matched = 0;   ///< distinct query stems the text holds
};

/// BM25 with term statistics mend keeps itself, in two forms. Texts are cut into tokens the way
/// FTS5's unicode61 tokenizer cuts them (runs of letters and digits of any script; spaces,
/// punctuation and symbols, ASCII or not, separate), ASCII lower-cased, each reduced by PorterStem,
/// so they group as FTS5's porter tokenizer groups them; a query's words (QueryTerms, stop words
/// already dropped) are cut the same way. k1 = 1.2 and b = 0.75 (FTS5's, and the usual values).
///
/// `fts_bm25` reproduces FTS5's bm25(): a document's length and the average length count every
/// token, stop words included, a stop word whose stem is a query word's counts as that word (as in
/// FTS5's index), and the IDF is FTS5's, ln((N − n + 0.5) / (n + 0.5)) for n of N documents
/// holding the term, wherever that is at least ln 2 (a term in at most about a third of the
/// documents). FTS5 floors its IDF at 1e-6 once n passes N / 2, so in a memory of a few facts
/// about one project the words they share count for nothing; FtsIdf instead never falls below
/// min(ln 2, ln(1 + (N − n + 0.5) / (n + 0.5))), Lucene's IDF capped at its value for n = N / 2,
/// so the weight goes on falling smoothly with n and never reaches zero.
///
/// `bm25`, `coverage` and `matched` measure the gate's evidence over the words that carry meaning:
/// stop words neither count nor lengthen a text (a fact written in full sentences needs no more
/// matching words than a terse one), and the IDF is Lucene's, ln(1 + (N − n + 0.5) / (n + 0.5)),
/// at every n. Built once, then read-only: thread-safe.
class TermStatistics {
 public:
  /// Documents holding a stem: among their words (stop words left out), and among every token.
  struct Frequency {
    uint32_t words = 0;   ///< documents holding it among their words
    uint32_t tokens = 0;  ///< documents holding it among their tokens
  };
  /// What FromCounts needs: the number of documents, their words and tokens in all, and the
  /// frequencies of some stems (those of a query; a stem left out is in no document).
  struct Counts {
    size_t documents = 0;                              ///< documents counted
    uint64_t words = 0;                                ///< their words in all
    uint64_t tokens = 0;                               ///< their tokens in all
    std::unordered_map<std::string, Frequency> stems;  ///< by stem
  };

  /// One stem of a query with its weights.
  struct QueryTerm {
    std::string term;    ///< stemmed
    double idf = 0;      ///< Idf: for bm25 and coverage
    double fts_idf = 0;  ///< FtsIdf: for fts_bm25
    size_t words = 1;    ///< words of the query with this stem; each counts
  };

  /// `docs[i]` holds the texts of document i (content, tags, episodes), counted as one text.
  static std::unique_ptr<TermStatistics> Build(
      const std::vector<std::vector<std::string_view>>& docs);
  /// The statistics of documents counted elsewhere (the fact store keeps them with every write):
  /// Query and Match then equal those of Build over the same documents for the stems `counts`
  /// holds.
  static std::unique_ptr<TermStatistics> FromCounts(Counts counts);
  /// The distinct stems Query looks up for `words`, in order.
  static std::vector<std::string> QueryStems(const std::vector<std::string>& words);

  /// How many documents the statistics count.
  size_t documents() const { return documents_; }
  /// Lucene's IDF for a term in `document_frequency` documents.
  double Idf(size_t document_frequency) const;
  /// FTS5's IDF for a term in `document_frequency` documents, floored as the class comment says.
  double FtsIdf(size_t document_frequency) const;
  /// The documents holding `stem` (zeros for one it does not know).
  Frequency FrequencyOf(const std::string& stem) const;
  /// The idf of a term found in exactly one document: the most a word of the memory weighs.
  double RareIdf() const { return Idf(1); }

  /// The distinct stems of `words` (terms as QueryTerms returns them), in order, with their idfs
  /// and how many of the words have each.
  std::vector<QueryTerm> Query(const std::vector<std::string>& words) const;
  /// What `text` holds of `query` (from Query).
  LexicalMatch Match(const std::vector<QueryTerm>& query, std::string_view text) const;

 private:
  TermStatistics() = default;

  std::unordered_map<std::string, Frequency> document_frequency_;
  size_t documents_ = 0;
  double average_words_ = 0;   // words per document, stop words left out
  double average_tokens_ = 0;  // tokens per document, as FTS5 counts them
};

/// The words of a query (QueryTerms) FTS5 is asked for: those some document holds (by `stats`),
/// rarest first, until the documents holding them add up to `max_postings`; the rarest is always
/// taken. They come back in the query's order. A word in most documents costs the search the most
/// and weighs the least in a score.
std::vector<std::string> SearchedWords(const std::vector<std::string>& words,
                                       const TermStatistics& stats, size_t max_postings);

/// An in-memory character-trigram TF-IDF index (cosine over sublinear tf × idf weights) over
/// documents with one or more texts each; a document's score is the best of its texts. Built once,
/// then read-only: Search is thread-safe.
class TrigramIndex {
 public:
  /// One document found.
  struct Hit {
    size_t doc = 0;    ///< index into the documents given to Build
    double score = 0;  ///< cosine similarity, in (0, 1]
  };

  /// `docs[i]` holds the texts of document i.
  static std::unique_ptr<TrigramIndex> Build(const std::vector<std::vector<std::string>>& docs);
  virtual ~TrigramIndex() = default;

  /// The best `k` documents for `text` with a score above 0, best first (ties: lower doc first).
  virtual std::vector<Hit> Search(std::string_view text, size_t k) const = 0;
  /// How many documents the index holds.
  virtual size_t size() const = 0;
};

}  // namespace mend::memory
