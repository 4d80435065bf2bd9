#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mend/base/result.h"

// The evaluation's own reference systems, defined independently of mend's memory code so that
// mend can be compared with them in one run: raw SQLite FTS5 BM25 as the baseline script builds
// it, and a tag-matching ranker.
namespace mend::lessonrecall {

// The baseline's query terms: runs of [a-z0-9] in the ASCII-lower-cased text, at least two
// characters, not a stop word, de-duplicated in order of appearance.
std::vector<std::string> QueryTerms(std::string_view text);

struct IndexedDoc {
  std::string id;
  std::string content;
  std::vector<std::string> tags;
};

struct Hit {
  std::string id;
  double score = 0;  // -bm25(): larger is better
};

// An in-memory FTS5 table `fts5(fid UNINDEXED, content, tags)` with tags joined by spaces, queried
// with an OR of the quoted QueryTerms and ranked by bm25(). Not thread-safe.
class Bm25Baseline {
 public:
  // kInternal when SQLite or its FTS5 module fails.
  static Result<std::unique_ptr<Bm25Baseline>> Build(const std::vector<IndexedDoc>& docs);
  ~Bm25Baseline();

  // The best `k` hits; empty when the text has no query term.
  Result<std::vector<Hit>> Search(std::string_view text, int k);

 private:
  struct Db;
  explicit Bm25Baseline(std::unique_ptr<Db> db);
  std::unique_ptr<Db> db_;
};

// Ranks docs by how many distinct QueryTerms equal one of their tags (ties by id); only docs with
// at least one match, at most `k`.
std::vector<Hit> RankByTags(const std::vector<IndexedDoc>& docs, std::string_view text, size_t k);

}  // namespace mend::lessonrecall
