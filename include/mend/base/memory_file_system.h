#pragma once

// MemoryFileSystem, an in-memory FileSystem for tests that models durability: CutPower keeps only
// what a disk keeps after a power cut (synced bytes, synced directory entries; docs/testing.md).
// Thread-safe.

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "mend/base/file_system.h"

namespace mend {

/// An in-memory filesystem for tests. It models durability: every file has its written bytes and
/// the prefix that has been synced, and every directory entry (creation, rename, unlink) is either
/// synced (SyncDir of its parent) or not. CutPower() keeps only what a real disk would keep after a
/// power cut: synced bytes of files whose entries were synced. Thread-safe.
///
/// The power-cut model, for every kind of file: a file's durable contents are exactly its contents
/// (bytes and size) at its last successful Sync() — of a WritableFile or a RandomAccessFile — and
/// empty when it was never synced. Writes since then, in place or appended, and truncations are
/// all lost together; a cut never keeps some unsynced writes and drops others (torn writes come
/// from FaultInjectionFileSystem instead).
///
/// Simplifications: directories made by CreateDirs() are durable at once (as if their parent had
/// been synced); Rename() of a directory is kUnimplemented; a rename between two directories is
/// made durable separately in each (syncing only the target keeps both names after a power cut).
/// Errors use the codes ErrnoToStatus gives the matching errno. Paths are normalized lexically
/// ("a//b/./c" is "a/b/c"); "/" and "." are roots that always exist. Files and locks handed out
/// may outlive the filesystem.
class MemoryFileSystem final : public FileSystem {
 public:
  MemoryFileSystem();
  ~MemoryFileSystem() override;

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

  /// Discards file bytes not yet synced (the directory entries stay).
  void DropUnsyncedData();
  /// Simulates a power cut: DropUnsyncedData() plus undoing every directory change not yet made
  /// durable by SyncDir. Open files become invalid (their operations fail with
  /// kFailedPrecondition) and locks are released, as if the owning process had died.
  void CutPower();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace mend
