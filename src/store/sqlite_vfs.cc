#include "mend/store/sqlite_vfs.h"

#include <sqlite3.h>

#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "mend/base/memory_file_system.h"

namespace mend::store {

namespace {

struct VfsFile;

// The in-process lock of one database file (SQLite's five-state file lock).
struct FileLockState {
  int shared = 0;  // Connections holding SHARED or more.
  const VfsFile* reserved = nullptr;
  const VfsFile* pending = nullptr;
  const VfsFile* exclusive = nullptr;
};

// The WAL index of one database: regions of memory shared by its connections, with the WAL's
// eight shm locks.
struct ShmNode {
  std::vector<std::unique_ptr<char[]>> regions;
  int refs = 0;
  int shared[SQLITE_SHM_NLOCK] = {};
  const VfsFile* exclusive[SQLITE_SHM_NLOCK] = {};
};

}  // namespace

struct SqliteVfs::Impl {
  sqlite3_vfs vfs{};
  std::string name;
  FileSystem* fs = nullptr;
  sqlite3_vfs* base = nullptr;  // SQLite's default VFS: randomness, sleep and time.
  MemoryFileSystem temp_fs;     // Files SQLite opens without a name.

  std::mutex mu;  // Guards what follows.
  std::map<std::string, FileLockState> locks;
  std::map<std::string, std::shared_ptr<ShmNode>> shm;
  uint64_t next_temp = 0;
};

namespace {

using Impl = SqliteVfs::Impl;

Impl* ImplOf(sqlite3_vfs* vfs) { return static_cast<Impl*>(vfs->pAppData); }

// SQLite allocates szOsFile bytes per open file and hands them to xOpen; this struct is built in
// them with placement new and destroyed in xClose. `base` must come first.
struct VfsFile {
  sqlite3_file base;
  Impl* owner;
  FileSystem* fs;  // owner->fs, or owner->temp_fs for unnamed files
  std::unique_ptr<RandomAccessFile> file;
  std::string path;
  bool delete_on_close = false;
  bool sync_dir_pending = false;  // A new journal or WAL: its entry is made durable at first sync.
  int lock_level = SQLITE_LOCK_NONE;
  std::shared_ptr<ShmNode> shm;
  uint32_t shm_shared = 0;  // Bit i: this connection holds shm lock i shared / exclusive.
  uint32_t shm_exclusive = 0;
};

VfsFile* FileOf(sqlite3_file* file) { return reinterpret_cast<VfsFile*>(file); }

// A write error becomes SQLITE_FULL when the disk is full (SQLite then reports "database or disk
// is full", which the store maps to kResourceExhausted), else the given I/O error code.
int IoError(const Status& s, int code) {
  return s.code() == StatusCode::kResourceExhausted ? SQLITE_FULL : code;
}

void ReleaseShm(VfsFile* f) {
  if (f->shm == nullptr) return;
  ShmNode& node = *f->shm;
  for (int i = 0; i < SQLITE_SHM_NLOCK; ++i) {
    if (f->shm_shared & (1u << i)) --node.shared[i];
    if (f->shm_exclusive & (1u << i)) node.exclusive[i] = nullptr;
  }
  f->shm_shared = f->shm_exclusive = 0;
  if (--node.refs == 0) f->owner->shm.erase(f->path);
  f->shm.reset();
}

int Unlock(sqlite3_file* file, int level) {
  VfsFile* f = FileOf(file);
  std::lock_guard<std::mutex> guard(f->owner->mu);
  if (f->lock_level <= level) return SQLITE_OK;
  FileLockState& st = f->owner->locks[f->path];
  if (st.reserved == f) st.reserved = nullptr;
  if (st.pending == f) st.pending = nullptr;
  if (st.exclusive == f) st.exclusive = nullptr;
  if (level == SQLITE_LOCK_NONE) --st.shared;
  f->lock_level = level;
  if (st.shared == 0) f->owner->locks.erase(f->path);
  return SQLITE_OK;
}

int Close(sqlite3_file* file) {
  VfsFile* f = FileOf(file);
  Unlock(file, SQLITE_LOCK_NONE);
  {
    std::lock_guard<std::mutex> guard(f->owner->mu);
    ReleaseShm(f);
  }
  // A close error cannot be acted on: SQLite forgets the file either way.
  f->file->Close().IgnoreError();
  if (f->delete_on_close) f->fs->Unlink(f->path).IgnoreError();
  f->~VfsFile();
  return SQLITE_OK;
}

int Read(sqlite3_file* file, void* buf, int amount, sqlite3_int64 offset) {
  VfsFile* f = FileOf(file);
  std::string out;
  const size_t n = static_cast<size_t>(amount);
  if (!f->file->ReadAt(static_cast<uint64_t>(offset), n, &out).ok()) return SQLITE_IOERR_READ;
  std::memcpy(buf, out.data(), out.size());
  if (out.size() < n) {
    // SQLite requires the rest zero-filled: it relies on that for pages past the end of a file.
    std::memset(static_cast<char*>(buf) + out.size(), 0, n - out.size());
    return SQLITE_IOERR_SHORT_READ;
  }
  return SQLITE_OK;
}

int Write(sqlite3_file* file, const void* buf, int amount, sqlite3_int64 offset) {
  VfsFile* f = FileOf(file);
  Status s = f->file->WriteAt(
      static_cast<uint64_t>(offset),
      std::string_view(static_cast<const char*>(buf), static_cast<size_t>(amount)));
  return s.ok() ? SQLITE_OK : IoError(s, SQLITE_IOERR_WRITE);
}

int Truncate(sqlite3_file* file, sqlite3_int64 size) {
  Status s = FileOf(file)->file->Truncate(static_cast<uint64_t>(size));
  return s.ok() ? SQLITE_OK : IoError(s, SQLITE_IOERR_TRUNCATE);
}

int Sync(sqlite3_file* file, int /*flags*/) {
  VfsFile* f = FileOf(file);
  if (!f->file->Sync().ok()) return SQLITE_IOERR_FSYNC;
  if (f->sync_dir_pending) {
    // Unlike unix, a failed directory sync is reported (and tried again at the next sync): the
    // journal's entry is not durable yet.
    if (!f->fs->SyncDir(DirName(f->path)).ok()) return SQLITE_IOERR_DIR_FSYNC;
    f->sync_dir_pending = false;
  }
  return SQLITE_OK;
}

int FileSize(sqlite3_file* file, sqlite3_int64* size) {
  Result<uint64_t> r = FileOf(file)->file->Size();
  if (!r.ok()) return SQLITE_IOERR_FSTAT;
  *size = static_cast<sqlite3_int64>(*r);
  return SQLITE_OK;
}

int Lock(sqlite3_file* file, int level) {
  VfsFile* f = FileOf(file);
  std::lock_guard<std::mutex> guard(f->owner->mu);
  if (f->lock_level >= level) return SQLITE_OK;
  FileLockState& st = f->owner->locks[f->path];
  const auto other = [f](const VfsFile* holder) { return holder != nullptr && holder != f; };
  switch (level) {
    case SQLITE_LOCK_SHARED:
      // A pending writer keeps new readers out so that it can drain the existing ones.
      if (other(st.pending) || other(st.exclusive)) return SQLITE_BUSY;
      ++st.shared;
      f->lock_level = SQLITE_LOCK_SHARED;
      return SQLITE_OK;
    case SQLITE_LOCK_RESERVED:
      if (other(st.reserved) || other(st.pending) || other(st.exclusive)) return SQLITE_BUSY;
      st.reserved = f;
      f->lock_level = SQLITE_LOCK_RESERVED;
      return SQLITE_OK;
    case SQLITE_LOCK_EXCLUSIVE:
      if (other(st.pending) || other(st.exclusive)) return SQLITE_BUSY;
      st.pending = f;
      f->lock_level = SQLITE_LOCK_PENDING;
      if (st.shared > 1) return SQLITE_BUSY;  // Other readers remain; SQLite retries.
      st.exclusive = f;
      f->lock_level = SQLITE_LOCK_EXCLUSIVE;
      return SQLITE_OK;
    default:
      return SQLITE_MISUSE;  // SQLite never asks for PENDING directly.
  }
}

int CheckReservedLock(sqlite3_file* file, int* out) {
  VfsFile* f = FileOf(file);
  std::lock_guard<std::mutex> guard(f->owner->mu);
  auto it = f->owner->locks.find(f->path);
  *out = it != f->owner->locks.end() &&
                 (it->second.reserved != nullptr || it->second.pending != nullptr ||
                  it->second.exclusive != nullptr)
             ? 1
             : 0;
  return SQLITE_OK;
}

int FileControl(sqlite3_file* /*file*/, int /*op*/, void* /*arg*/) { return SQLITE_NOTFOUND; }

int SectorSize(sqlite3_file* /*file*/) { return 4096; }

int DeviceCharacteristics(sqlite3_file* /*file*/) { return SQLITE_IOCAP_POWERSAFE_OVERWRITE; }

int ShmMap(sqlite3_file* file, int region, int region_size, int extend, void volatile** out) {
  VfsFile* f = FileOf(file);
  std::lock_guard<std::mutex> guard(f->owner->mu);
  if (f->shm == nullptr) {
    std::shared_ptr<ShmNode>& node = f->owner->shm[f->path];
    if (node == nullptr) node = std::make_shared<ShmNode>();
    ++node->refs;
    f->shm = node;
  }
  std::vector<std::unique_ptr<char[]>>& regions = f->shm->regions;
  const auto index = static_cast<size_t>(region);
  if (regions.size() <= index) {
    if (!extend) {
      *out = nullptr;
      return SQLITE_OK;
    }
    while (regions.size() <= index) {
      regions.push_back(std::make_unique<char[]>(static_cast<size_t>(region_size)));  // Zeroed.
    }
  }
  *out = regions[index].get();
  return SQLITE_OK;
}

int ShmLock(sqlite3_file* file, int offset, int n, int flags) {
  VfsFile* f = FileOf(file);
  std::lock_guard<std::mutex> guard(f->owner->mu);
  if (f->shm == nullptr) return SQLITE_IOERR_SHMLOCK;
  ShmNode& node = *f->shm;
  if (flags & SQLITE_SHM_UNLOCK) {
    for (int i = offset; i < offset + n; ++i) {
      if (f->shm_shared & (1u << i)) --node.shared[i];
      if (f->shm_exclusive & (1u << i)) node.exclusive[i] = nullptr;
      f->shm_shared &= ~(1u << i);
      f->shm_exclusive &= ~(1u << i);
    }
    return SQLITE_OK;
  }
  if (flags & SQLITE_SHM_SHARED) {
    for (int i = offset; i < offset + n; ++i) {
      if (node.exclusive[i] != nullptr && node.exclusive[i] != f) return SQLITE_BUSY;
    }
    for (int i = offset; i < offset + n; ++i) {
      if (f->shm_shared & (1u << i)) continue;
      ++node.shared[i];
      f->shm_shared |= 1u << i;
    }
    return SQLITE_OK;
  }
  for (int i = offset; i < offset + n; ++i) {
    const int others = node.shared[i] - ((f->shm_shared & (1u << i)) ? 1 : 0);
    if ((node.exclusive[i] != nullptr && node.exclusive[i] != f) || others > 0) return SQLITE_BUSY;
  }
  for (int i = offset; i < offset + n; ++i) {
    node.exclusive[i] = f;
    f->shm_exclusive |= 1u << i;
  }
  return SQLITE_OK;
}

// A full memory barrier between the connections sharing the WAL index: taking and releasing the
// VFS's mutex orders every access before it against every one after it, as unix's xShmBarrier
// does with its own mutex (and, unlike a bare fence, ThreadSanitizer understands it).
void ShmBarrier(sqlite3_file* file) {
  VfsFile* f = FileOf(file);
  std::lock_guard<std::mutex> guard(f->owner->mu);
}

int ShmUnmap(sqlite3_file* file, int /*delete_flag*/) {
  VfsFile* f = FileOf(file);
  std::lock_guard<std::mutex> guard(f->owner->mu);
  ReleaseShm(f);
  return SQLITE_OK;
}

constexpr sqlite3_io_methods kIoMethods = {
    /*iVersion=*/2,
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
    /*xFetch=*/nullptr,
    /*xUnfetch=*/nullptr,
};

int Open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  Impl* impl = ImplOf(vfs);
  file->pMethods = nullptr;  // SQLite calls xClose only when xOpen set the methods.
  FileSystem* fs = impl->fs;
  std::string path;
  bool delete_on_close = (flags & SQLITE_OPEN_DELETEONCLOSE) != 0;
  if (name == nullptr) {
    std::lock_guard<std::mutex> guard(impl->mu);
    fs = &impl->temp_fs;
    path = "/temp" + std::to_string(impl->next_temp++);
    delete_on_close = true;
  } else {
    path = name;
  }
  const bool create = (flags & SQLITE_OPEN_CREATE) != 0;
  bool is_new = false;
  if (create) {
    Result<FileInfo> info = fs->Stat(path);
    if (info.ok() && (flags & SQLITE_OPEN_EXCLUSIVE) != 0) return SQLITE_CANTOPEN;
    if (!info.ok() && info.status().code() != StatusCode::kNotFound) return SQLITE_CANTOPEN;
    is_new = !info.ok();
  }
  Result<std::unique_ptr<RandomAccessFile>> opened = fs->OpenRandomAccess(path, create);
  if (!opened.ok()) return SQLITE_CANTOPEN;
  auto* f = new (file) VfsFile{};
  f->owner = impl;
  f->fs = fs;
  f->file = std::move(opened).value();
  f->path = std::move(path);
  f->delete_on_close = delete_on_close;
  constexpr int kJournals = SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL | SQLITE_OPEN_WAL;
  f->sync_dir_pending = is_new && (flags & kJournals) != 0;
  if (out_flags != nullptr) *out_flags = flags;
  file->pMethods = &kIoMethods;
  return SQLITE_OK;
}

int Delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  Impl* impl = ImplOf(vfs);
  Status s = impl->fs->Unlink(name);
  if (s.code() == StatusCode::kNotFound) return SQLITE_IOERR_DELETE_NOENT;
  if (!s.ok()) return SQLITE_IOERR_DELETE;
  if (sync_dir && !impl->fs->SyncDir(DirName(name)).ok()) return SQLITE_IOERR_DIR_FSYNC;
  return SQLITE_OK;
}

