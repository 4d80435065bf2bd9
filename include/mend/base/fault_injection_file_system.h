#pragma once

// FaultInjectionFileSystem, a FileSystem wrapper for tests that fails, tears or crashes chosen
// operations; over a MemoryFileSystem it also cuts power (docs/testing.md). The crash tests of the
// stores and the lesson queue run on it. Thread-safe.

#include <memory>
#include <mutex>
#include <string>

#include "mend/base/file_system.h"

namespace mend {

/// The kinds of filesystem operation a fault can target.
enum class FsOp {
  kOpen,      ///< OpenWritable / OpenReadable / OpenRandomAccess
  kRead,      ///< ReadableFile::Read / RandomAccessFile::ReadAt
  kWrite,     ///< WritableFile::Append / RandomAccessFile::WriteAt
  kSync,      ///< WritableFile::Sync / RandomAccessFile::Sync
  kTruncate,  ///< RandomAccessFile::Truncate
  kClose,
  kRename,
  kSyncDir,
  kUnlink,
  kList,
  kCreateDirs,
  kStat,  ///< FileSystem::Stat / RandomAccessFile::Size
  kLock,
};

/// Wraps another FileSystem and injects faults. Thread-safe.
///
///   FaultInjectionFileSystem fs(&memory_fs);
///   fs.FailNext(FsOp::kSync, ENOSPC);        // the next fsync fails with ENOSPC
///   fs.FailAfter(FsOp::kWrite, 3, EIO);      // the 4th write from now fails (a crash point)
///   fs.CutPower();                           // forwarded to a MemoryFileSystem base
///
/// Failed operations return ErrnoToStatus(errno) (the message names the operation and the path and
/// says "injected fault") and have no effect; a file whose Close() failed stays open until it is
/// destroyed. A failing partial write (SetTornWrites) first writes a prefix of the data, as a real
/// disk may: an Append writes the first half of its data, a WriteAt the first half at its offset.
/// Files handed out keep following the fault plan and may outlive this object.
class FaultInjectionFileSystem final : public FileSystem {
 public:
  /// `base` must outlive this object. CutPower/DropUnsyncedData need `base` to be a
  /// MemoryFileSystem (otherwise they return kUnimplemented).
  explicit FaultInjectionFileSystem(FileSystem* base);
  ~FaultInjectionFileSystem() override;

  /// The next operation of kind `op` fails with `err`. Replaces a pending FailAfter() of `op`.
  void FailNext(FsOp op, int err);
  /// After `n` more successful operations of kind `op`, the following one fails with `err`.
  void FailAfter(FsOp op, int n, int err);
  /// Every operation of kind `op` fails with `err` until ClearFaults().
  void FailAlways(FsOp op, int err);
  /// A crash point: after `n` more operations that change the filesystem (kWrite, kSync, kTruncate,
  /// kRename, kSyncDir, kUnlink, kCreateDirs), the next one and every operation after it, of any
  /// kind, fail with `err` until ClearFaults(), as if the process had lost its disk right there
  /// (with SetTornWrites, a write failing at that point leaves its first half). Followed by
  /// CutPower() it is a power cut at exactly that point, whatever the program did after it.
  void CrashAfter(int n, int err);
  /// Whether the crash point of CrashAfter() has been reached.
  bool Crashed() const;
  /// Disarms every fault (counts are kept).
  void ClearFaults();
  /// When on, a failing kWrite writes the first half of its data before failing.
  void SetTornWrites(bool on);
  /// How many operations of kind `op` were attempted (failed ones included).
  int Count(FsOp op) const;

  ///@{
  /// Forwarded to the MemoryFileSystem below (kUnimplemented over another one).
  Status DropUnsyncedData();
  Status CutPower();
  ///@}

  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path,
                                                     WriteMode mode) override;
  Result<std::unique_ptr<ReadableFile>> OpenReadable(const std::string& path) override;
  Result<std::unique_ptr<RandomAccessFile>> OpenRandomAccess(const std::string& path,
                                                             bool create) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status SyncDir(const std::string& dir) override;
  Status Unlink(const std::string& path) override;
  Result<std::vector<std::string>> List(const std::string& dir) override;
  Status CreateDirs(const std::string& dir) override;
  Result<FileInfo> Stat(const std::string& path) override;
  Result<std::unique_ptr<FileLock>> Lock(const std::string& path) override;

 private:
  class Faults;
  FileSystem* base_;
  std::shared_ptr<Faults> faults_;
};

}  // namespace mend
