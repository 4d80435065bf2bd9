#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/db/pg_conn.h"
#include "mend/memory/fact.h"

// How an import's facts reach PostgreSQL: as the rows of a staging table, sent a slice at a time
// as one array per column, so a slice costs one statement however many facts it holds.
// PgFactStore::Import then merges the staged facts into the memory tables in one statement.

namespace mend::memory::internal {

// An array literal (`{"a","b"}`) built one element at a time, each element quoted, so commas,
// braces, quotes, backslashes and the word NULL stay data (db::PgTextArray's rules).
class PgArrayLiteral {
 public:
  void Add(std::string_view item);
  // The literal so far, closed; the builder starts again empty.
  std::string Take();
  // Bytes of the literal so far.
  size_t bytes() const { return text_.size(); }

 private:
  std::string text_ = "{";
};

// The rows of one import on their way to the staging table. The table (CreateStatement) lives
// until its transaction ends; its rows are numbered (`ord`) in the order they were added, across
// slices, so the merge can store the facts in that order.
class PgImportStaging {
 public:
  // The staging table, pg_temp.mend_fact_import: created empty in the session's temporary
  // schema, dropped at COMMIT or ROLLBACK. Statements name it with its schema, so no table of the
  // memory's schema can stand in for it.
  static const char* CreateStatement();

  // Adds `fact`, an import as it will be stored (PrepareImported), to the current slice.
  void Add(const Fact& fact);
  // Bytes of the current slice's columns as sent.
  size_t bytes() const;
  // The statement that inserts a slice into the staging table, with TakeSlice's parameters.
  static const char* LoadStatement();
  // The parameters of the current slice; the next slice starts empty, numbered on.
  std::vector<db::PgParam> TakeSlice();

 private:
  enum Column {
    kId,
    kContent,
    kCategory,
    kTags,
    kWorkspace,
    kSource,
    kConfidence,
    kCreatedAt,
    kLastAccessed,
    kAccessCount,
    kHelped,
    kHurt,
    kSupersededBy,
    kEpisodes,
    kProvenance,
    kAsWritten,
    kSearch,
    kTagKeys,
    kColumns,
  };

  PgArrayLiteral columns_[kColumns];
  size_t facts_ = 0;   // in the current slice
  int64_t first_ = 0;  // `ord` of the current slice's first fact
};

}  // namespace mend::memory::internal