int Access(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  Result<FileInfo> info = ImplOf(vfs)->fs->Stat(name);
  if (!info.ok()) {
    // Not knowing is an error: answering "missing" could hide a hot journal.
    if (info.status().code() != StatusCode::kNotFound) return SQLITE_IOERR_ACCESS;
    *out = 0;
    return SQLITE_OK;
  }
  // Like unix, an empty file does not exist for SQLITE_ACCESS_EXISTS: an empty journal is not hot.
  *out = flags == SQLITE_ACCESS_EXISTS ? (info->is_directory || info->size > 0) : 1;
  return SQLITE_OK;
}

int FullPathname(sqlite3_vfs* /*vfs*/, const char* name, int size, char* out) {
  const size_t len = std::strlen(name);
  if (len + 1 > static_cast<size_t>(size)) return SQLITE_CANTOPEN;
  std::memcpy(out, name, len + 1);
  return SQLITE_OK;
}

void* DlOpen(sqlite3_vfs* vfs, const char* name) {
  return ImplOf(vfs)->base->xDlOpen(ImplOf(vfs)->base, name);
}
void DlError(sqlite3_vfs* vfs, int n, char* out) {
  ImplOf(vfs)->base->xDlError(ImplOf(vfs)->base, n, out);
}
void (*DlSym(sqlite3_vfs* vfs, void* handle, const char* symbol))(void) {
  return ImplOf(vfs)->base->xDlSym(ImplOf(vfs)->base, handle, symbol);
}
void DlClose(sqlite3_vfs* vfs, void* handle) {
  ImplOf(vfs)->base->xDlClose(ImplOf(vfs)->base, handle);
}
int Randomness(sqlite3_vfs* vfs, int n, char* out) {
  return ImplOf(vfs)->base->xRandomness(ImplOf(vfs)->base, n, out);
}
int Sleep(sqlite3_vfs* vfs, int micros) {
  return ImplOf(vfs)->base->xSleep(ImplOf(vfs)->base, micros);
}
int CurrentTime(sqlite3_vfs* vfs, double* out) {
  return ImplOf(vfs)->base->xCurrentTime(ImplOf(vfs)->base, out);
}
int GetLastError(sqlite3_vfs* vfs, int n, char* out) {
  return ImplOf(vfs)->base->xGetLastError(ImplOf(vfs)->base, n, out);
}
int CurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  sqlite3_vfs* base = ImplOf(vfs)->base;
  if (base->iVersion >= 2 && base->xCurrentTimeInt64 != nullptr) {
    return base->xCurrentTimeInt64(base, out);
  }
  double days = 0;
  const int rc = base->xCurrentTime(base, &days);
  *out = static_cast<sqlite3_int64>(days * 86400000.0);
  return rc;
}

}  // namespace

