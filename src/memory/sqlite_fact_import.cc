// SqliteFactStore::Import: the facts staged in a table of the connection's temporary schema, then
// stored with one INSERT ... SELECT, all in one write transaction.
//
// Why one statement: FTS5 writes the index rows it holds in memory to disk at the start and end
// of every statement that may write it inside a transaction (its savepoint method, in SQLite
// 3.40), and the insert trigger of `facts` makes every insert such a statement. One insert per
// fact thus made one small index segment per fact, which FTS5 then merged again and again: most of
// a large import's time. One statement lets FTS5 gather the whole import's rows and write them as
// a few large segments.

#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "memory/fact_rows.h"
#include "memory/fact_writes.h"
#include "memory/sqlite_fact_store.h"

namespace mend::memory::internal {
namespace {

using db::SqliteConn;
using db::SqliteStmt;

// `ord` is the fact's position among the staged ones; the others are the columns of `facts`.
constexpr char kCreateStaging[] =
    "CREATE TEMP TABLE IF NOT EXISTS mend_fact_import (ord INTEGER PRIMARY KEY, id TEXT NOT NULL, "
    "content TEXT NOT NULL, category TEXT NOT NULL, tags TEXT NOT NULL, workspace TEXT NOT NULL, "
    "source TEXT NOT NULL, confidence REAL NOT NULL, created_at INTEGER NOT NULL, "
    "last_accessed INTEGER NOT NULL, access_count INTEGER NOT NULL, helped INTEGER NOT NULL, "
    "hurt INTEGER NOT NULL, superseded_by TEXT, episodes TEXT NOT NULL, provenance TEXT NOT NULL, "
    "as_written TEXT NOT NULL)";
constexpr char kStage[] =
    "INSERT INTO temp.mend_fact_import (ord, id, content, category, tags, workspace, source, "
    "confidence, created_at, last_accessed, access_count, helped, hurt, superseded_by, episodes, "
    "provenance, as_written) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";
// The staged facts whose ids the memory already holds are skipped, as one insert after another
// would have them.
constexpr char kDropPresent[] =
    "DELETE FROM temp.mend_fact_import WHERE id IN (SELECT id FROM main.facts) RETURNING ord";
// In the order given, so that their rowids ascend as they would one insert at a time.
constexpr char kMerge[] =
    "INSERT INTO main.facts (id, content, category, tags, workspace, source, confidence, "
    "created_at, last_accessed, access_count, helped, hurt, superseded_by, episodes, provenance, "
    "as_written) SELECT id, content, category, tags, workspace, source, confidence, created_at, "
    "last_accessed, access_count, helped, hurt, superseded_by, episodes, provenance, as_written "
    "FROM temp.mend_fact_import ORDER BY ord";
constexpr char kStoredActive[] =
    "SELECT s.ord, f.rowid FROM temp.mend_fact_import s JOIN main.facts f ON f.id = s.id "
    "WHERE s.superseded_by IS NULL ORDER BY s.ord";
constexpr char kClearStaging[] = "DELETE FROM temp.mend_fact_import";
constexpr char kBumpGeneration[] =
    "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'memory.generation'";

Status Stage(SqliteConn& db, const std::vector<Fact>& rows) {
  MEND_RETURN_IF_ERROR(db.Exec(kCreateStaging));
  MEND_RETURN_IF_ERROR(db.Exec(kClearStaging));
  for (size_t i = 0; i < rows.size(); ++i) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db.Prepare(kStage));
    stmt.Bind(1, static_cast<int64_t>(i));
    SqliteFactStore::BindFactColumns(stmt, rows[i], 2);
    MEND_RETURN_IF_ERROR(stmt.Run());
  }
  return OkStatus();
}

// Which staged facts are already present, by position.
Result<std::vector<bool>> DropPresent(SqliteConn& db, size_t n) {
  std::vector<bool> present(n);
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db.Prepare(kDropPresent));
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool more, stmt.Step());
    if (!more) break;
    const int64_t ord = stmt.Int(0);
    if (ord < 0 || static_cast<size_t>(ord) >= n) {
      return InternalError("the import's staging table named a fact it was not given");
    }
    present[static_cast<size_t>(ord)] = true;
  }
  return present;
}

}  // namespace

Result<FactStore::ImportCounts> SqliteFactStore::Import(const std::vector<Fact>& facts) {
  ImportCounts counts;
  ImportSelection selection = SelectImported(facts);
  counts.unusable = std::move(selection.unusable);
  int64_t repeated = 0;
  const std::vector<Fact> rows = DistinctImported(selection, &repeated);
  std::lock_guard<std::mutex> lock(mu_);
  MEND_RETURN_IF_ERROR(WriteTx([&]() -> Status {
    counts.imported = 0;
    counts.skipped = repeated;
    if (rows.empty()) return OkStatus();
    MEND_RETURN_IF_ERROR(Stage(*db_, rows));
    MEND_ASSIGN_OR_RETURN(const std::vector<bool> present, DropPresent(*db_, rows.size()));
    // The term statistics of the facts to store are counted while SQLite stores them.
    TermDeltas deltas;
    std::thread counting([&] {
      for (size_t i = 0; i < rows.size(); ++i) {
        if (!present[i] && rows[i].superseded_by.empty()) CountFact(rows[i], +1, deltas);
      }
    });
    Status merged = [&]() -> Status {
      MEND_ASSIGN_OR_RETURN(SqliteStmt merge, db_->Prepare(kMerge));
      return merge.Run();
    }();
    counting.join();
    MEND_RETURN_IF_ERROR(merged);
    counts.imported = db_->Changes();
    counts.skipped += static_cast<int64_t>(rows.size()) - counts.imported;
    {
      MEND_ASSIGN_OR_RETURN(SqliteStmt stored, db_->Prepare(kStoredActive));
      while (true) {
        MEND_ASSIGN_OR_RETURN(bool more, stored.Step());
        if (!more) break;
        const Fact& f = rows[static_cast<size_t>(stored.Int(0))];
        MEND_RETURN_IF_ERROR(IndexTagsLocked(stored.Int(1), f, f.tags, /*fresh=*/true));
      }
    }
    MEND_RETURN_IF_ERROR(db_->Exec(kClearStaging));
    MEND_RETURN_IF_ERROR(WriteTermDeltasLocked(deltas));
    if (counts.imported == 0) return OkStatus();
    MEND_ASSIGN_OR_RETURN(SqliteStmt bump, db_->Prepare(kBumpGeneration));
    return bump.Run();
  }));
  return counts;
}

}  // namespace mend::memory::internal
