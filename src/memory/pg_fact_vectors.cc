// PgFactStore: the vectors of facts, per embedding model, and what they cover.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "memory/fact_rows.h"
#include "memory/fact_writes.h"
#include "memory/pg_fact_store.h"

namespace mend::memory::internal {
namespace {

using db::PgParam;
using db::PgResult;
using db::PgTextArray;

constexpr char kSnapshot[] = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
// A batch of vectors in one statement: their facts' ids, parts and dimensions as arrays, the
// vectors one after another in one bytea ($4), each found by its start and length there. Returns
// the ids of the facts that exist (a vector of another fact is not stored). One (id, part) appears
// once: an upsert may not change a row twice.
constexpr char kPutVectors[] =
    "WITH given AS (SELECT f.rowid, f.id, g.part, g.dimension, g.start, g.bytes "
    "FROM unnest($1::text[], $2::int[], $3::int[], $5::int[], $6::int[]) "
    "AS g(id, part, dimension, start, bytes) JOIN facts f ON f.id = g.id), "
    "put AS (INSERT INTO fact_vectors (fact_rowid, part, model, dimension, vector) "
    "SELECT rowid, part, $7, dimension, substring($4::bytea FROM start FOR bytes) FROM given "
    "ORDER BY rowid, part ON CONFLICT (fact_rowid, part, model) DO UPDATE SET "
    "dimension = excluded.dimension, vector = excluded.vector) "
    "SELECT DISTINCT id FROM given";
constexpr char kVectors[] =
    "SELECT f.id, v.part, v.vector, f.workspace FROM fact_vectors v JOIN facts f "
    "ON f.rowid = v.fact_rowid "
    "WHERE v.model = $1 AND f.superseded_by IS NULL ORDER BY f.rowid, v.part";
// Active facts with fewer vectors for the model than parts (content + one per episode), and the
// parts they have.
constexpr char kMissingFrom[] =
    "SELECT f.rowid, f.id, f.content, f.tags, f.episodes, have.parts FROM facts f "
    "LEFT JOIN LATERAL (SELECT count(*) FILTER (WHERE v.part <= "
    "json_array_length(f.episodes::json)) AS n, string_agg(v.part::text, ',') AS parts "
    "FROM fact_vectors v WHERE v.fact_rowid = f.rowid AND v.model = $1) have ON true "
    "WHERE f.superseded_by IS NULL AND f.rowid >= $3 "
    "AND have.n < 1 + json_array_length(f.episodes::json) ORDER BY f.rowid LIMIT $2";
constexpr char kMissingOf[] =
    "SELECT f.rowid, f.id, f.content, f.tags, f.episodes, "
    "(SELECT string_agg(v.part::text, ',') FROM fact_vectors v WHERE v.fact_rowid = f.rowid "
    "AND v.model = $1) FROM facts f WHERE f.id = ANY($2::text[]) AND f.superseded_by IS NULL";
constexpr char kModels[] =
    "SELECT v.model, max(v.dimension) FROM fact_vectors v JOIN facts f ON f.rowid = v.fact_rowid "
    "WHERE f.superseded_by IS NULL GROUP BY v.model";
constexpr char kCovered[] =
    "SELECT count(*), count(*) FILTER (WHERE (SELECT count(*) FROM fact_vectors v "
    "WHERE v.fact_rowid = f.rowid AND v.model = $1 AND v.part <= "
    "json_array_length(f.episodes::json)) >= 1 + json_array_length(f.episodes::json)) "
    "FROM facts f WHERE f.superseded_by IS NULL";
constexpr char kCountFacts[] =
    "SELECT count(*) FILTER (WHERE superseded_by IS NULL), "
    "count(*) FILTER (WHERE superseded_by IS NOT NULL) FROM facts";
constexpr char kCategories[] =
    "SELECT category, count(*) AS n FROM facts WHERE superseded_by IS NULL GROUP BY category "
    "ORDER BY n DESC, category COLLATE \"C\"";

// Appends the missing parts of the fact on row `r` of `res` (columns: rowid, id, content, tags,
// episodes, the parts with vectors), while `out` holds fewer than `limit`.
Status AppendRow(const PgResult& res, int r, size_t limit, std::vector<EmbeddingWork>& out) {
  const std::string have = res.IsNull(r, 5) ? "" : res.Text(r, 5);
  MEND_ASSIGN_OR_RETURN(std::vector<Episode> episodes, DecodeEpisodes(res.Text(r, 4)));
  AppendMissingParts(
      res.Text(r, 1), res.Int(r, 0).value_or(0), res.Text(r, 2), res.Text(r, 3), episodes,
      [&](int part) { return PartListHas(have, part); }, limit, out);
  return OkStatus();
}

// kPutVectors' parameters for `vectors`. Of vectors for one part of one fact, the last is stored,
// as one upsert after another would leave it.
std::vector<PgParam> VectorBatch(const std::vector<FactVector>& vectors,
                                 const std::string& model_id) {
  std::map<std::pair<std::string, int>, size_t> last;  // id and part -> index in `vectors`
  for (size_t i = 0; i < vectors.size(); ++i) last[{vectors[i].id, vectors[i].part}] = i;
  std::vector<std::string> ids, parts, dimensions, starts, lengths;
  std::string blob;
  for (size_t i = 0; i < vectors.size(); ++i) {
    const FactVector& v = vectors[i];
    if (last[{v.id, v.part}] != i) continue;
    const std::string bytes = EncodeVector(v.vector);
    ids.push_back(v.id);
    parts.push_back(std::to_string(v.part));
    dimensions.push_back(std::to_string(v.vector.size()));
    starts.push_back(std::to_string(blob.size() + 1));  // substring counts from 1
    lengths.push_back(std::to_string(bytes.size()));
    blob += bytes;
  }
  return {PgParam::Text(PgTextArray(ids)),
          PgParam::Text(PgTextArray(parts)),
          PgParam::Text(PgTextArray(dimensions)),
          PgParam::Bytes(blob),
          PgParam::Text(PgTextArray(starts)),
          PgParam::Text(PgTextArray(lengths)),
          PgParam::Text(model_id)};
}

}  // namespace

Result<int64_t> PgFactStore::PutEmbeddings(const std::vector<FactVector>& vectors,
                                           const std::string& model_id) {
  MEND_RETURN_IF_ERROR(CheckVectors(vectors));
  int64_t stored = 0;
  if (vectors.empty()) return stored;
  const std::vector<PgParam> params = VectorBatch(vectors, model_id);
  MEND_RETURN_IF_ERROR(db::PgTransact(pool_, "BEGIN", [&](PgConn& conn) -> Status {
    stored = 0;
    MEND_ASSIGN_OR_RETURN(PgResult found, conn.Exec(kPutVectors, params, PgConn::Plan::kPrepared));
    // Every vector of a fact that exists counts as stored, a repeated one too.
    std::unordered_set<std::string> existing;
    for (int r = 0; r < found.rows(); ++r) existing.insert(found.Text(r, 0));
    for (const FactVector& v : vectors) stored += existing.contains(v.id) ? 1 : 0;
    if (stored == 0) return OkStatus();
    return Bump(conn, "memory.vector_generation");
  }));
  return stored;
}

Result<std::vector<FactVector>> PgFactStore::Embeddings(const std::string& model_id) {
  std::vector<FactVector> out;
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    out.clear();
    MEND_ASSIGN_OR_RETURN(PgResult res,
                          conn.Exec(kVectors, {PgParam::Text(model_id)}, PgConn::Plan::kPrepared));
    out.reserve(static_cast<size_t>(res.rows()));
    for (int r = 0; r < res.rows(); ++r) {
      std::optional<std::string> blob = res.Bytes(r, 2);
      if (!blob) return DataLossError("an unreadable vector of fact " + res.Text(r, 0));
      out.push_back(FactVector{res.Text(r, 0), static_cast<int>(res.Int(r, 1).value_or(0)),
                               DecodeVector(*blob), res.Text(r, 3)});
    }
    return OkStatus();
  }));
  return out;
}

