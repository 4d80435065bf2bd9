#pragma once

#include "mend/base/result.h"
#include "mend/db/sqlite.h"
#include "mend/store/checkpoint_store.h"
#include "store/run_row.h"

namespace mend::store::internal {

using db::SqliteConn;
using db::SqliteStmt;

// The SQLite side of the `runs` row codec (run_row.h).

// Reads a `runs` row selected with MEND_STORE_RUN_COLUMNS (see ParseRunColumns).
Result<StoredRun> ParseRunRow(const SqliteStmt& stmt);

// CorruptRunMarker for a row of `stmt`.
RunRecord CorruptRunMarker(const SqliteStmt& stmt, const Status& why);

// Binds every column of `run` as ?1..?25 in MEND_STORE_RUN_COLUMNS order.
void BindRun(SqliteStmt& stmt, const StoredRun& run);

}  // namespace mend::store::internal
