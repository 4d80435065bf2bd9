// SqliteFactStore: the vectors of facts, per embedding model, and what they cover.
#include <algorithm>
#include <cstdint>
#include <unordered_set>
#include <utility>

#include "memory/fact_rows.h"
#include "memory/fact_writes.h"
#include "memory/sqlite_fact_store.h"

namespace mend::memory::internal {
namespace {

using db::SqliteConn;
using db::SqliteStmt;

constexpr char kBumpVectorGeneration[] =
    "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'memory.vector_generation'";
constexpr char kPutVector[] =
    "INSERT OR REPLACE INTO fact_vectors (fact_rowid, part, model, dimension, vector) "
    "SELECT rowid, ?2, ?3, ?4, ?5 FROM facts WHERE id = ?1";
constexpr char kVectors[] =
    "SELECT f.id, v.part, v.vector, f.workspace FROM fact_vectors v JOIN facts f "
    "ON f.rowid = v.fact_rowid "
    "WHERE v.model = ?1 AND f.superseded_by IS NULL ORDER BY f.rowid, v.part";
// A fact has 1 + json_array_length(episodes) parts. The vectors of its parts count (one of a part
// past them, which mend never writes, would not).
constexpr char kMissingFrom[] =
    "SELECT f.rowid, f.id, f.content, f.tags, f.episodes, "
    "(SELECT group_concat(v.part) FROM fact_vectors v WHERE v.fact_rowid = f.rowid AND "
    "v.model = ?1) FROM facts f WHERE f.superseded_by IS NULL AND f.rowid >= ?3 AND "
    "(SELECT count(*) FROM fact_vectors v WHERE v.fact_rowid = f.rowid AND v.model = ?1 "
    "AND v.part <= json_array_length(f.episodes)) < 1 + json_array_length(f.episodes) "
    "ORDER BY f.rowid LIMIT ?2";
constexpr char kMissingOf[] =
    "SELECT f.rowid, f.id, f.content, f.tags, f.episodes, "
    "(SELECT group_concat(v.part) FROM fact_vectors v WHERE v.fact_rowid = f.rowid AND "
    "v.model = ?1) FROM facts f WHERE f.id = ?2 AND f.superseded_by IS NULL";
constexpr char kModels[] =
    "SELECT v.model, max(v.dimension) FROM fact_vectors v JOIN facts f ON f.rowid = v.fact_rowid "
    "WHERE f.superseded_by IS NULL GROUP BY v.model";
constexpr char kCovered[] =
    "SELECT count(*), coalesce(sum((SELECT count(*) FROM fact_vectors v "
    "WHERE v.fact_rowid = f.rowid AND v.model = ?1 AND v.part <= json_array_length(f.episodes)) "
    ">= 1 + json_array_length(f.episodes)), 0) FROM facts f WHERE f.superseded_by IS NULL";
constexpr char kCountFacts[] =
    "SELECT count(*) FILTER (WHERE superseded_by IS NULL), "
    "count(*) FILTER (WHERE superseded_by IS NOT NULL) FROM facts";
constexpr char kCategories[] =
    "SELECT category, count(*) AS n FROM facts WHERE superseded_by IS NULL GROUP BY category "
    "ORDER BY n DESC, category";

// Appends the missing parts of the fact on `stmt`'s row (columns: rowid, id, content, tags,
// episodes, the parts with vectors), while `out` holds fewer than `limit`.
Status AppendRow(SqliteStmt& stmt, size_t limit, std::vector<EmbeddingWork>& out) {
  const std::string have = stmt.IsNull(5) ? "" : stmt.Text(5);
  MEND_ASSIGN_OR_RETURN(std::vector<Episode> episodes, DecodeEpisodes(stmt.Text(4)));
  AppendMissingParts(
      stmt.Text(1), stmt.Int(0), stmt.Text(2), stmt.Text(3), episodes,
      [&](int part) { return PartListHas(have, part); }, limit, out);
  return OkStatus();
}

}  // namespace

Result<int64_t> SqliteFactStore::PutEmbeddings(const std::vector<FactVector>& vectors,
                                               const std::string& model_id) {
  MEND_RETURN_IF_ERROR(CheckVectors(vectors));
  int64_t stored = 0;
  if (vectors.empty()) return stored;
  std::lock_guard<std::mutex> lock(mu_);
  MEND_RETURN_IF_ERROR(WriteTx([&]() -> Status {
    stored = 0;
    for (const FactVector& v : vectors) {
      MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kPutVector));
      stmt.BindText(1, v.id)
          .Bind(2, v.part)
          .BindText(3, model_id)
          .Bind(4, static_cast<int64_t>(v.vector.size()))
          .BindBlob(5, EncodeVector(v.vector));
      MEND_RETURN_IF_ERROR(stmt.Run());
      stored += db_->Changes() > 0 ? 1 : 0;
    }
    if (stored == 0) return OkStatus();
    return BumpLocked(kBumpVectorGeneration);
  }));
  return stored;
}

