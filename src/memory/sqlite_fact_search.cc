#include <algorithm>
#include <charconv>
#include <utility>

#include "memory/fact_rows.h"
#include "memory/fact_writes.h"
#include "memory/sqlite_fact_store.h"
#include "mend/base/utf8.h"

namespace mend::memory::internal {
namespace {

using db::SqliteConn;
using db::SqliteStmt;

// The inner query is the plain FTS5 ranking; superseded facts are dropped afterwards, so it asks
// for a few more rows than wanted.
constexpr char kSearch[] =
    "SELECT f.id, m.score, f.content, f.tags, f.provenance FROM (SELECT rowid, bm25(facts_fts) AS "
    "score FROM facts_fts "
    "WHERE facts_fts MATCH ?1 ORDER BY score LIMIT ?2) m JOIN facts f ON f.rowid = m.rowid "
    "WHERE f.superseded_by IS NULL AND (?3 = '' OR f.workspace = '' OR f.workspace = ?3) "
    "ORDER BY m.score";
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
    "INSERT OR IGNORE INTO fact_injections (run_id, fact_id, at) VALUES (?1, ?2, ?3)";
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

}  // namespace

Result<std::vector<LexicalHit>> SqliteFactStore::SearchLexical(
    const std::vector<std::string>& words, size_t limit, const std::string& workspace) {
  std::vector<LexicalHit> hits;
  const std::string fts_query = BuildFtsQuery(words);
  if (fts_query.empty() || limit == 0) return hits;
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSearch));
  stmt.BindText(1, fts_query).Bind(2, static_cast<int64_t>(limit * 2 + 16)).BindText(3, workspace);
  while (hits.size() < limit) {
    MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
    if (!more) break;
    // The three columns as FTS5 indexes them, one text (LexicalHit::text).
    LexicalHit hit{stmt.Text(0), -stmt.Double(1), stmt.Text(2)};
    hit.content_bytes = hit.text.size();
    hit.text += '\n';
    hit.text += stmt.Text(3);
    hit.tags_bytes = hit.text.size() - hit.content_bytes - 1;
    hit.text += '\n';
    hit.text += stmt.Text(4);
    hits.push_back(std::move(hit));
  }
  return hits;
}

Result<TermStatistics::Counts> SqliteFactStore::CountTerms(const std::vector<std::string>& stems) {
  std::lock_guard<std::mutex> lock(mu_);
  TermStatistics::Counts counts;
  // One read transaction, so the totals and the frequencies describe the same facts.
  MEND_RETURN_IF_ERROR(db_->InTransaction(SqliteConn::TxKind::kRead, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(SqliteStmt totals, db_->Prepare(kTotals));
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
    if (found != 3) return DataLossError(path_ + ": memory term statistics are missing");
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
                                        const std::vector<std::string>& ids) {
  if (ids.empty()) return OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  int64_t now = ToMillis(options_.clock->Now());
  return WriteTx([&]() -> Status {
    for (const std::string& id : ids) {
      MEND_ASSIGN_OR_RETURN(SqliteStmt insert, db_->Prepare(kRecordInjection));
      MEND_RETURN_IF_ERROR(insert.BindText(1, run_id).BindText(2, id).Bind(3, now).Run());
      MEND_ASSIGN_OR_RETURN(SqliteStmt touch, db_->Prepare(kTouch));
      MEND_RETURN_IF_ERROR(touch.BindText(1, id).Bind(2, now).Run());
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
