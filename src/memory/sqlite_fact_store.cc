#include "memory/sqlite_fact_store.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>

#include "memory/fact_rows.h"
#include "memory/fact_store_sql.h"
#include "memory/fact_writes.h"
#include "mend/base/utf8.h"
#include "mend/memory/lexical.h"

namespace mend::memory {
namespace internal {
namespace {

using db::SqliteConn;
using db::SqliteStmt;

constexpr char kSelectById[] =
    "SELECT rowid, id, content, category, tags, workspace, source, confidence, created_at, "
    "last_accessed, access_count, helped, hurt, superseded_by, episodes, as_written FROM facts "
    "WHERE id = ?1";
constexpr char kSelectNear[] =
    "SELECT f.rowid, f.id, f.content, f.category, f.tags, f.workspace, f.source, f.confidence, "
    "f.created_at, f.last_accessed, f.access_count, f.helped, f.hurt, f.superseded_by, f.episodes, "
    "f.as_written "
    "FROM (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?1 ORDER BY rank LIMIT 20) m "
    "JOIN facts f ON f.rowid = m.rowid WHERE f.category = ?2 AND f.superseded_by IS NULL";
constexpr char kInsert[] =
    "INSERT INTO facts (id, content, category, tags, workspace, source, confidence, created_at, "
    "last_accessed, access_count, helped, hurt, superseded_by, episodes, provenance, as_written) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
constexpr char kReinforce[] =
    "UPDATE facts SET access_count = access_count + 1, last_accessed = ?2, tags = ?3, "
    "episodes = ?4, provenance = ?5, as_written = ?6 WHERE rowid = ?1";
constexpr char kList[] =
    "SELECT rowid, id, content, category, tags, workspace, source, confidence, created_at, "
    "last_accessed, access_count, helped, hurt, superseded_by, episodes, as_written FROM facts "
    "WHERE (?1 OR superseded_by IS NULL) AND (?2 = '' OR category = ?2) "
    "ORDER BY created_at DESC, rowid DESC LIMIT ?3";
constexpr char kDeleteVectors[] =
    "DELETE FROM fact_vectors WHERE fact_rowid = (SELECT rowid FROM facts WHERE id = ?1)";
constexpr char kDelete[] = "DELETE FROM facts WHERE id = ?1";
constexpr char kSupersede[] = "UPDATE facts SET superseded_by = ?2 WHERE id = ?1";
constexpr char kLastRowid[] = "SELECT last_insert_rowid()";
constexpr char kBumpGeneration[] =
    "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'memory.generation'";
constexpr char kBumpVectorGeneration[] =
    "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'memory.vector_generation'";

constexpr char kCreateInstances[] =
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.facts_fts_instances "
    "USING fts5vocab(main, facts_fts, instance)";

constexpr size_t kNearGroup = 4;

Result<int64_t> ParseVersion(const std::string& text) {
  int64_t version = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return DataLossError("unreadable memory schema version '" + text + "'");
  }
  return version;
}

Result<std::pair<int64_t, Fact>> ReadRow(const SqliteStmt& stmt) {
  // Columns: rowid, id, content, category, tags, workspace, source, confidence, created_at,
  // last_accessed, access_count, helped, hurt, superseded_by, episodes, as_written.
  StoredFact row;
  row.id = stmt.Text(1);
  row.content = stmt.Text(2);
  row.category = stmt.Text(3);
  row.tags = stmt.Text(4);
  row.workspace = stmt.Text(5);
  row.source = stmt.Text(6);
  row.confidence = stmt.Double(7);
  row.created_at = stmt.Int(8);
  row.last_accessed = stmt.Int(9);
  row.access_count = stmt.Int(10);
  row.helped = stmt.Int(11);
  row.hurt = stmt.Int(12);
  if (!stmt.IsNull(13)) row.superseded_by = stmt.Text(13);
  row.episodes = stmt.Text(14);
  row.as_written = stmt.Text(15);
  MEND_ASSIGN_OR_RETURN(Fact f, DecodeStoredFact(std::move(row)));
  return std::make_pair(stmt.Int(0), std::move(f));
}

}  // namespace

SqliteFactStore::SqliteFactStore(std::string path, FactStoreOptions options,
                                 std::unique_ptr<SqliteConn> db)
    : path_(std::move(path)), options_(options), db_(std::move(db)) {}

Status SqliteFactStore::Init() {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA journal_mode = WAL"));
  MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA synchronous = FULL"));
  // A retrieval reads a few hundred scattered pages: the lengths FTS5 keeps for bm25(), the
  // posting lists, tag keys and the ids' index, which later queries read again, and rows, which
  // they mostly do not. With SQLite's default 2 MiB the rows pushed the rest out between queries.
  MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA cache_size = -8192"));
  MEND_RETURN_IF_ERROR(db_->InTransaction(SqliteConn::TxKind::kWrite, [&]() -> Status {
    MEND_RETURN_IF_ERROR(db_->Exec(kCreateMeta));
    MEND_ASSIGN_OR_RETURN(SqliteStmt select, db_->Prepare(kSelectVersion));
    MEND_ASSIGN_OR_RETURN(bool found, select.Step());
    if (found) {
      Result<int64_t> version = ParseVersion(select.Text(0));
      if (!version.ok())
        return DataLossError(path_ + ": " + std::string(version.status().message()));
      if (*version > kMemorySchemaVersion) {
        return FailedPreconditionError(
            path_ + " holds memory written by a newer mend (memory schema " +
            std::to_string(*version) + " > " + std::to_string(kMemorySchemaVersion) +
            "); upgrade mend to use it");
      }
      if (*version == kMemorySchemaVersion) return OkStatus();
      if (*version < 2) MEND_RETURN_IF_ERROR(MigrateToV2Locked());
      if (*version < 3) MEND_RETURN_IF_ERROR(db_->Exec(kSchemaV3));
      if (*version < 4) MEND_RETURN_IF_ERROR(db_->Exec(kSchemaV4));
      MEND_ASSIGN_OR_RETURN(SqliteStmt update, db_->Prepare(kUpdateVersion));
      return update.BindText(1, std::to_string(kMemorySchemaVersion)).Run();
    }
    MEND_RETURN_IF_ERROR(db_->Exec(kSchemaV1));
    MEND_RETURN_IF_ERROR(db_->Exec(kSchemaV2));
    MEND_RETURN_IF_ERROR(db_->Exec(kSchemaV3));
    MEND_RETURN_IF_ERROR(db_->Exec(kSchemaV4));
    MEND_ASSIGN_OR_RETURN(SqliteStmt insert, db_->Prepare(kInsertVersion));
    return insert.BindText(1, std::to_string(kMemorySchemaVersion)).Run();
  }));
  // The search reads its words' occurrences through this (sqlite_fact_search.cc). A table of
  // this connection's temporary schema: nothing is written to the file.
  return db_->Exec(kCreateInstances);
}

Status SqliteFactStore::WriteTx(const std::function<Status()>& body) {
  return db_->InTransaction(SqliteConn::TxKind::kWrite, body);
}

Status SqliteFactStore::BumpLocked(const char* sql) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(sql));
  return stmt.Run();
}

