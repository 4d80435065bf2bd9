#pragma once

// The physical limits bench/run_store_bench prints beside mend's saves, measured in the same run
// on the same disk: what the disk allows many writers (a raw group commit of the same records),
// and what SQLite allows one writer (a bare insert + commit at synchronous=FULL).
#include <cstddef>
#include <string>

namespace mend::store::bench {

// What this process has written (bytes handed to write(2) and its kin, /proc/self/io `wchar`:
// WAL frames, checkpoint copies, log records) and the CPU time of all its threads, at one moment.
// The difference of two readings divided by the operations between them is the cost of one.
struct ProcessCost {
  double write_bytes = 0;
  double cpu_ms = 0;
  static ProcessCost Now();
};

// {"write_kib_per_op":..,"cpu_ms_per_op":..} from `before` to now over `ops` operations, without
// the braces, to be spliced into a JSON object.
std::string CostFields(const ProcessCost& before, double ops);

// RUNS threads append STEPS records of PAYLOAD bytes each to one file; a leader writes every
// record queued so far with one write and one fdatasync, then wakes their writers. Returns
// {"records_per_s","p50_ms","p99_ms","records_per_sync"} and CostFields as JSON text.
std::string RawGroupCommit(const std::string& path, int runs, int steps, size_t payload_bytes);

// One writer: STEPS times BEGIN; INSERT one row of PAYLOAD bytes; COMMIT on a WAL-mode SQLite
// file at synchronous=FULL. Returns {"inserts_per_s","p50_ms","p99_ms"} and CostFields as JSON
// text.
std::string BareSqliteInserts(const std::string& path, int steps, size_t payload_bytes);

}  // namespace mend::store::bench
