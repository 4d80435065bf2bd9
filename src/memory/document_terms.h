#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mend::memory::internal {

// One document as TermStatistics counts it: its distinct stems, each with whether a word (not a
// stop word) has it, and its words and tokens. The fact store keeps the sums of these over the
// active facts with every write, so retrieval never reads the facts to count them.
struct DocumentTerms {
  struct Stem {
    std::string stem;
    bool word = false;
  };
  std::vector<Stem> stems;  // sorted by stem
  uint64_t words = 0;
  uint64_t tokens = 0;
};

// The terms of a document made of `fields` (a fact's content, tags and provenance), cut and
// stemmed as TermStatistics::Build cuts and stems them. `stem_cache` (token → stem), when given,
// saves stemming a token twice across many documents.
DocumentTerms CountDocumentTerms(
    const std::vector<std::string_view>& fields,
    std::unordered_map<std::string, std::string>* stem_cache = nullptr);

// The keys under which the tag hint finds a tag: its words (QueryTerms) and the tag itself
// ("event-loop" → "event", "loop", "event-loop").
std::vector<std::string> TagKeys(const std::string& tag);

// Changes to the term statistics a store keeps (per stem: facts holding it in a word and in any
// token; the number of facts and their words and tokens in all), summed over the facts one write
// adds and takes away, before the store writes them.
struct TermDeltas {
  struct Delta {
    int64_t words = 0;
    int64_t tokens = 0;
  };
  // Counts an active fact's searchable text (content, tags joined by spaces, provenance text) in
  // (sign +1) or out (sign -1).
  void Count(std::string_view content, std::string_view tags, std::string_view provenance,
             int sign);

  std::unordered_map<std::string, Delta> stems;
  int64_t documents = 0;
  int64_t words = 0;
  int64_t tokens = 0;
  std::unordered_map<std::string, std::string> stem_cache;  // token -> stem, across facts
};

}  // namespace mend::memory::internal