SqliteVfs::SqliteVfs(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SqliteVfs::~SqliteVfs() { sqlite3_vfs_unregister(&impl_->vfs); }

const std::string& SqliteVfs::name() const { return impl_->name; }

Result<std::unique_ptr<SqliteVfs>> SqliteVfs::Register(const std::string& name, FileSystem* fs) {
  if (int rc = sqlite3_initialize(); rc != SQLITE_OK) {
    return InternalError(std::string("sqlite3_initialize: ") + sqlite3_errstr(rc));
  }
  if (sqlite3_vfs_find(name.c_str()) != nullptr) {
    return AlreadyExistsError("a SQLite VFS named " + name + " is already registered");
  }
  auto impl = std::make_unique<Impl>();
  impl->name = name;
  impl->fs = fs;
  impl->base = sqlite3_vfs_find(nullptr);
  if (impl->base == nullptr) return InternalError("SQLite has no default VFS");
  sqlite3_vfs& v = impl->vfs;
  v.iVersion = 2;
  v.szOsFile = sizeof(VfsFile);
  v.mxPathname = 1024;
  v.zName = impl->name.c_str();
  v.pAppData = impl.get();
  v.xOpen = Open;
  v.xDelete = Delete;
  v.xAccess = Access;
  v.xFullPathname = FullPathname;
  v.xDlOpen = DlOpen;
  v.xDlError = DlError;
  v.xDlSym = DlSym;
  v.xDlClose = DlClose;
  v.xRandomness = Randomness;
  v.xSleep = Sleep;
  v.xCurrentTime = CurrentTime;
  v.xGetLastError = GetLastError;
  v.xCurrentTimeInt64 = CurrentTimeInt64;
  if (int rc = sqlite3_vfs_register(&v, /*makeDflt=*/0); rc != SQLITE_OK) {
    return InternalError(std::string("sqlite3_vfs_register: ") + sqlite3_errstr(rc));
  }
  return std::unique_ptr<SqliteVfs>(new SqliteVfs(std::move(impl)));
}

}  // namespace mend::store
