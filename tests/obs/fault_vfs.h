#pragma once

#include <atomic>

namespace mend::obs::testing {

// A SQLite VFS for tests that delegates to the default one and fails operations on command:
// SQLite does not do its I/O through our FileSystem, so faults are injected below it. Open a
// database with it through SpanStore::Open(path, kFaultVfsName). Thread-safe.
inline constexpr char kFaultVfsName[] = "mend-fault";

struct FaultVfs {
  std::atomic<bool> fail_writes{false};  // xWrite returns SQLITE_IOERR_WRITE
  std::atomic<bool> fail_syncs{false};   // xSync returns SQLITE_IOERR_FSYNC
  std::atomic<bool> fail_opens{false};   // xOpen returns SQLITE_CANTOPEN
  std::atomic<int> writes{0};            // xWrite calls, failed ones included

  void Reset() {
    fail_writes = false;
    fail_syncs = false;
    fail_opens = false;
    writes = 0;
  }
};

// Registers the VFS (once per process) and returns its switches.
FaultVfs& RegisterFaultVfs();

}  // namespace mend::obs::testing
