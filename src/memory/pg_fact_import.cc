// PgFactStore::Import: the facts staged a slice at a time (pg_import_staging.h), then merged into
// the memory tables in one statement, all in one write transaction.

#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "memory/document_terms.h"
#include "memory/fact_rows.h"
#include "memory/fact_writes.h"
#include "memory/pg_fact_store.h"
#include "memory/pg_import_staging.h"

namespace mend::memory::internal {
namespace {

using db::PgResult;

// A slice of the staging table is sent once its columns hold this many bytes (some hundreds of
// facts): large enough that a slice's round trip is nothing beside its rows, small enough that
// neither side holds a large import twice in memory at once.
constexpr size_t kSliceBytes = size_t{1} << 20;

// Stores the staged facts whose ids are not taken, in the order given (their rowids ascend as
// they would one insert at a time), with the search rows, tag keys and tag counts of the active
// ones; returns the `ord` of each fact stored. The facts' rowids reach the index rows through
// `added` (an id names one staged fact: Import leaves out repeated ones).
constexpr char kMerge[] =
    "WITH added AS (INSERT INTO facts (id, content, category, tags, workspace, source, "
    "confidence, created_at, last_accessed, access_count, helped, hurt, superseded_by, episodes, "
    "provenance, as_written) SELECT id, content, category, tags, workspace, source, confidence, "
    "created_at, last_accessed, access_count, helped, hurt, superseded_by, episodes, provenance, "
    "as_written FROM pg_temp.mend_fact_import ORDER BY ord "
    "ON CONFLICT (id) DO NOTHING RETURNING rowid, id), "
    "active AS (SELECT a.rowid, s.id, s.workspace, s.search, s.tag_keys FROM added a "
    "JOIN pg_temp.mend_fact_import s ON s.id = a.id WHERE s.superseded_by IS NULL), "
    "searched AS (INSERT INTO fact_search (fact_rowid, workspace, search) "
    "SELECT rowid, workspace, to_tsvector('english', search) FROM active), "
    "keyed AS (INSERT INTO fact_tag_keys (key, fact_rowid, workspace, fact_id) "
    "SELECT DISTINCT k, rowid, workspace, id FROM active, unnest(tag_keys) AS k "
    "ORDER BY k, rowid ON CONFLICT DO NOTHING RETURNING key), "
    "counted AS (INSERT INTO fact_tag_counts (key, facts) "
    "SELECT key, count(*) FROM keyed GROUP BY key ORDER BY key "
    "ON CONFLICT (key) DO UPDATE SET facts = fact_tag_counts.facts + excluded.facts) "
    "SELECT s.ord FROM added a JOIN pg_temp.mend_fact_import s ON s.id = a.id";

// The staging table has no statistics, so the planner's guesses for the merge are far off: it
// would compile it (JIT, most of a second at 100,000 facts) and plan its sorts for the default
// few megabytes of memory, spilling them to disk.
constexpr char kMergeSettings[] = "SET LOCAL jit = off; SET LOCAL work_mem = '32MB'";

// The search index takes its rows one at a time (fastupdate off), so that no search ever scans a
// pending list; a row then costs a descent of the index for each of its words, which was most of
// a large import's time. An import of at least kPendingFrom facts turns the pending list on for
// its own duration: its rows enter the list and reach the index sorted, a few megabytes at a
// time, and the last of them before it commits. The switch is made in transactions of its own,
// since it locks the index exclusively and searches must not wait for the import; meanwhile they
// read the list too (at most a few megabytes). Only the index's owner may switch it; an import by
// another role indexes row by row.
constexpr size_t kPendingFrom = 1000;
constexpr char kMayAlterSearchIndex[] =
    "SELECT 1 FROM pg_class WHERE oid = to_regclass('fact_search_words') "
    "AND pg_has_role(relowner, 'USAGE')";
constexpr char kPendingLeftOn[] =
    "SELECT 1 FROM pg_class WHERE oid = to_regclass('fact_search_words') "
    "AND 'fastupdate=on' = ANY(reloptions) AND pg_has_role(relowner, 'USAGE')";
constexpr char kPendingOn[] = "ALTER INDEX fact_search_words SET (fastupdate = on)";
constexpr char kPendingOff[] = "ALTER INDEX fact_search_words SET (fastupdate = off)";
constexpr char kFlushPending[] = "SELECT gin_clean_pending_list('fact_search_words'::regclass)";
// A switch waits this long for searches under way, which queue behind it meanwhile.
constexpr char kSwitchTimeout[] = "SET LOCAL lock_timeout = '2s'";

void CountFact(const Fact& f, int sign, TermDeltas& deltas) {
  deltas.Count(f.content, JoinTags(f.tags), ProvenanceText(f.provenance), sign);
}

// Creates the staging table and sends it `rows`, a slice at a time.
Status Stage(PgConn& conn, const std::vector<Fact>& rows) {
  MEND_RETURN_IF_ERROR(conn.Run(PgImportStaging::CreateStatement()));
  PgImportStaging staging;
  for (size_t i = 0; i < rows.size(); ++i) {
    staging.Add(rows[i]);
    if (staging.bytes() < kSliceBytes && i + 1 < rows.size()) continue;
    MEND_RETURN_IF_ERROR(conn.Exec(PgImportStaging::LoadStatement(), staging.TakeSlice()).status());
  }
  return OkStatus();
}

// Which of `n` staged facts the merge stored, from the `ord`s it returned.
Result<std::vector<bool>> StoredRows(const PgResult& added, size_t n) {
  std::vector<bool> stored(n);
  for (int r = 0; r < added.rows(); ++r) {
    const std::optional<int64_t> ord = added.Int(r, 0);
    if (!ord || *ord < 0 || static_cast<size_t>(*ord) >= n) {
      return InternalError("the import's merge named a fact it was not given");
    }
    stored[static_cast<size_t>(*ord)] = true;
  }
  return stored;
}

}  // namespace

bool PgFactStore::OpenPendingList() {
  bool opened = false;
  Status s = db::PgTransact(pool_, "BEGIN", [&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(PgResult may, conn.Exec(kMayAlterSearchIndex));
    if (may.rows() == 0) return OkStatus();
    MEND_RETURN_IF_ERROR(conn.Run(kSwitchTimeout));
    MEND_RETURN_IF_ERROR(conn.Run(kPendingOn));
    opened = true;
    return OkStatus();
  });
  // The import goes on without the list.
  return s.ok() && opened;
}

Status PgFactStore::ClosePendingList(PgConn& conn) {
  MEND_RETURN_IF_ERROR(conn.Run(kSwitchTimeout));
  MEND_RETURN_IF_ERROR(conn.Run(kPendingOff));
  // What other writers added to the list since the import flushed it.
  return conn.Run(kFlushPending);
}

Status PgFactStore::RestoreSearchIndex(PgConn& conn) {
  MEND_ASSIGN_OR_RETURN(PgResult left_on, conn.Exec(kPendingLeftOn));
  if (left_on.rows() == 0) return OkStatus();
  return ClosePendingList(conn);
}

Result<FactStore::ImportCounts> PgFactStore::Import(const std::vector<Fact>& facts) {
  ImportCounts counts;
  ImportSelection selection = SelectImported(facts);
  counts.unusable = std::move(selection.unusable);
  int64_t repeated = 0;
  const std::vector<Fact> rows = DistinctImported(selection, &repeated);
  const bool pending = rows.size() >= kPendingFrom && OpenPendingList();
  Status written = WriteTx([&](PgConn& conn) -> Status {
    counts.imported = 0;
    counts.skipped = repeated;
    if (rows.empty()) return OkStatus();
    MEND_RETURN_IF_ERROR(Stage(conn, rows));
    MEND_ASSIGN_OR_RETURN(counts.imported, MergeStaged(conn, rows, pending));
    counts.skipped += static_cast<int64_t>(rows.size()) - counts.imported;
    return OkStatus();
  });
  if (pending) {
    // Left on (a lost connection), the list costs searches a little until the next large import
    // or the next opening of the store switches it off.
    db::PgTransact(pool_, "BEGIN", [&](PgConn& conn) {
      return ClosePendingList(conn);
    }).IgnoreError();
  }
  MEND_RETURN_IF_ERROR(written);
  return counts;
}

Result<int64_t> PgFactStore::MergeStaged(PgConn& conn, const std::vector<Fact>& rows,
                                         bool pending) {
  MEND_RETURN_IF_ERROR(conn.Run(kMergeSettings));
  // The term statistics (mend's own stems, so counted here) of every staged active fact are
  // counted while the server merges; those of the facts it did not store are counted out after.
  TermDeltas deltas;
  std::thread counting([&] {
    for (const Fact& f : rows) {
      if (f.superseded_by.empty()) CountFact(f, +1, deltas);
    }
  });
  Result<PgResult> added = conn.Exec(kMerge);
  counting.join();
  MEND_RETURN_IF_ERROR(added.status());
  if (pending) MEND_RETURN_IF_ERROR(conn.Run(kFlushPending));
  if (added->rows() == 0) return 0;
  MEND_ASSIGN_OR_RETURN(const std::vector<bool> stored, StoredRows(*added, rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!stored[i] && rows[i].superseded_by.empty()) CountFact(rows[i], -1, deltas);
  }
  MEND_RETURN_IF_ERROR(WriteTermDeltas(conn, deltas));
  MEND_RETURN_IF_ERROR(Bump(conn, "memory.generation"));
  return added->rows();
}

}  // namespace mend::memory::internal
