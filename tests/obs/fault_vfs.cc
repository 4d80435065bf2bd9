// The fault-injecting SQLite VFS: each file wraps the default VFS's file, which lives right
// behind it in the memory SQLite allocates (szOsFile covers both).
#include "tests/obs/fault_vfs.h"

#include <sqlite3.h>

namespace mend::obs::testing {
namespace {

FaultVfs g_faults;
sqlite3_vfs g_vfs;
sqlite3_vfs* g_real = nullptr;

struct FaultFile {
  sqlite3_file base;
  sqlite3_file* real;
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f)->real; }

int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  return Real(f)->pMethods->xRead(Real(f), buf, n, off);
}
int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  ++g_faults.writes;
  if (g_faults.fail_writes) return SQLITE_IOERR_WRITE;
  return Real(f)->pMethods->xWrite(Real(f), buf, n, off);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) {
  if (g_faults.fail_syncs) return SQLITE_IOERR_FSYNC;
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int del) { return Real(f)->pMethods->xShmUnmap(Real(f), del); }

// Memory-mapped reads are left out (iVersion 2) so every access goes through xRead.
const sqlite3_io_methods kMethods = {
    2,
    Close,
    Read,
    Write,
    Truncate,
    Sync,
    FileSize,
    Lock,
    Unlock,
    CheckReservedLock,
    FileControl,
    SectorSize,
    DeviceCharacteristics,
    ShmMap,
    ShmLock,
    ShmBarrier,
    ShmUnmap,
    nullptr,
    nullptr,
};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  auto* fault = reinterpret_cast<FaultFile*>(file);
  fault->base.pMethods = nullptr;
  if (g_faults.fail_opens) return SQLITE_CANTOPEN;
  fault->real = reinterpret_cast<sqlite3_file*>(fault + 1);
  const int rc = g_real->xOpen(g_real, name, fault->real, flags, out_flags);
  if (rc == SQLITE_OK) fault->base.pMethods = &kMethods;
  return rc;
}

}  // namespace

FaultVfs& RegisterFaultVfs() {
  static const bool registered = [] {
    g_real = sqlite3_vfs_find(nullptr);
    g_vfs = *g_real;
    g_vfs.iVersion = g_real->iVersion;
    g_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + g_real->szOsFile;
    g_vfs.zName = kFaultVfsName;
    g_vfs.pNext = nullptr;
    g_vfs.xOpen = Open;
    return sqlite3_vfs_register(&g_vfs, 0) == SQLITE_OK;
  }();
  (void)registered;
  return g_faults;
}

}  // namespace mend::obs::testing
