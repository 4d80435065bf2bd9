#pragma once

// The process's PostgreSQL counters behind ProcessPgActivity (include/mend/db/pg_conn.h): every
// connection and pool adds to them.
#include <atomic>
#include <cstdint>

namespace mend::db {

struct ActivityCounters {
  std::atomic<int64_t> connections_open{0};
  std::atomic<int64_t> connections_in_use{0};
  std::atomic<int64_t> acquires{0};
  std::atomic<int64_t> waits{0};
  std::atomic<int64_t> wait_nanoseconds{0};
  std::atomic<int64_t> round_trips{0};
  std::atomic<int64_t> errors{0};
  std::atomic<int64_t> statements_reprepared{0};
};

// The one set of the process.
ActivityCounters& Activity();

}  // namespace mend::db
