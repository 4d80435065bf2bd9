#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memory/fact_rows.h"
#include "memory/fact_writes.h"
#include "memory/sqlite_fact_store.h"
#include "mend/base/utf8.h"

namespace mend::memory::internal {
namespace {

using db::SqliteConn;
using db::SqliteStmt;

// A word's facts, rowids only, in rowid order: no bm25(), whose work for every matching fact (its
// length looked up, every phrase of the query walked) was most of a retrieval's time once a query
// matched thousands of facts. kOccurrences reads a term's instances from facts_fts_instances, the
// fts5vocab table SqliteFactStore::Init creates on its connection, one row per occurrence, so
// their count per fact is the term's frequency; kPostings is for words FTS5 cuts otherwise.
constexpr char kOccurrences[] = "SELECT doc FROM temp.facts_fts_instances WHERE term = ?1";
constexpr char kPostings[] = "SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?1";
// A fact's length in tokens, per column, as FTS5 keeps it for bm25().
constexpr char kLength[] = "SELECT sz FROM facts_fts_docsize WHERE id = ?1";
constexpr char kHit[] =
    "SELECT id, content, tags, provenance FROM facts WHERE rowid = ?1 AND superseded_by IS NULL "
    "AND (?2 = '' OR workspace = '' OR workspace = ?2)";
constexpr char kStem[] = "SELECT words, tokens FROM fact_terms WHERE stem = ?1";
constexpr char kTotals[] =
    "SELECT key, value FROM meta WHERE key IN ('memory.documents', 'memory.words', "
    "'memory.tokens')";
constexpr char kTagKeyCount[] = "SELECT count(*) FROM fact_tag_keys WHERE key = ?1";
constexpr char kTagKeyFacts[] =
    "SELECT fact_id, fact_rowid FROM fact_tag_keys WHERE key = ?1 "
    "AND (?2 = '' OR workspace = '' OR workspace = ?2) ORDER BY fact_rowid";
constexpr char kGeneration[] = "SELECT value FROM meta WHERE key = 'memory.generation'";
constexpr char kVectorGeneration[] =
    "SELECT value FROM meta WHERE key = 'memory.vector_generation'";
constexpr char kCount[] = "SELECT count(*) FROM facts WHERE superseded_by IS NULL";
constexpr char kInjected[] = "SELECT fact_id FROM fact_injections WHERE run_id = ?1 ORDER BY rowid";
constexpr char kRecordInjection[] =
    "INSERT OR IGNORE INTO fact_injections (run_id, fact_id, at, score) VALUES (?1, ?2, ?3, ?4)";
// Columns: run_id, fact_id, at, score, completed (NULL while the run's outcome is not known).
constexpr char kRunInjections[] =
    "SELECT i.run_id, i.fact_id, i.at, i.score, o.completed FROM fact_injections i "
    "LEFT JOIN fact_run_outcomes o ON o.run_id = i.run_id WHERE i.run_id = ?1 ORDER BY i.rowid";
constexpr char kFactInjections[] =
    "SELECT i.run_id, i.fact_id, i.at, i.score, o.completed FROM fact_injections i "
    "LEFT JOIN fact_run_outcomes o ON o.run_id = i.run_id WHERE i.fact_id = ?1 "
    "ORDER BY i.at DESC, i.rowid DESC LIMIT ?2";
constexpr char kTouch[] =
    "UPDATE facts SET access_count = access_count + 1, last_accessed = ?2 WHERE id = ?1";
constexpr char kRecordOutcome[] =
    "INSERT OR IGNORE INTO fact_run_outcomes (run_id, completed, at) VALUES (?1, ?2, ?3)";
constexpr char kHelped[] =
    "UPDATE facts SET helped = helped + 1 WHERE id IN "
    "(SELECT fact_id FROM fact_injections WHERE run_id = ?1)";
constexpr char kHurt[] =
    "UPDATE facts SET hurt = hurt + 1 WHERE id IN "
    "(SELECT fact_id FROM fact_injections WHERE run_id = ?1)";

// FTS5's bm25() constants (TermStatistics uses the same).
constexpr double kK1 = 1.2;
constexpr double kB = 0.75;
// Facts whose lengths are read, per hit asked for. With four, the retriever's top 10 at 100k facts
// (bench/memory_bench.cc) held 98.6 % of the facts it held with bm25() ranking every match; with
// three 97.4 %, with two 94.3 %.
constexpr size_t kLengthsPerHit = 4;

// One fact holding one of the words, and how often.
struct Posting {
  int64_t rowid = 0;
  uint32_t word = 0;  // index into the words' weights
  uint32_t frequency = 1;
};

// A fact holding some of the words: its postings [begin, end) and its score.
struct Candidate {
  int64_t rowid = 0;
  double score = 0;
  size_t begin = 0;
  size_t end = 0;
};

// Whether FTS5 indexes `word` (a QueryTerms word, lower-case) as the one term PorterStem(word):
// ASCII letters and digits only. Other words (non-ASCII letters, which FTS5 folds and strips of
// diacritics, or separators inside a word) are searched as FTS5 phrases.
bool IsPlainWord(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

// The sum of a facts_fts_docsize blob: one SQLite varint per column, its length in tokens.
int64_t DocumentLength(std::string_view sizes) {
  int64_t total = 0;
  uint64_t value = 0;
  for (char byte : sizes) {
    const auto c = static_cast<unsigned char>(byte);
    value = value << 7 | (c & 0x7f);
    if ((c & 0x80) == 0) {
      total += static_cast<int64_t>(value);
      value = 0;
    }
  }
  return total;
}

// BM25 as bm25() computes it, of a fact of `length` tokens holding `postings`.
double Bm25(const Posting* begin, const Posting* end, const std::vector<double>& idf, double length,
            double average) {
  const double norm = kK1 * (1 - kB + kB * length / (average > 0 ? average : 1));
  double score = 0;
  for (const Posting* p = begin; p < end; ++p) {
    const double tf = p->frequency;
    score += idf[p->word] * tf * (kK1 + 1) / (tf + norm);
  }
  return score;
}

// Appends the facts holding `word` (rowid, frequency; by rowid) to `out`.
Status ReadPostings(SqliteConn& db, const std::string& word,
                    std::vector<std::pair<int64_t, uint32_t>>& out) {
  if (IsPlainWord(word)) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db.Prepare(kOccurrences));
    stmt.BindText(1, PorterStem(word));
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
      if (!more) return OkStatus();
      const int64_t rowid = stmt.Int(0);
      if (!out.empty() && out.back().first == rowid) {
        ++out.back().second;
      } else {
        out.push_back({rowid, 1});
      }
    }
  }
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db.Prepare(kPostings));
  stmt.BindText(1, BuildFtsQuery({word}));
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
    if (!more) return OkStatus();
    out.push_back({stmt.Int(0), 1});
  }
}

