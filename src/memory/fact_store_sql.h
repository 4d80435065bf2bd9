#pragma once

#include <cstdint>

// The SQL of the memory tables in mend.db (docs/memory.md explains every column).

namespace mend::memory::internal {

inline constexpr int64_t kMemorySchemaVersion = 4;

inline constexpr char kCreateMeta[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
inline constexpr char kSelectVersion[] =
    "SELECT value FROM meta WHERE key = 'memory.schema_version'";
inline constexpr char kInsertVersion[] =
    "INSERT INTO meta (key, value) VALUES ('memory.schema_version', ?1), "
    "('memory.generation', '0'), ('memory.vector_generation', '0')";

// `tags` holds the tags joined by spaces and `provenance` the episodes' tasks and outcomes, both
// as FTS5 indexes them; `episodes` holds the episodes as a JSON array.
inline constexpr char kSchemaV1[] = R"sql(
CREATE TABLE facts (
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  content TEXT NOT NULL,
  category TEXT NOT NULL,
  tags TEXT NOT NULL,
  workspace TEXT NOT NULL,
  source TEXT NOT NULL,
  confidence REAL NOT NULL,
  created_at INTEGER NOT NULL,
  last_accessed INTEGER NOT NULL,
  access_count INTEGER NOT NULL,
  helped INTEGER NOT NULL,
  hurt INTEGER NOT NULL,
  superseded_by TEXT,
  episodes TEXT NOT NULL,
  provenance TEXT NOT NULL
);
CREATE INDEX facts_category ON facts (category);
CREATE INDEX facts_created ON facts (created_at);
CREATE VIRTUAL TABLE facts_fts USING fts5(
  content, tags, provenance, content = 'facts', content_rowid = 'rowid',
  tokenize = 'porter unicode61');
CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
  INSERT INTO facts_fts (rowid, content, tags, provenance)
    VALUES (new.rowid, new.content, new.tags, new.provenance);
END;
CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
  INSERT INTO facts_fts (facts_fts, rowid, content, tags, provenance)
    VALUES ('delete', old.rowid, old.content, old.tags, old.provenance);
END;
CREATE TRIGGER facts_fts_update AFTER UPDATE OF content, tags, provenance ON facts BEGIN
  INSERT INTO facts_fts (facts_fts, rowid, content, tags, provenance)
    VALUES ('delete', old.rowid, old.content, old.tags, old.provenance);
  INSERT INTO facts_fts (rowid, content, tags, provenance)
    VALUES (new.rowid, new.content, new.tags, new.provenance);
END;
CREATE TABLE fact_vectors (
  fact_rowid INTEGER NOT NULL,
  part INTEGER NOT NULL,
  model TEXT NOT NULL,
  dimension INTEGER NOT NULL,
  vector BLOB NOT NULL,
  PRIMARY KEY (fact_rowid, part, model)
);
CREATE TABLE fact_injections (
  run_id TEXT NOT NULL,
  fact_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (run_id, fact_id)
);
CREATE TABLE fact_run_outcomes (
  run_id TEXT PRIMARY KEY,
  completed INTEGER NOT NULL,
  at INTEGER NOT NULL
);
)sql";

// Version 2: what retrieval reads instead of every fact, kept by the store with every write over
// the active (not superseded) facts. `fact_terms` holds, per Porter stem, the active facts holding
// it in a word (stop words left out) and in any token; the meta keys memory.documents,
// memory.words and memory.tokens hold their count and their words and tokens in all
// (TermStatistics). `fact_tag_keys` maps each key of an active fact's tags (a tag's words and the
// tag itself) to the fact (its row, workspace and id, so the tag hint reads no other table). A
// version 1 file gains both, counted from its facts, when it is opened.
inline constexpr char kSchemaV2[] = R"sql(
CREATE TABLE fact_terms (
  stem TEXT PRIMARY KEY,
  words INTEGER NOT NULL,
  tokens INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE fact_tag_keys (
  key TEXT NOT NULL,
  fact_rowid INTEGER NOT NULL,
  workspace TEXT NOT NULL,
  fact_id TEXT NOT NULL,
  PRIMARY KEY (key, fact_rowid)
) WITHOUT ROWID;
CREATE INDEX fact_tag_keys_fact ON fact_tag_keys (fact_rowid);
INSERT INTO meta (key, value) VALUES ('memory.documents', '0'), ('memory.words', '0'),
  ('memory.tokens', '0');
)sql";
// Version 3: `as_written` keeps what an imported file wrote where the other columns hold a
// normalised or coarser form (tags as written, chatcli's provenance string, the RFC 3339 times with
// their nanoseconds and offset), as a JSON object (fact_rows.h: EncodeAsWritten); "" when nothing
// differs. Exports read it; matching and search never do. Older rows get "".
inline constexpr char kSchemaV3[] =
    "ALTER TABLE facts ADD COLUMN as_written TEXT NOT NULL DEFAULT ''";
// Version 4: `fact_injections.score` holds the retrieval's score of the fact for the run
// (ScoredFact::score; NULL when none was given, and in rows written before), and
// `fact_injections_fact` finds the runs a fact was given to, newest first.
inline constexpr char kSchemaV4[] = R"sql(
ALTER TABLE fact_injections ADD COLUMN score REAL;
CREATE INDEX fact_injections_fact ON fact_injections (fact_id, at);
)sql";
inline constexpr char kUpdateVersion[] =
    "UPDATE meta SET value = ?1 WHERE key = 'memory.schema_version'";

}  // namespace mend::memory::internal
