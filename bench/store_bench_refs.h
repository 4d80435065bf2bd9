#pragma once

// The physical limits bench/run_store_bench prints beside mend's saves, measured in the same run
// on the same disk: what the disk allows many writers (a raw group commit of the same records),
// and what SQLite allows one writer (a bare insert + commit at synchronous=FULL).
#include <cstddef>
#include <string>

namespace mend::store::bench {

// RUNS threads append STEPS records of PAYLOAD bytes each to one file; a leader writes every
// record queued so far with one write and one fdatasync, then wakes their writers. Returns
// {"records_per_s","p50_ms","p99_ms","records_per_sync"} as JSON text.
std::string RawGroupCommit(const std::string& path, int runs, int steps, size_t payload_bytes);

// One writer: STEPS times BEGIN; INSERT one row of PAYLOAD bytes; COMMIT on a WAL-mode SQLite
// file at synchronous=FULL. Returns {"inserts_per_s","p50_ms","p99_ms"} as JSON text.
std::string BareSqliteInserts(const std::string& path, int steps, size_t payload_bytes);

}  // namespace mend::store::bench