// Best first, the best first among equals the fact added first.
bool Better(const Candidate& a, const Candidate& b) {
  return a.score != b.score ? a.score > b.score : a.rowid < b.rowid;
}

// The number of active facts and their words and tokens in all, as the store keeps them.
Status ReadTotals(SqliteConn& db, const std::string& path, TermStatistics::Counts& counts) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt totals, db.Prepare(kTotals));
  int found = 0;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool more, totals.Step());
    if (!more) break;
    const std::string key = totals.Text(0);
    const int64_t value = std::max<int64_t>(0, totals.Int(1));
    if (key == "memory.documents") counts.documents = static_cast<size_t>(value);
    if (key == "memory.words") counts.words = static_cast<uint64_t>(value);
    if (key == "memory.tokens") counts.tokens = static_cast<uint64_t>(value);
    ++found;
  }
  if (found != 3) return DataLossError(path + ": memory term statistics are missing");
  return OkStatus();
}

// The candidates: every fact holding a word, from the words' postings, scored by BM25 as bm25()
// computes it (each word's IDF from the facts its list holds, floored as TermStatistics::FtsIdf
// floors it) as if the fact were of average length; then the best kLengthsPerHit × limit with
// their own lengths. Best first; those past that shortlist are left out.
Result<std::vector<Candidate>> RankCandidates(SqliteConn& db, TermStatistics::Counts counts,
                                              const std::vector<std::string>& words, size_t limit) {
  const double average = counts.documents > 0 ? static_cast<double>(counts.tokens) /
                                                    static_cast<double>(counts.documents)
                                              : 1;
  const std::unique_ptr<TermStatistics> stats = TermStatistics::FromCounts(std::move(counts));
  std::vector<Posting> postings;
  std::vector<double> idf;
  std::vector<std::pair<int64_t, uint32_t>> facts;
  for (const std::string& word : words) {
    facts.clear();
    MEND_RETURN_IF_ERROR(ReadPostings(db, word, facts));
    const auto index = static_cast<uint32_t>(idf.size());
    idf.push_back(stats->FtsIdf(facts.size()));
    // Each list comes in rowid order; merged as they come, a fact's postings end up side by side,
    // in the words' order.
    const size_t before = postings.size();
    for (const auto& [rowid, frequency] : facts) postings.push_back({rowid, index, frequency});
    const auto by_rowid = [](const Posting& a, const Posting& b) { return a.rowid < b.rowid; };
    const auto middle = postings.begin() + static_cast<ptrdiff_t>(before);
    if (!std::is_sorted(middle, postings.end(), by_rowid))
      std::sort(middle, postings.end(), by_rowid);
    std::inplace_merge(postings.begin(), middle, postings.end(), by_rowid);
  }
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < postings.size();) {
    size_t end = i + 1;
    while (end < postings.size() && postings[end].rowid == postings[i].rowid) ++end;
    candidates.push_back(
        {postings[i].rowid, Bm25(&postings[i], &postings[end], idf, average, average), i, end});
    i = end;
  }
  const size_t shortlist = std::min(candidates.size(), kLengthsPerHit * limit);
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(shortlist),
                    candidates.end(), Better);
  candidates.resize(shortlist);
  for (Candidate& c : candidates) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db.Prepare(kLength));
    stmt.Bind(1, c.rowid);
    MEND_ASSIGN_OR_RETURN(bool found, stmt.Step());
    const int64_t length = found ? DocumentLength(stmt.Text(0)) : 0;
    // A fact FTS5 holds no length for keeps the average's score.
    if (length > 0) {
      c.score =
          Bm25(&postings[c.begin], &postings[c.end], idf, static_cast<double>(length), average);
    }
  }
  std::sort(candidates.begin(), candidates.end(), Better);
  return candidates;
}

}  // namespace

