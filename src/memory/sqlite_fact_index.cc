// What SqliteFactStore keeps beside the facts for retrieval (fact_store_sql.h, version 2): the
// term statistics of the active facts and their tag keys, written in the transaction of the change
// that moves them.

#include <algorithm>
#include <string>
#include <utility>

#include "memory/document_terms.h"
#include "memory/fact_rows.h"
#include "memory/fact_store_sql.h"
#include "memory/sqlite_fact_store.h"

namespace mend::memory::internal {
namespace {

using db::SqliteStmt;

constexpr char kAddStem[] =
    "INSERT INTO fact_terms (stem, words, tokens) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (stem) DO UPDATE SET words = words + ?2, tokens = tokens + ?3";
constexpr char kSubtractStem[] =
    "UPDATE fact_terms SET words = words + ?2, tokens = tokens + ?3 WHERE stem = ?1";
constexpr char kDropStem[] = "DELETE FROM fact_terms WHERE stem = ?1 AND tokens <= 0";
constexpr char kAddTotal[] = "UPDATE meta SET value = CAST(value AS INTEGER) + ?2 WHERE key = ?1";
constexpr char kInsertTagKey[] =
    "INSERT OR IGNORE INTO fact_tag_keys (key, fact_rowid, workspace, fact_id) "
    "VALUES (?1, ?2, ?3, ?4)";
constexpr char kDeleteTagKeys[] = "DELETE FROM fact_tag_keys WHERE fact_rowid = ?1";
constexpr char kActiveFacts[] =
    "SELECT rowid, content, tags, provenance, workspace, id FROM facts "
    "WHERE superseded_by IS NULL "
    "ORDER BY rowid";

}  // namespace

void SqliteFactStore::CountFact(const Fact& fact, int sign, TermDeltas& deltas) {
  deltas.Count(fact.content, JoinTags(fact.tags), ProvenanceText(fact.provenance), sign);
}

Status SqliteFactStore::WriteTermDeltasLocked(const TermDeltas& deltas) {
  for (const auto& [stem, d] : deltas.stems) {
    if (d.tokens == 0 && d.words == 0) continue;
    if (d.tokens > 0) {
      MEND_ASSIGN_OR_RETURN(SqliteStmt add, db_->Prepare(kAddStem));
      MEND_RETURN_IF_ERROR(add.BindText(1, stem).Bind(2, d.words).Bind(3, d.tokens).Run());
      continue;
    }
    {
      MEND_ASSIGN_OR_RETURN(SqliteStmt subtract, db_->Prepare(kSubtractStem));
      MEND_RETURN_IF_ERROR(subtract.BindText(1, stem).Bind(2, d.words).Bind(3, d.tokens).Run());
    }
    MEND_ASSIGN_OR_RETURN(SqliteStmt drop, db_->Prepare(kDropStem));
    MEND_RETURN_IF_ERROR(drop.BindText(1, stem).Run());
  }
  const std::pair<const char*, int64_t> totals[] = {{"memory.documents", deltas.documents},
                                                    {"memory.words", deltas.words},
                                                    {"memory.tokens", deltas.tokens}};
  for (const auto& [key, delta] : totals) {
    if (delta == 0) continue;
    MEND_ASSIGN_OR_RETURN(SqliteStmt add, db_->Prepare(kAddTotal));
    MEND_RETURN_IF_ERROR(add.BindText(1, key).Bind(2, delta).Run());
  }
  return OkStatus();
}

Status SqliteFactStore::IndexTagsLocked(int64_t rowid, const Fact& fact,
                                        const std::vector<std::string>& tags, bool fresh) {
  if (!fresh) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt clear, db_->Prepare(kDeleteTagKeys));
    MEND_RETURN_IF_ERROR(clear.Bind(1, rowid).Run());
  }
  for (const std::string& tag : tags) {
    for (const std::string& key : TagKeys(tag)) {
      MEND_ASSIGN_OR_RETURN(SqliteStmt insert, db_->Prepare(kInsertTagKey));
      insert.BindText(1, key).Bind(2, rowid).BindText(3, fact.workspace).BindText(4, fact.id);
      MEND_RETURN_IF_ERROR(insert.Run());
    }
  }
  return OkStatus();
}

Status SqliteFactStore::MigrateToV2Locked() {
  MEND_RETURN_IF_ERROR(db_->Exec(kSchemaV2));
  TermDeltas deltas;
  struct Tagged {
    int64_t rowid = 0;
    Fact fact;  // id and workspace
    std::vector<std::string> tags;
  };
  std::vector<Tagged> tagged;
  {
    MEND_ASSIGN_OR_RETURN(SqliteStmt facts, db_->Prepare(kActiveFacts));
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool more, facts.Step());
      if (!more) break;
      const std::string joined = facts.Text(2);
      deltas.Count(facts.Text(1), joined, facts.Text(3), +1);
      Tagged& t = tagged.emplace_back();
      t.rowid = facts.Int(0);
      t.fact.workspace = facts.Text(4);
      t.fact.id = facts.Text(5);
      t.tags = SplitTags(joined);
    }
  }
  for (const Tagged& t : tagged) {
    MEND_RETURN_IF_ERROR(IndexTagsLocked(t.rowid, t.fact, t.tags, /*fresh=*/true));
  }
  return WriteTermDeltasLocked(deltas);
}

}  // namespace mend::memory::internal
