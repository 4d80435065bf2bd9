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

}  // namespace mend::memory::internal