Result<std::optional<SqliteFactStore::Row>> SqliteFactStore::FindLocked(const std::string& id) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSelectById));
  stmt.BindText(1, id);
  MEND_ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return std::optional<Row>();
  MEND_ASSIGN_OR_RETURN(auto row, ReadRow(stmt));
  return std::optional<Row>(Row{row.first, std::move(row.second)});
}

Result<std::optional<SqliteFactStore::Row>> SqliteFactStore::FindNearDuplicateLocked(
    const std::string& content, const std::string& category) {
  // A near duplicate shares almost every word. Two FTS5 AND queries over disjoint groups of the
  // longest (usually rarest) terms find it unless both groups hold a changed word, and each
  // intersects a few short posting lists instead of scanning the common ones.
  std::vector<std::string> terms = QueryTerms(content);
  std::stable_sort(terms.begin(), terms.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::optional<Row> best;
  double best_similarity = 0;
  for (size_t start = 0; start < terms.size() && start < 2 * kNearGroup; start += kNearGroup) {
    std::string query;
    for (size_t i = start; i < terms.size() && i < start + kNearGroup; ++i) {
      query += (query.empty() ? "" : " AND ") + BuildFtsQuery({terms[i]});
    }
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSelectNear));
    stmt.BindText(1, query).BindText(2, category);
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
      if (!more) break;
      MEND_ASSIGN_OR_RETURN(auto row, ReadRow(stmt));
      double similarity = TrigramJaccard(content, row.second.content);
      if (similarity >= options_.near_duplicate_jaccard && similarity > best_similarity) {
        best_similarity = similarity;
        best = Row{row.first, std::move(row.second)};
      }
    }
  }
  return best;
}

