#include "bench/lessonrecall_bm25.h"

#include <sqlite3.h>

#include <algorithm>
#include <set>

namespace mend::lessonrecall {
namespace {

// The baseline's stop list, part of the evaluation's definition (entries with an apostrophe can
// never equal a term and are kept only so the list reads like the original).
const std::set<std::string>& StopWords() {
  static const std::set<std::string> kStop = {
      "a",       "about",   "above",   "after",  "again",   "against", "all",       "am",
      "an",      "and",     "any",     "are",    "aren't",  "as",      "at",        "be",
      "because", "been",    "before",  "being",  "below",   "between", "both",      "but",
      "by",      "can",     "cannot",  "could",  "did",     "didn't",  "do",        "does",
      "doesn't", "doing",   "don't",   "down",   "during",  "each",    "few",       "for",
      "from",    "further", "had",     "has",    "have",    "having",  "he",        "her",
      "here",    "hers",    "herself", "him",    "himself", "his",     "how",       "i",
      "i'm",     "if",      "in",      "into",   "is",      "isn't",   "it",        "it's",
      "its",     "itself",  "just",    "let",    "me",      "more",    "most",      "my",
      "myself",  "no",      "nor",     "not",    "now",     "of",      "off",       "on",
      "once",    "only",    "or",      "other",  "ought",   "our",     "ours",      "ourselves",
      "out",     "over",    "own",     "same",   "she",     "should",  "so",        "some",
      "such",    "than",    "that",    "the",    "their",   "theirs",  "them",      "themselves",
      "then",    "there",   "these",   "they",   "this",    "those",   "through",   "to",
      "too",     "under",   "until",   "up",     "very",    "was",     "we",        "were",
      "what",    "when",    "where",   "which",  "while",   "who",     "whom",      "why",
      "will",    "with",    "would",   "you",    "your",    "yours",   "yourself",  "yourselves",
      "also",    "get",     "got",     "make",   "made",    "use",     "using",     "used",
      "want",    "need",    "needs",   "please", "can't",   "won't",   "shouldn't", "i'd",
      "i'll",    "i've",    "we'd",    "we'll",  "we're",   "we've",   "you'd",     "you'll",
      "you're",  "you've",  "it'll",   "that's", "there's", "here's",  "what's",    "let's",
      "via",     "per"};
  return kStop;
}

bool IsTermChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

Status SqliteError(sqlite3* db, std::string_view what) {
  return InternalError(std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

std::vector<std::string> QueryTerms(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  std::vector<std::string> out;
  size_t i = 0;
  while (i < lower.size()) {
    if (!IsTermChar(lower[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < lower.size() && IsTermChar(lower[j])) ++j;
    std::string term = lower.substr(i, j - i);
    i = j;
    if (term.size() < 2 || StopWords().count(term) > 0) continue;
    if (std::find(out.begin(), out.end(), term) == out.end()) out.push_back(std::move(term));
  }
  return out;
}

struct Bm25Baseline::Db {
  sqlite3* db = nullptr;
  sqlite3_stmt* search = nullptr;
  ~Db() {
    sqlite3_finalize(search);
    sqlite3_close(db);
  }
};

Bm25Baseline::Bm25Baseline(std::unique_ptr<Db> db) : db_(std::move(db)) {}
Bm25Baseline::~Bm25Baseline() = default;

Result<std::unique_ptr<Bm25Baseline>> Bm25Baseline::Build(const std::vector<IndexedDoc>& docs) {
  auto db = std::make_unique<Db>();
  if (sqlite3_open(":memory:", &db->db) != SQLITE_OK) return SqliteError(db->db, "open");
  const char* kSchema =
      "CREATE VIRTUAL TABLE facts USING fts5(fid UNINDEXED, content, tags); BEGIN;";
  if (sqlite3_exec(db->db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return SqliteError(db->db, "create the FTS5 table");
  }
  sqlite3_stmt* insert = nullptr;
  if (sqlite3_prepare_v2(db->db, "INSERT INTO facts (fid, content, tags) VALUES (?, ?, ?)", -1,
                         &insert, nullptr) != SQLITE_OK) {
    return SqliteError(db->db, "prepare insert");
  }
  for (const IndexedDoc& doc : docs) {
    std::string tags;
    for (const std::string& t : doc.tags) tags += (tags.empty() ? "" : " ") + t;
    sqlite3_bind_text(insert, 1, doc.id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 2, doc.content.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 3, tags.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(insert) != SQLITE_DONE) {
      sqlite3_finalize(insert);
      return SqliteError(db->db, "insert " + doc.id);
    }
    sqlite3_reset(insert);
  }
  sqlite3_finalize(insert);
  if (sqlite3_exec(db->db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return SqliteError(db->db, "commit");
  }
  if (sqlite3_prepare_v2(db->db,
                         "SELECT fid, bm25(facts) FROM facts WHERE facts MATCH ? "
                         "ORDER BY bm25(facts) LIMIT ?",
                         -1, &db->search, nullptr) != SQLITE_OK) {
    return SqliteError(db->db, "prepare search");
  }
  return std::unique_ptr<Bm25Baseline>(new Bm25Baseline(std::move(db)));
}

Result<std::vector<Hit>> Bm25Baseline::Search(std::string_view text, int k) {
  std::vector<Hit> hits;
  std::string query;
  for (const std::string& term : QueryTerms(text)) {
    query += (query.empty() ? "\"" : " OR \"") + term + "\"";
  }
  if (query.empty()) return hits;
  sqlite3_stmt* stmt = db_->search;
  sqlite3_reset(stmt);
  sqlite3_bind_text(stmt, 1, query.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(stmt, 2, k);
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const auto* id = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    hits.push_back({id ? id : "", -sqlite3_column_double(stmt, 1)});
  }
  if (rc != SQLITE_DONE) return SqliteError(db_->db, "search");
  return hits;
}

std::vector<Hit> RankByTags(const std::vector<IndexedDoc>& docs, std::string_view text, size_t k) {
  const std::vector<std::string> terms = QueryTerms(text);
  std::vector<Hit> hits;
  for (const IndexedDoc& doc : docs) {
    int matches = 0;
    for (const std::string& term : terms) {
      matches += std::find(doc.tags.begin(), doc.tags.end(), term) != doc.tags.end();
    }
    if (matches > 0) hits.push_back({doc.id, static_cast<double>(matches)});
  }
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
  if (hits.size() > k) hits.resize(k);
  return hits;
}

}  // namespace mend::lessonrecall
