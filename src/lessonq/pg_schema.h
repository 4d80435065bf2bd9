#pragma once

#include <cstdint>
#include <string>

#include "mend/base/status.h"
#include "mend/db/pg_conn.h"

namespace mend::lessonq {

// The version of the queue's tables this build writes (docs/lesson_queue.md, "The PostgreSQL
// queue").
inline constexpr int64_t kPgQueueSchemaVersion = 3;

// Creates the queue's tables on `conn` (whose search_path already names `schema`; empty: the
// connection's default), or brings tables of an older version up to kPgQueueSchemaVersion, every
// step in one transaction under an advisory lock, so that queues opening at once do not race.
// kFailedPrecondition when the tables were written by a newer mend, kDataLoss when their version
// cannot be read; `location` names the tables in messages. Other errors as PgConn::Exec.
Status CreateOrMigrateQueueTables(db::PgConn& conn, const std::string& schema,
                                  const std::string& location);

}  // namespace mend::lessonq