Status SqliteFactStore::ReinforceLocked(Row& row, const NewFact& fact) {
  const Reinforcement r = PlanReinforcement(row.fact, fact);
  const std::string tags = JoinTags(r.tags);
  const std::string provenance = ProvenanceText(r.episodes);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kReinforce));
  stmt.Bind(1, row.rowid)
      .Bind(2, ToMillis(options_.clock->Now()))
      .BindText(3, tags)
      .BindText(4, EncodeEpisodes(r.episodes))
      .BindText(5, provenance)
      .BindText(6, EncodeAsWritten(r.as_written));
  MEND_RETURN_IF_ERROR(stmt.Run());
  if (!r.text_changed) return OkStatus();
  if (row.fact.superseded_by.empty()) {
    TermDeltas deltas;
    CountFact(row.fact, -1, deltas);
    deltas.Count(row.fact.content, tags, provenance, +1);
    MEND_RETURN_IF_ERROR(WriteTermDeltasLocked(deltas));
    if (r.tags_changed) MEND_RETURN_IF_ERROR(IndexTagsLocked(row.rowid, row.fact, r.tags));
  }
  return BumpLocked(kBumpGeneration);
}

Status SqliteFactStore::UnindexLocked(const Row& row) {
  if (!row.fact.superseded_by.empty()) return OkStatus();
  TermDeltas deltas;
  CountFact(row.fact, -1, deltas);
  MEND_RETURN_IF_ERROR(WriteTermDeltasLocked(deltas));
  return IndexTagsLocked(row.rowid, row.fact, {});
}

void SqliteFactStore::BindFactColumns(SqliteStmt& stmt, const Fact& f, int first) {
  stmt.BindTextRef(first, f.id)
      .BindTextRef(first + 1, f.content)
      .BindTextRef(first + 2, f.category)
      .BindText(first + 3, JoinTags(f.tags))
      .BindTextRef(first + 4, f.workspace)
      .BindTextRef(first + 5, f.source)
      .BindDouble(first + 6, f.confidence)
      .Bind(first + 7, ToMillis(f.created_at))
      .Bind(first + 8, ToMillis(f.last_accessed))
      .Bind(first + 9, f.access_count)
      .Bind(first + 10, f.helped)
      .Bind(first + 11, f.hurt);
  if (f.superseded_by.empty()) {
    stmt.BindNull(first + 12);
  } else {
    stmt.BindTextRef(first + 12, f.superseded_by);
  }
  stmt.BindText(first + 13, EncodeEpisodes(f.provenance))
      .BindText(first + 14, ProvenanceText(f.provenance))
      .BindText(first + 15, EncodeAsWritten(f.as_written));
}

Status SqliteFactStore::InsertLocked(const Fact& f, TermDeltas& deltas) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kInsert));
  BindFactColumns(stmt, f, 1);
  MEND_RETURN_IF_ERROR(stmt.Run());
  if (f.superseded_by.empty()) {
    CountFact(f, +1, deltas);
    MEND_ASSIGN_OR_RETURN(SqliteStmt rowid, db_->Prepare(kLastRowid));
    MEND_ASSIGN_OR_RETURN(bool found, rowid.Step());
    if (!found) return InternalError("the inserted fact's rowid is unknown");
    MEND_RETURN_IF_ERROR(IndexTagsLocked(rowid.Int(0), f, f.tags, /*fresh=*/true));
  }
  return BumpLocked(kBumpGeneration);
}

Result<AddResult> SqliteFactStore::Add(const NewFact& fact) {
  MEND_ASSIGN_OR_RETURN(const PreparedAdd prepared, PrepareAdd(fact));
  AddResult result;
  result.id = prepared.id;
  std::lock_guard<std::mutex> lock(mu_);
  MEND_RETURN_IF_ERROR(WriteTx([&]() -> Status {
    MEND_ASSIGN_OR_RETURN(std::optional<Row> existing, FindLocked(result.id));
    if (existing) {
      result.kind = AddResult::Kind::kReinforced;
      return ReinforceLocked(*existing, fact);
    }
    MEND_ASSIGN_OR_RETURN(std::optional<Row> near,
                          FindNearDuplicateLocked(prepared.content, prepared.category));
    if (near) {
      result.id = near->fact.id;
      result.kind = AddResult::Kind::kMerged;
      return ReinforceLocked(*near, fact);
    }
    result.kind = AddResult::Kind::kAdded;
    TermDeltas deltas;
    MEND_RETURN_IF_ERROR(InsertLocked(NewFactRow(prepared, fact, options_.clock->Now()), deltas));
    return WriteTermDeltasLocked(deltas);
  }));
  return result;
}

