#pragma once

#include <cstdint>

// The SQL of the memory tables on PostgreSQL (docs/memory.md, "On PostgreSQL"). The columns mean
// what they mean on SQLite (fact_store_sql.h). `fact_search` holds, for each active fact only, the
// tsvector of its content, tags and provenance, over the words as mend cuts them (PgSearchText),
// in the English configuration, and its workspace: a narrow table, so ranking the matches reads
// small rows that are never compressed (in `facts`, beside the texts, ts_rank took seven times as
// long). `fact_tag_counts` holds how many rows of fact_tag_keys each key has, so the tag hint
// counts without reading the postings.

namespace mend::memory::internal {

inline constexpr int64_t kPgMemorySchemaVersion = 2;

// Taken first by every transaction that creates or checks the schema: hosts opening one database
// at once create it once. (The runs store takes the same lock for its own tables.)
inline constexpr char kPgLockSchema[] = "SELECT pg_advisory_xact_lock(7230188513270843394)";
inline constexpr char kPgCreateMeta[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
inline constexpr char kPgSelectVersion[] =
    "SELECT value FROM meta WHERE key = 'memory.schema_version'";

inline constexpr char kPgSchemaV1[] = R"sql(
CREATE TABLE facts (
  rowid BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  content TEXT NOT NULL,
  category TEXT NOT NULL,
  tags TEXT NOT NULL,
  workspace TEXT NOT NULL,
  source TEXT NOT NULL,
  confidence DOUBLE PRECISION NOT NULL,
  created_at BIGINT NOT NULL,
  last_accessed BIGINT NOT NULL,
  access_count BIGINT NOT NULL,
  helped BIGINT NOT NULL,
  hurt BIGINT NOT NULL,
  superseded_by TEXT,
  episodes TEXT NOT NULL,
  provenance TEXT NOT NULL,
  as_written TEXT NOT NULL
);
CREATE TABLE fact_search (
  fact_rowid BIGINT PRIMARY KEY REFERENCES facts (rowid) ON DELETE CASCADE,
  workspace TEXT NOT NULL,
  search TSVECTOR NOT NULL
);
CREATE INDEX fact_search_words ON fact_search USING GIN (search) WITH (fastupdate = off);
CREATE INDEX facts_created ON facts (created_at, rowid);
CREATE TABLE fact_terms (
  stem TEXT PRIMARY KEY,
  words BIGINT NOT NULL,
  tokens BIGINT NOT NULL
);
CREATE TABLE fact_tag_keys (
  key TEXT NOT NULL,
  fact_rowid BIGINT NOT NULL,
  workspace TEXT NOT NULL,
  fact_id TEXT NOT NULL,
  PRIMARY KEY (key, fact_rowid) INCLUDE (workspace, fact_id)
);
CREATE INDEX fact_tag_keys_fact ON fact_tag_keys (fact_rowid);
CREATE TABLE fact_tag_counts (
  key TEXT PRIMARY KEY,
  facts BIGINT NOT NULL
);
CREATE TABLE fact_vectors (
  fact_rowid BIGINT NOT NULL REFERENCES facts (rowid) ON DELETE CASCADE,
  part INTEGER NOT NULL,
  model TEXT NOT NULL,
  dimension INTEGER NOT NULL,
  vector BYTEA NOT NULL,
  PRIMARY KEY (fact_rowid, part, model)
);
CREATE TABLE fact_injections (
  run_id TEXT NOT NULL,
  fact_id TEXT NOT NULL,
  at BIGINT NOT NULL,
  seq BIGSERIAL NOT NULL,
  PRIMARY KEY (run_id, fact_id)
);
CREATE TABLE fact_run_outcomes (
  run_id TEXT PRIMARY KEY,
  completed BOOLEAN NOT NULL,
  at BIGINT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('memory.generation', '0'), ('memory.vector_generation', '0'),
  ('memory.documents', '0'), ('memory.words', '0'), ('memory.tokens', '0');
)sql";
// Version 2, as version 4 on SQLite (fact_store_sql.h): the retrieval's score per injection
// (NULL in older rows) and the index of the runs a fact was given to.
inline constexpr char kPgSchemaV2[] = R"sql(
ALTER TABLE fact_injections ADD COLUMN score DOUBLE PRECISION;
CREATE INDEX fact_injections_fact ON fact_injections (fact_id, at, seq);
)sql";
inline constexpr char kPgUpdateVersion[] =
    "UPDATE meta SET value = $1 WHERE key = 'memory.schema_version'";
inline constexpr char kPgInsertVersion[] =
    "INSERT INTO meta (key, value) VALUES ('memory.schema_version', $1)";

}  // namespace mend::memory::internal
