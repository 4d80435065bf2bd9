#pragma once

#include <cstdint>

// The SQL of the memory tables in mend.db (docs/memory.md explains every column).

namespace mend::memory::internal {

inline constexpr int64_t kMemorySchemaVersion = 1;

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

}  // namespace mend::memory::internal