Result<Fact> SqliteFactStore::Get(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(std::optional<Row> row, FindLocked(id));
  if (!row) return NotFoundError("no fact " + id);
  return std::move(row->fact);
}

Result<std::vector<Fact>> SqliteFactStore::GetMany(const std::vector<std::string>& ids) {
  std::vector<Fact> out;
  std::lock_guard<std::mutex> lock(mu_);
  // One read transaction for all of them (the retriever reads its ranking's facts at once).
  MEND_RETURN_IF_ERROR(db_->InTransaction(SqliteConn::TxKind::kRead, [&]() -> Status {
    out.clear();
    for (const std::string& id : ids) {
      MEND_ASSIGN_OR_RETURN(std::optional<Row> row, FindLocked(id));
      if (row) out.push_back(std::move(row->fact));
    }
    return OkStatus();
  }));
  return out;
}

Result<std::vector<Fact>> SqliteFactStore::List(const ListOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kList));
  stmt.Bind(1, options.include_superseded ? 1 : 0)
      .BindText(2, ToLowerAscii(Trim(options.category)))
      .Bind(3, options.limit == 0 ? -1 : static_cast<int64_t>(options.limit));
  std::vector<Fact> out;
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
    if (!more) break;
    MEND_ASSIGN_OR_RETURN(auto row, ReadRow(stmt));
    out.push_back(std::move(row.second));
  }
  return out;
}

Status SqliteFactStore::Remove(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  return WriteTx([&]() -> Status {
    MEND_ASSIGN_OR_RETURN(std::optional<Row> row, FindLocked(id));
    if (!row) return NotFoundError("no fact " + id);
    MEND_RETURN_IF_ERROR(UnindexLocked(*row));
    MEND_ASSIGN_OR_RETURN(SqliteStmt vectors, db_->Prepare(kDeleteVectors));
    MEND_RETURN_IF_ERROR(vectors.BindText(1, id).Run());
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kDelete));
    MEND_RETURN_IF_ERROR(stmt.BindText(1, id).Run());
    MEND_RETURN_IF_ERROR(BumpLocked(kBumpVectorGeneration));
    return BumpLocked(kBumpGeneration);
  });
}

Status SqliteFactStore::Supersede(const std::string& old_id, const std::string& new_id) {
  if (old_id == new_id) return InvalidArgumentError("a fact cannot supersede itself");
  std::lock_guard<std::mutex> lock(mu_);
  return WriteTx([&]() -> Status {
    MEND_ASSIGN_OR_RETURN(std::optional<Row> old_row, FindLocked(old_id));
    if (!old_row) return NotFoundError("no fact " + old_id);
    MEND_ASSIGN_OR_RETURN(std::optional<Row> new_row, FindLocked(new_id));
    if (!new_row) return NotFoundError("no fact " + new_id);
    MEND_RETURN_IF_ERROR(UnindexLocked(*old_row));
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSupersede));
    MEND_RETURN_IF_ERROR(stmt.BindText(1, old_id).BindText(2, new_id).Run());
    MEND_RETURN_IF_ERROR(BumpLocked(kBumpVectorGeneration));
    return BumpLocked(kBumpGeneration);
  });
}

}  // namespace internal

Result<std::unique_ptr<FactStore>> FactStore::Open(const std::string& path,
                                                   FactStoreOptions options) {
  if (options.clock == nullptr) return InvalidArgumentError("FactStore needs a clock");
  db::SqliteOptions db_options;
  db_options.busy_timeout = options.busy_timeout;
  MEND_ASSIGN_OR_RETURN(auto db, db::SqliteConn::Open(path, db_options));
  auto store = std::make_unique<internal::SqliteFactStore>(path, options, std::move(db));
  MEND_RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<FactStore>(std::move(store));
}

}  // namespace mend::memory
