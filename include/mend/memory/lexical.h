#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mend::memory {

// Search terms of a free text: maximal runs of ASCII letters and digits and non-ASCII bytes (so
// UTF-8 words stay whole), ASCII lower-cased; stop words and one-character terms dropped,
// duplicates removed, in order of first appearance, at most `max_terms` (0 = no limit).
std::vector<std::string> QueryTerms(std::string_view text, size_t max_terms = 0);

// Whether `term` (lower-case) is an English stop word.
bool IsStopWord(std::string_view term);

// An FTS5 MATCH expression that ORs the terms, each quoted as a string (embedded quotes doubled),
// so no user text can inject FTS5 syntax (NEAR, *, column filters, parentheses). "" for no terms.
std::string BuildFtsQuery(const std::vector<std::string>& terms);

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