Result<std::vector<FactVector>> SqliteFactStore::Embeddings(const std::string& model_id) {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kVectors));
  stmt.BindText(1, model_id);
  std::vector<FactVector> out;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
    if (!more) break;
    out.push_back(FactVector{stmt.Text(0), static_cast<int>(stmt.Int(1)),
                             DecodeVector(stmt.Blob(2)), stmt.Text(3)});
  }
  return out;
}

Result<std::vector<EmbeddingWork>> SqliteFactStore::MissingEmbeddings(const std::string& model_id,
                                                                      size_t limit, int64_t from) {
  std::vector<EmbeddingWork> out;
  if (limit == 0) return out;
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kMissingFrom));
  // Every fact listed has at least one missing part, so `limit` facts are enough.
  stmt.BindText(1, model_id).Bind(2, static_cast<int64_t>(limit)).Bind(3, from);
  while (out.size() < limit) {
    MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
    if (!more) break;
    MEND_RETURN_IF_ERROR(AppendRow(stmt, limit, out));
  }
  return out;
}

Result<std::vector<EmbeddingWork>> SqliteFactStore::MissingEmbeddingsOf(
    const std::string& model_id, const std::vector<std::string>& ids) {
  std::vector<EmbeddingWork> out;
  if (ids.empty()) return out;
  std::lock_guard<std::mutex> lock(mu_);
  // One read transaction, so the facts are read as of one moment.
  MEND_RETURN_IF_ERROR(db_->InTransaction(SqliteConn::TxKind::kRead, [&]() -> Status {
    out.clear();
    std::unordered_set<std::string> seen;
    for (const std::string& id : ids) {
      if (!seen.insert(id).second) continue;  // a repeated id is listed once
      MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kMissingOf));
      stmt.BindText(1, model_id).BindText(2, id);
      MEND_ASSIGN_OR_RETURN(bool found, stmt.Step());
      if (found) MEND_RETURN_IF_ERROR(AppendRow(stmt, SIZE_MAX, out));
    }
    return OkStatus();
  }));
  return out;
}

Result<std::vector<EmbeddingCoverage>> SqliteFactStore::Coverage(const std::string& model_id) {
  std::vector<EmbeddingCoverage> out;
  std::lock_guard<std::mutex> lock(mu_);
  MEND_RETURN_IF_ERROR(db_->InTransaction(SqliteConn::TxKind::kRead, [&]() -> Status {
    out.clear();
    MEND_ASSIGN_OR_RETURN(SqliteStmt models, db_->Prepare(kModels));
    bool listed = model_id.empty();
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool more, models.Step());
      if (!more) break;
      out.push_back(EmbeddingCoverage{models.Text(0), 0, 0, static_cast<int>(models.Int(1))});
      listed = listed || out.back().model_id == model_id;
    }
    if (!listed) out.push_back(EmbeddingCoverage{model_id, 0, 0, 0});
    std::sort(out.begin(), out.end(), [](const EmbeddingCoverage& a, const EmbeddingCoverage& b) {
      return a.model_id < b.model_id;
    });
    for (EmbeddingCoverage& c : out) {
      MEND_ASSIGN_OR_RETURN(SqliteStmt covered, db_->Prepare(kCovered));
      covered.BindText(1, c.model_id);
      MEND_ASSIGN_OR_RETURN(bool row, covered.Step());
      if (!row) return InternalError("no count of covered facts");
      c.covered = covered.Int(1);
      c.uncovered = covered.Int(0) - c.covered;
    }
    return OkStatus();
  }));
  return out;
}

Result<FactCounts> SqliteFactStore::CountFacts() {
  FactCounts counts;
  std::lock_guard<std::mutex> lock(mu_);
  MEND_RETURN_IF_ERROR(db_->InTransaction(SqliteConn::TxKind::kRead, [&]() -> Status {
    counts = FactCounts{};
    MEND_ASSIGN_OR_RETURN(SqliteStmt totals, db_->Prepare(kCountFacts));
    MEND_ASSIGN_OR_RETURN(bool row, totals.Step());
    if (!row) return InternalError("no count of facts");
    counts.active = totals.Int(0);
    counts.superseded = totals.Int(1);
    MEND_ASSIGN_OR_RETURN(SqliteStmt categories, db_->Prepare(kCategories));
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool more, categories.Step());
      if (!more) break;
      counts.categories.emplace_back(categories.Text(0), categories.Int(1));
    }
    return OkStatus();
  }));
  return counts;
}

}  // namespace mend::memory::internal