Result<std::vector<LexicalHit>> SqliteFactStore::SearchLexical(
    const std::vector<std::string>& words, size_t limit, const std::string& workspace) {
  std::vector<LexicalHit> hits;
  if (words.empty() || limit == 0) return hits;
  std::lock_guard<std::mutex> lock(mu_);
  // One read transaction: the postings, lengths and rows describe the same facts.
  MEND_RETURN_IF_ERROR(db_->InTransaction(SqliteConn::TxKind::kRead, [&]() -> Status {
    hits.clear();
    TermStatistics::Counts counts;
    MEND_RETURN_IF_ERROR(ReadTotals(*db_, path_, counts));
    MEND_ASSIGN_OR_RETURN(std::vector<Candidate> candidates,
                          RankCandidates(*db_, std::move(counts), words, limit));
    // Superseded and out-of-scope facts are skipped as they are met, within as many rows as the
    // FTS5 query of before read.
    const size_t reads = std::min(candidates.size(), 2 * limit + 16);
    for (size_t i = 0; i < reads && hits.size() < limit; ++i) {
      MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kHit));
      stmt.Bind(1, candidates[i].rowid).BindText(2, workspace);
      MEND_ASSIGN_OR_RETURN(bool found, stmt.Step());
      if (!found) continue;
      // The three columns as FTS5 indexes them, one text (LexicalHit::text).
      LexicalHit hit{stmt.Text(0), candidates[i].score, stmt.Text(1)};
      hit.content_bytes = hit.text.size();
      hit.text += '\n';
      hit.text += stmt.Text(2);
      hit.tags_bytes = hit.text.size() - hit.content_bytes - 1;
      hit.text += '\n';
      hit.text += stmt.Text(3);
      hits.push_back(std::move(hit));
    }
    return OkStatus();
  }));
  return hits;
}

Result<TermStatistics::Counts> SqliteFactStore::CountTerms(const std::vector<std::string>& stems) {
  std::lock_guard<std::mutex> lock(mu_);
  TermStatistics::Counts counts;
  // One read transaction, so the totals and the frequencies describe the same facts.
  MEND_RETURN_IF_ERROR(db_->InTransaction(SqliteConn::TxKind::kRead, [&]() -> Status {
    MEND_RETURN_IF_ERROR(ReadTotals(*db_, path_, counts));
    for (const std::string& stem : stems) {
      MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kStem));
      stmt.BindText(1, stem);
      MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
      if (!more) continue;
      counts.stems[stem] = {static_cast<uint32_t>(std::max<int64_t>(0, stmt.Int(0))),
                            static_cast<uint32_t>(std::max<int64_t>(0, stmt.Int(1)))};
    }
    return OkStatus();
  }));
  return counts;
}

Result<std::vector<TagMatch>> SqliteFactStore::MatchTags(const std::vector<std::string>& keys,
                                                         const std::string& workspace,
                                                         size_t max_postings) {
  std::vector<TagMatch> out;
  std::lock_guard<std::mutex> lock(mu_);
  MEND_RETURN_IF_ERROR(db_->InTransaction(SqliteConn::TxKind::kRead, [&]() -> Status {
    out.clear();
    for (const std::string& key : keys) {
      MEND_ASSIGN_OR_RETURN(SqliteStmt count, db_->Prepare(kTagKeyCount));
      count.BindText(1, key);
      MEND_ASSIGN_OR_RETURN(bool row, count.Step());
      out.push_back(TagMatch{key, row ? count.Int(0) : 0, {}});
    }
    return ReadTagPostings(out, max_postings, [&](TagMatch& match) -> Status {
      MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kTagKeyFacts));
      stmt.BindText(1, match.key).BindText(2, workspace);
      while (true) {
        MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
        if (!more) break;
        match.ids.push_back(stmt.Text(0));
        match.rowids.push_back(stmt.Int(1));
      }
      return OkStatus();
    });
  }));
  return out;
}