Result<std::vector<EmbeddingWork>> PgFactStore::MissingEmbeddings(const std::string& model_id,
                                                                  size_t limit, int64_t from) {
  std::vector<EmbeddingWork> out;
  if (limit == 0) return out;
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    out.clear();
    // Every fact listed has at least one missing part, so `limit` facts are enough.
    MEND_ASSIGN_OR_RETURN(
        PgResult res, conn.Exec(kMissingFrom,
                                {PgParam::Text(model_id), PgParam::Int(static_cast<int64_t>(limit)),
                                 PgParam::Int(from)},
                                PgConn::Plan::kPrepared));
    for (int r = 0; r < res.rows() && out.size() < limit; ++r) {
      MEND_RETURN_IF_ERROR(AppendRow(res, r, limit, out));
    }
    return OkStatus();
  }));
  return out;
}

Result<std::vector<EmbeddingWork>> PgFactStore::MissingEmbeddingsOf(
    const std::string& model_id, const std::vector<std::string>& ids) {
  std::vector<EmbeddingWork> out;
  if (ids.empty()) return out;
  MEND_RETURN_IF_ERROR(ReadOne([&](PgConn& conn) -> Status {
    out.clear();
    MEND_ASSIGN_OR_RETURN(
        PgResult res,
        conn.Exec(kMissingOf, {PgParam::Text(model_id), PgParam::Text(PgTextArray(ids))},
                  PgConn::Plan::kPrepared));
    std::unordered_map<std::string, std::vector<EmbeddingWork>> by_id;
    for (int r = 0; r < res.rows(); ++r) {
      std::vector<EmbeddingWork> parts;
      MEND_RETURN_IF_ERROR(AppendRow(res, r, SIZE_MAX, parts));
      by_id[res.Text(r, 1)] = std::move(parts);
    }
    for (const std::string& id : ids) {
      auto it = by_id.find(id);
      if (it == by_id.end()) continue;
      for (EmbeddingWork& w : it->second) out.push_back(std::move(w));
      by_id.erase(it);  // a repeated id is listed once
    }
    return OkStatus();
  }));
  return out;
}

