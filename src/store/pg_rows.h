#pragma once

#include <vector>

#include "mend/base/result.h"
#include "mend/db/pg_conn.h"
#include "mend/store/checkpoint_store.h"
#include "store/run_row.h"

namespace mend::store::internal {

using db::PgConn;
using db::PgParam;
using db::PgPool;
using db::PgResult;
using db::PgTextArray;
using db::PgTransact;
using db::QuoteIdentifier;

// The `runs` rows of the PostgreSQL store use the columns, order and encodings of the SQLite store
// (MEND_STORE_RUN_COLUMNS, StoredRun, times as integer nanoseconds).

// Reads row `row` of a result selected with MEND_STORE_RUN_COLUMNS. A NULL where a value belongs,
// an unknown status or a value out of range is kDataLoss naming the run and the column.
Result<StoredRun> ParsePgRunRow(const PgResult& res, int row);

// What ListRuns shows for a row ParsePgRunRow rejected: the id, status failed and a DATA_LOSS
// last error (class internal, not retryable) carrying `why`.
RunRecord PgCorruptRunMarker(const PgResult& res, int row, const Status& why);

// Every column of `run` as $1..$25 in MEND_STORE_RUN_COLUMNS order.
std::vector<PgParam> PgRunParams(const StoredRun& run);

}  // namespace mend::store::internal
