#pragma once

// WalDir, one directory of WAL records, a `<job id>.wal` file per job written crash-safely
// (docs/wal_format.md); the pending jobs and the dead letters are two of them. Thread-safe;
// processes may share a directory.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/lessonq/job.h"

namespace mend::lessonq {

/// What a listing of a WAL directory found besides the good records.
struct WalScan {
  std::vector<Job> jobs;        ///< good records, sorted by id
  int64_t corrupt_removed = 0;  ///< records that failed a check; their files were removed
  /// Leftover temporary files of interrupted writes: mend's, and chatcli's once no process with
  /// their pid runs (until then they are left alone). Names: `.tmp.*` and `<id>.tmp.<pid>.<seq>`.
  int64_t temporaries_removed = 0;
  int64_t foreign_skipped = 0;  ///< entries that are neither records nor temporaries; left alone
};

/// One directory of WAL records, one file `<job id>.wal` per job (the pending queue's `wal/` and
/// the dead-letter queue's `dlq/` are two of these). Writes are crash-safe: the record goes to a
/// temporary `.tmp.<id>.<unique>` file, which is synced, renamed over `<id>.wal`, and the directory
/// is synced; a reader never sees a partial record. Directory syncs of concurrent writers are
/// shared: a writer whose rename is covered by a sync already started after it waits for that one
/// instead of issuing its own. Writes and removals of one id through one object are serialized.
/// Every id is checked with IsJobId before it becomes a path: kInvalidArgument otherwise (Contains
/// returns false). Thread-safe; several processes may use one directory.
class WalDir {
 public:
  /// Creates `dir` when missing. `fs` must outlive the object. `max_record_bytes` > 0: every
  /// record written is first fitted to that size (FitWalRecord; kChatcliMaxRecordBytes keeps
  /// records whole for chatcli's reader); 0 writes jobs as they are.
  static Result<std::unique_ptr<WalDir>> Open(FileSystem& fs, const std::string& dir,
                                              size_t max_record_bytes = 0);
  ~WalDir();

  /// Writes `job`'s record unless a record for its id exists (idempotent). True when this call
  /// created the record, false when it was already there (its contents are left as they were).
  /// Errors of the file system come back as they are; a failed write leaves no record and no
  /// temporary file behind (best effort).
  Result<bool> Append(const Job& job);
  /// Writes `job`'s record, replacing any record of the same id (attempts, next attempt time,
  /// last error after a failure).
  Status Update(const Job& job);
  /// Removes the record of `id` and syncs the directory (ack). kNotFound when there is none.
  Status Remove(const std::string& id);
  /// Removes the records of `ids` with one directory sync for all of them (replay's stale records).
  /// Ids already gone are fine; the first other error stops and is returned.
  Status RemoveMany(const std::vector<std::string>& ids);
  /// The record of `id`: kNotFound when absent; kDataLoss when it fails a check (the file is
  /// then removed).
  Result<Job> Read(const std::string& id);
  /// Whether a record of `id` exists (false for an invalid id).
  bool Contains(const std::string& id);
  /// Every good record. Removes leftover temporaries and records that fail any check (bad magic,
  /// bad length, CRC mismatch, torn tail, bad JSON, unknown version) and counts them; skips
  /// foreign files. Never stops at a bad record.
  Result<WalScan> Scan();
  /// The job ids of the records present (names only, nothing is read or removed): cheap.
  Result<std::vector<std::string>> ListIds();

  /// The directory.
  const std::string& dir() const { return dir_; }
  /// The path of the record of `id`.
  std::string PathFor(const std::string& id) const;

 private:
  // The renames (and unlinks) waiting for one directory sync, and that sync's result.
  struct SyncBatch {
    bool done = false;
    Status status;
  };

  WalDir(FileSystem& fs, std::string dir);
  Status WriteRecord(const Job& job, bool exclusive, bool* created);
  Status WriteOnce(const std::string& id, const std::string& record, const std::string& path);
  Status SyncDirShared();
  Result<Job> ReadChecked(const std::string& id, const std::string& path);
  Status RemoveQuietly(const std::string& path, int64_t* counter);
  void LockId(const std::string& id);
  void UnlockId(const std::string& id);
  bool IsOwnTemporary(const std::string& name);

  FileSystem& fs_;
  const std::string dir_;
  size_t max_record_bytes_ = 0;
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;
  std::shared_ptr<SyncBatch> pending_;  // collecting writers; its sync has not started
  bool syncing_ = false;                // a sync is running (guarded by sync_mu_)
  std::mutex ids_mu_;
  std::condition_variable ids_cv_;
  std::set<std::string> busy_ids_;  // ids with a write or removal in progress (under ids_mu_)
  std::set<std::string> writing_;   // names of this object's temporaries in use (under ids_mu_)
};

}  // namespace mend::lessonq