Result<std::vector<EmbeddingCoverage>> PgFactStore::Coverage(const std::string& model_id) {
  std::vector<EmbeddingCoverage> out;
  MEND_RETURN_IF_ERROR(db::PgTransact(pool_, kSnapshot, [&](PgConn& conn) -> Status {
    out.clear();
    MEND_ASSIGN_OR_RETURN(PgResult models, conn.Exec(kModels, {}, PgConn::Plan::kPrepared));
    bool listed = model_id.empty();
    for (int r = 0; r < models.rows(); ++r) {
      out.push_back(EmbeddingCoverage{models.Text(r, 0), 0, 0,
                                      static_cast<int>(models.Int(r, 1).value_or(0))});
      listed = listed || out.back().model_id == model_id;
    }
    if (!listed) out.push_back(EmbeddingCoverage{model_id, 0, 0, 0});
    std::sort(out.begin(), out.end(), [](const EmbeddingCoverage& a, const EmbeddingCoverage& b) {
      return a.model_id < b.model_id;
    });
    for (EmbeddingCoverage& c : out) {
      MEND_ASSIGN_OR_RETURN(
          PgResult res, conn.Exec(kCovered, {PgParam::Text(c.model_id)}, PgConn::Plan::kPrepared));
      c.covered = res.Int(0, 1).value_or(0);
      c.uncovered = res.Int(0, 0).value_or(0) - c.covered;
    }
    return OkStatus();
  }));
  return out;
}

Result<FactCounts> PgFactStore::CountFacts() {
  FactCounts counts;
  MEND_RETURN_IF_ERROR(db::PgTransact(pool_, kSnapshot, [&](PgConn& conn) -> Status {
    counts = FactCounts{};
    MEND_ASSIGN_OR_RETURN(PgResult totals, conn.Exec(kCountFacts, {}, PgConn::Plan::kPrepared));
    counts.active = totals.Int(0, 0).value_or(0);
    counts.superseded = totals.Int(0, 1).value_or(0);
    MEND_ASSIGN_OR_RETURN(PgResult categories, conn.Exec(kCategories, {}, PgConn::Plan::kPrepared));
    for (int r = 0; r < categories.rows(); ++r) {
      counts.categories.emplace_back(categories.Text(r, 0), categories.Int(r, 1).value_or(0));
    }
    return OkStatus();
  }));
  return counts;
}

}  // namespace mend::memory::internal
