// PgFactStore: every read (pg_fact_store.cc holds the writes).

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "memory/fact_rows.h"
#include "memory/fact_writes.h"
#include "memory/pg_fact_store.h"
#include "mend/base/utf8.h"

namespace mend::memory::internal {
namespace {

using db::PgParam;
using db::PgResult;
using db::PgTextArray;

// ts_rank with normalisation 1 (divided by 1 + the log of the text's length) stands in for BM25:
// the retriever scores the candidates with its own BM25 afterwards, as on SQLite.
constexpr char kSearch[] =
    "SELECT f.id, m.score, f.content, f.tags, f.provenance FROM ("
    "SELECT fact_rowid, ts_rank(search, q, 1) AS score FROM fact_search, "
    "to_tsquery('english', $1) q WHERE search @@ q "
    "AND ($3 = '' OR workspace = '' OR workspace = $3) "
    "ORDER BY score DESC, fact_rowid LIMIT $2) m JOIN facts f ON f.rowid = m.fact_rowid "
    "ORDER BY m.score DESC, m.fact_rowid";
// The totals and the stems' frequencies in one statement, so they describe the same facts.
constexpr char kCounts[] =
    "SELECT key, value::bigint, 0 FROM meta WHERE key IN ('memory.documents', 'memory.words', "
    "'memory.tokens') UNION ALL "
    "SELECT stem, words, tokens FROM fact_terms WHERE stem = ANY($1::text[])";
constexpr char kTagKeyCounts[] =
    "SELECT key, facts FROM fact_tag_counts WHERE key = ANY($1::text[]) AND facts > 0";
constexpr char kTagKeyFacts[] =
    "SELECT key, fact_id, fact_rowid FROM fact_tag_keys WHERE key = ANY($1::text[]) "
    "AND ($2 = '' OR workspace = '' OR workspace = $2) ORDER BY key, fact_rowid";
constexpr char kMeta[] = "SELECT value FROM meta WHERE key = $1";
constexpr char kInjected[] = "SELECT fact_id FROM fact_injections WHERE run_id = $1 ORDER BY seq";
// Columns: run_id, fact_id, at, score, completed (NULL while the run's outcome is not known).
constexpr char kRunInjections[] =
    "SELECT i.run_id, i.fact_id, i.at, i.score, o.completed FROM fact_injections i "
    "LEFT JOIN fact_run_outcomes o ON o.run_id = i.run_id WHERE i.run_id = $1 ORDER BY i.seq";
constexpr char kFactInjections[] =
    "SELECT i.run_id, i.fact_id, i.at, i.score, o.completed FROM fact_injections i "
    "LEFT JOIN fact_run_outcomes o ON o.run_id = i.run_id WHERE i.fact_id = $1 "
    "ORDER BY i.at DESC, i.seq DESC LIMIT $2";

int64_t NonNegative(std::optional<int64_t> v) { return std::max<int64_t>(0, v.value_or(0)); }

}  // namespace

Result<Fact> PgFactStore::Get(const std::string& id) {
  std::optional<Row> row;
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(row, Find(conn, id));
    return OkStatus();
  }));
  if (!row) return NotFoundError("no fact " + id);
  return std::move(row->fact);
}

Result<std::vector<Fact>> PgFactStore::GetMany(const std::vector<std::string>& ids) {
  static const std::string sql =
      std::string("SELECT ") + kPgFactColumns + " FROM facts WHERE id = ANY($1::text[])";
  std::vector<Fact> out;
  if (ids.empty()) return out;
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(sql.c_str(), {PgParam::Text(PgTextArray(ids))},
                                                  PgConn::Plan::kPrepared));
    std::unordered_map<std::string, Fact> found;
    for (int r = 0; r < res.rows(); ++r) {
      int64_t rowid = 0;
      MEND_ASSIGN_OR_RETURN(Fact f, PgFactFromRow(res, r, &rowid));
      std::string id = f.id;
      found.emplace(std::move(id), std::move(f));
    }
    out.reserve(found.size());
    for (const std::string& id : ids) {
      auto it = found.find(id);
      if (it != found.end()) out.push_back(it->second);  // a repeated id repeats its fact
    }
    return OkStatus();
  }));
  return out;
}

