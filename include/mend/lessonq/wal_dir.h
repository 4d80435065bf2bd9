#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/lessonq/job.h"

namespace mend::lessonq {

// What a listing of a WAL directory found besides the good records.
struct WalScan {
  std::vector<Job> jobs;           // good records, sorted by id
  int64_t corrupt_removed = 0;     // records that failed a check; their files were removed
  int64_t temporaries_removed = 0; // leftover temporary files of interrupted writes
  int64_t foreign_skipped = 0;     // entries that are neither records nor temporaries; left alone
};

// One directory of WAL records, one file `<job id>.wal` per job (the pending queue's `wal/` and the
// dead-letter queue's `dlq/` are two of these). Writes are crash-safe: the record goes to a
// temporary `.tmp.<id>.<unique>` file, which is synced, renamed over `<id>.wal`, and the directory
// is synced; a reader never sees a partial record. Directory syncs of concurrent writers are
// shared: a writer whose rename is covered by a sync already started after it waits for that one
// instead of issuing its own. Thread-safe; several processes may use one directory.
class WalDir {
 public:
  // Creates `dir` when missing. `fs` must outlive the object.
  static Result<std::unique_ptr<WalDir>> Open(FileSystem& fs, const std::string& dir);
  ~WalDir();

  // Writes `job`'s record unless a record for its id exists (idempotent). True when this call
  // created the record, false when it was already there (its contents are left as they were).
  // Errors of the file system come back as they are; a failed write leaves no record and no
  // temporary file behind (best effort).
  Result<bool> Append(const Job& job);
  // Writes `job`'s record, replacing any record of the same id (attempts, next attempt time,
  // last error after a failure).
  Status Update(const Job& job);
  // Removes the record of `id` and syncs the directory (ack). kNotFound when there is none.
  Status Remove(const std::string& id);
  // The record of `id`: kNotFound when absent; kDataLoss when it fails a check (the file is
  // then removed).
  Result<Job> Read(const std::string& id);
  bool Contains(const std::string& id);
  // Every good record. Removes leftover temporaries and records that fail any check (bad magic,
  // bad length, CRC mismatch, torn tail, bad JSON, unknown version) and counts them; skips
  // foreign files. Never stops at a bad record.
  Result<WalScan> Scan();
  // The job ids of the records present (names only, nothing is read or removed): cheap.
  Result<std::vector<std::string>> ListIds();

  const std::string& dir() const { return dir_; }
  std::string PathFor(const std::string& id) const;

 private:
  WalDir(FileSystem& fs, std::string dir);
  Status WriteRecord(const Job& job, bool exclusive, bool* created);
  Status SyncDirShared();

  FileSystem& fs_;
  const std::string dir_;
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;
  uint64_t renames_ = 0;          // renames made visible so far (under sync_mu_)
  uint64_t synced_through_ = 0;   // every rename numbered up to this is durable
  bool syncing_ = false;
  Status last_sync_;
  std::atomic<uint64_t> unique_{0};
};

}  // namespace mend::lessonq
