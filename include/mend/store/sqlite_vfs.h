#pragma once

// SqliteVfs, a SQLite VFS over a mend FileSystem, so the fault-injecting and in-memory file systems
// can fail, tear or power-cut the writes SQLite makes (docs/testing.md). For tests and the chaos
// harness; stores use SQLite's own VFS otherwise.

#include <memory>
#include <string>

#include "mend/base/file_system.h"
#include "mend/base/result.h"

namespace mend::store {

/// A SQLite VFS whose files live in a mend FileSystem, so a FaultInjectionFileSystem over a
/// MemoryFileSystem can fail, tear or power-cut the writes SQLite makes to the database file, its
/// rollback journal and its WAL (tests/store/sqlite_power_cut_test.cc). It is registered under its
/// name, never as the default VFS: a connection uses it only when opened with that name
/// (SqliteStoreOptions::vfs).
///
/// It behaves as SQLite's unix VFS does where durability is concerned: xSync is
/// RandomAccessFile::Sync; a rollback journal, super-journal or WAL that xOpen created has its
/// directory synced at its first xSync (as unix does; a new database file gets no directory sync of
/// its own, its entry becomes durable with the first journal's); xDelete syncs the directory when
/// SQLite asks; xAccess reports an empty file as missing (an empty journal is not hot). Writes are
/// described as power-safe overwrites on 4096-byte sectors, like unix's default.
///
/// Locks (xLock/xUnlock/xCheckReservedLock and the WAL's xShmLock) are kept in a table inside this
/// object: they exclude connections of this process that use this VFS, not other processes. The
/// WAL index (xShmMap) is process memory shared by those connections and dropped when the last one
/// closes; SQLite rebuilds it from the WAL, which is how it comes back after a crash. Files SQLite
/// opens without a name (temporary files) live in a private MemoryFileSystem. Paths go to the
/// FileSystem as SQLite gives them (xFullPathname returns its input).
///
/// A connection that lived through a CutPower() is a process that died: close it before opening
/// the database again, and keep it from writing meanwhile (its open files already fail; SQLite's
/// close may still try to delete or checkpoint through the path, which a FaultInjectionFileSystem
/// with every operation failing prevents).
class SqliteVfs {
 public:
  /// Registers a VFS named `name` over `fs`, which must outlive this object. kAlreadyExists when
  /// SQLite already has a VFS of that name.
  static Result<std::unique_ptr<SqliteVfs>> Register(const std::string& name, FileSystem* fs);
  /// Unregisters the VFS. Every connection using it must be closed first.
  ~SqliteVfs();
  SqliteVfs(const SqliteVfs&) = delete;
  SqliteVfs& operator=(const SqliteVfs&) = delete;

  /// The name the VFS is registered under.
  const std::string& name() const;

  struct Impl;

 private:
  explicit SqliteVfs(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mend::store