Result<std::vector<Fact>> PgFactStore::List(const ListOptions& options) {
  static const std::string sql = std::string("SELECT ") + kPgFactColumns +
                                 " FROM facts WHERE ($1 OR superseded_by IS NULL) AND "
                                 "($2 = '' OR category = $2) ORDER BY created_at DESC, rowid DESC "
                                 "LIMIT $3";
  std::vector<Fact> out;
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    out.clear();
    MEND_ASSIGN_OR_RETURN(
        PgResult res,
        conn.Exec(sql.c_str(),
                  {PgParam::Text(options.include_superseded ? "true" : "false"),
                   PgParam::Text(ToLowerAscii(Trim(options.category))),
                   options.limit == 0 ? PgParam::Null()
                                      : PgParam::Int(static_cast<int64_t>(options.limit))},
                  PgConn::Plan::kPrepared));
    out.reserve(static_cast<size_t>(res.rows()));
    for (int r = 0; r < res.rows(); ++r) {
      int64_t rowid = 0;
      MEND_ASSIGN_OR_RETURN(Fact f, PgFactFromRow(res, r, &rowid));
      out.push_back(std::move(f));
    }
    return OkStatus();
  }));
  return out;
}

Result<std::vector<LexicalHit>> PgFactStore::SearchLexical(const std::vector<std::string>& words,
                                                           size_t limit,
                                                           const std::string& workspace) {
  std::vector<LexicalHit> hits;
  const std::string query = PgOrQuery(words);
  if (query.empty() || limit == 0) return hits;
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    hits.clear();
    MEND_ASSIGN_OR_RETURN(
        PgResult res, conn.Exec(kSearch,
                                {PgParam::Text(query), PgParam::Int(static_cast<int64_t>(limit)),
                                 PgParam::Text(workspace)},
                                PgConn::Plan::kPrepared));
    hits.reserve(static_cast<size_t>(res.rows()));
    for (int r = 0; r < res.rows(); ++r) {
      // The three columns searched, one text (LexicalHit::text).
      LexicalHit hit{res.Text(r, 0), std::strtod(res.Text(r, 1).c_str(), nullptr), res.Text(r, 2)};
      hit.content_bytes = hit.text.size();
      hit.text += '\n';
      hit.text += res.Text(r, 3);
      hit.tags_bytes = hit.text.size() - hit.content_bytes - 1;
      hit.text += '\n';
      hit.text += res.Text(r, 4);
      hits.push_back(std::move(hit));
    }
    return OkStatus();
  }));
  return hits;
}

Result<TermStatistics::Counts> PgFactStore::CountTerms(const std::vector<std::string>& stems) {
  TermStatistics::Counts counts;
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kCounts, {PgParam::Text(PgTextArray(stems))},
                                                  PgConn::Plan::kPrepared));
    int totals = 0;
    for (int r = 0; r < res.rows(); ++r) {
      const std::string key = res.Text(r, 0);
      const int64_t value = NonNegative(res.Int(r, 1));
      // The meta keys hold a dot; no Porter stem does.
      if (key == "memory.documents") {
        counts.documents = static_cast<size_t>(value);
      } else if (key == "memory.words") {
        counts.words = static_cast<uint64_t>(value);
      } else if (key == "memory.tokens") {
        counts.tokens = static_cast<uint64_t>(value);
      } else {
        counts.stems[key] = {static_cast<uint32_t>(value),
                             static_cast<uint32_t>(NonNegative(res.Int(r, 2)))};
        continue;
      }
      ++totals;
    }
    if (totals != 3) return DataLossError("memory term statistics are missing");
    return OkStatus();
  }));
  return counts;
}