Result<int64_t> SqliteFactStore::MetaIntLocked(const char* sql) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(sql));
  MEND_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return DataLossError(path_ + ": memory generation counter is missing");
  return stmt.Int(0);
}

Result<int64_t> SqliteFactStore::Generation() {
  std::lock_guard<std::mutex> lock(mu_);
  return MetaIntLocked(kGeneration);
}

Result<int64_t> SqliteFactStore::VectorGeneration() {
  std::lock_guard<std::mutex> lock(mu_);
  return MetaIntLocked(kVectorGeneration);
}

Result<int64_t> SqliteFactStore::Count() {
  std::lock_guard<std::mutex> lock(mu_);
  return MetaIntLocked(kCount);
}

Status SqliteFactStore::RecordInjection(const std::string& run_id,
                                        const std::vector<InjectedFact>& facts) {
  if (facts.empty()) return OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  int64_t now = ToMillis(options_.clock->Now());
  return WriteTx([&]() -> Status {
    for (const InjectedFact& fact : facts) {
      MEND_ASSIGN_OR_RETURN(SqliteStmt insert, db_->Prepare(kRecordInjection));
      insert.BindText(1, run_id).BindText(2, fact.id).Bind(3, now);
      if (fact.score) {
        insert.BindDouble(4, *fact.score);
      } else {
        insert.BindNull(4);
      }
      MEND_RETURN_IF_ERROR(insert.Run());
      MEND_ASSIGN_OR_RETURN(SqliteStmt touch, db_->Prepare(kTouch));
      MEND_RETURN_IF_ERROR(touch.BindText(1, fact.id).Bind(2, now).Run());
    }
    return OkStatus();
  });
}

Result<std::vector<std::string>> SqliteFactStore::InjectedInto(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kInjected));
  stmt.BindText(1, run_id);
  std::vector<std::string> ids;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
    if (!more) break;
    ids.push_back(stmt.Text(0));
  }
  return ids;
}

namespace {

// Reads the rows of kRunInjections or kFactInjections.
Result<std::vector<Injection>> ReadInjections(SqliteStmt& stmt) {
  std::vector<Injection> out;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
    if (!more) break;
    Injection i{.run_id = stmt.Text(0), .fact_id = stmt.Text(1), .at = FromMillis(stmt.Int(2))};
    if (!stmt.IsNull(3)) i.score = stmt.Double(3);
    if (!stmt.IsNull(4)) i.completed = stmt.Int(4) != 0;
    out.push_back(std::move(i));
  }
  return out;
}

}  // namespace

Result<std::vector<Injection>> SqliteFactStore::InjectionsOfRun(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kRunInjections));
  stmt.BindText(1, run_id);
  return ReadInjections(stmt);
}

Result<std::vector<Injection>> SqliteFactStore::InjectionsOfFact(const std::string& fact_id,
                                                                 size_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kFactInjections));
  // SQLite reads a negative LIMIT as none.
  stmt.BindText(1, fact_id).Bind(2, limit == 0 ? -1 : static_cast<int64_t>(limit));
  return ReadInjections(stmt);
}

Status SqliteFactStore::RecordOutcome(const std::string& run_id, bool completed) {
  std::lock_guard<std::mutex> lock(mu_);
  {
    // A run that received nothing: one indexed read, no write transaction.
    MEND_ASSIGN_OR_RETURN(SqliteStmt probe, db_->Prepare(kInjected));
    probe.BindText(1, run_id);
    MEND_ASSIGN_OR_RETURN(bool any, probe.Step());
    if (!any) return OkStatus();
  }
  int64_t now = ToMillis(options_.clock->Now());
  return WriteTx([&]() -> Status {
    MEND_ASSIGN_OR_RETURN(SqliteStmt record, db_->Prepare(kRecordOutcome));
    MEND_RETURN_IF_ERROR(record.BindText(1, run_id).Bind(2, completed ? 1 : 0).Bind(3, now).Run());
    if (db_->Changes() == 0) return OkStatus();  // this run's outcome was counted already
    MEND_ASSIGN_OR_RETURN(SqliteStmt update, db_->Prepare(completed ? kHelped : kHurt));
    return update.BindText(1, run_id).Run();
  });
}

}  // namespace mend::memory::internal