Result<std::vector<TagMatch>> PgFactStore::MatchTags(const std::vector<std::string>& keys,
                                                     const std::string& workspace,
                                                     size_t max_postings) {
  std::vector<TagMatch> out;
  // Two statements without a transaction: a write between them can only shift which facts the
  // hint names, never make it wrong about a fact.
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    out.clear();
    for (const std::string& key : keys) out.push_back(TagMatch{key, 0, {}, {}});
    if (keys.empty()) return OkStatus();
    MEND_ASSIGN_OR_RETURN(
        PgResult counts,
        conn.Exec(kTagKeyCounts, {PgParam::Text(PgTextArray(keys))}, PgConn::Plan::kPrepared));
    for (int r = 0; r < counts.rows(); ++r) {
      const std::string key = counts.Text(r, 0);
      for (TagMatch& m : out) {
        if (m.key == key) m.facts = NonNegative(counts.Int(r, 1));
      }
    }
    // The keys within the budget, then their postings in one statement.
    std::unordered_map<std::string, TagMatch*> chosen;
    MEND_RETURN_IF_ERROR(ReadTagPostings(out, max_postings, [&](TagMatch& match) -> Status {
      chosen.emplace(match.key, &match);
      return OkStatus();
    }));
    if (chosen.empty()) return OkStatus();
    std::vector<std::string> chosen_keys;
    for (const auto& [key, match] : chosen) chosen_keys.push_back(key);
    MEND_ASSIGN_OR_RETURN(
        PgResult res,
        conn.Exec(kTagKeyFacts, {PgParam::Text(PgTextArray(chosen_keys)), PgParam::Text(workspace)},
                  PgConn::Plan::kPrepared));
    for (int r = 0; r < res.rows(); ++r) {
      auto it = chosen.find(res.Text(r, 0));
      if (it == chosen.end()) continue;
      it->second->ids.push_back(res.Text(r, 1));
      it->second->rowids.push_back(res.Int(r, 2).value_or(0));
    }
    return OkStatus();
  }));
  return out;
}

Result<int64_t> PgFactStore::MetaInt(const char* key) {
  int64_t value = 0;
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(PgResult res,
                          conn.Exec(kMeta, {PgParam::Text(key)}, PgConn::Plan::kPrepared));
    if (res.rows() == 0 || !res.Int(0, 0)) {
      return DataLossError(std::string("the memory counter ") + key + " is missing");
    }
    value = *res.Int(0, 0);
    return OkStatus();
  }));
  return value;
}

Result<int64_t> PgFactStore::Generation() { return MetaInt("memory.generation"); }

Result<int64_t> PgFactStore::VectorGeneration() { return MetaInt("memory.vector_generation"); }

// memory.documents counts the active facts: kept with every write, so no count(*) is needed.
Result<int64_t> PgFactStore::Count() { return MetaInt("memory.documents"); }

Result<std::vector<std::string>> PgFactStore::InjectedInto(const std::string& run_id) {
  std::vector<std::string> ids;
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    ids.clear();
    MEND_ASSIGN_OR_RETURN(PgResult res,
                          conn.Exec(kInjected, {PgParam::Text(run_id)}, PgConn::Plan::kPrepared));
    for (int r = 0; r < res.rows(); ++r) ids.push_back(res.Text(r, 0));
    return OkStatus();
  }));
  return ids;
}

Result<std::vector<Injection>> PgFactStore::ReadInjections(const char* sql,
                                                           const std::vector<PgParam>& params) {
  std::vector<Injection> out;
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    out.clear();
    MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(sql, params, PgConn::Plan::kPrepared));
    for (int r = 0; r < res.rows(); ++r) {
      Injection i{.run_id = res.Text(r, 0),
                  .fact_id = res.Text(r, 1),
                  .at = FromMillis(res.Int(r, 2).value_or(0))};
      if (!res.IsNull(r, 3)) i.score = std::strtod(res.Text(r, 3).c_str(), nullptr);
      if (!res.IsNull(r, 4)) i.completed = res.Text(r, 4) == "t";
      out.push_back(std::move(i));
    }
    return OkStatus();
  }));
  return out;
}

Result<std::vector<Injection>> PgFactStore::InjectionsOfRun(const std::string& run_id) {
  return ReadInjections(kRunInjections, {PgParam::Text(run_id)});
}

Result<std::vector<Injection>> PgFactStore::InjectionsOfFact(const std::string& fact_id,
                                                             size_t limit) {
  // LIMIT NULL is no limit.
  return ReadInjections(kFactInjections,
                        {PgParam::Text(fact_id),
                         limit == 0 ? PgParam::Null() : PgParam::Int(static_cast<int64_t>(limit))});
}

}  // namespace mend::memory::internal
