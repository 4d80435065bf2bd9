#pragma once

// The file system seam (docs/testing.md): FileSystem and its files (WritableFile, ReadableFile,
// RandomAccessFile, FileLock), PosixFileSystem for the real disk, and the helpers every module
// uses: ReadFileToString, WriteFileAtomically and lexical path functions. File systems are
// thread-safe; an open file is used by one thread at a time.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"

namespace mend {

/// A file open for writing. Data written with Append() is durable only after Sync() returns OK.
/// Not thread-safe. Destroying an unclosed file closes it (errors are then ignored). Operations on
/// a closed file fail with kFailedPrecondition.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  /// Appends `data` at the end of the file.
  virtual Status Append(std::string_view data) = 0;
  virtual Status Sync() = 0;  ///< fsync(2): data and metadata of this file
  /// Closes the file; later operations fail with kFailedPrecondition.
  virtual Status Close() = 0;
};

/// A file open for sequential reading. Not thread-safe.
class ReadableFile {
 public:
  virtual ~ReadableFile() = default;
  /// Reads up to `n` bytes into `out` (replacing its contents); an empty result means end of file.
  virtual Status Read(size_t n, std::string* out) = 0;
  /// Reads exactly `n` bytes (looping over short reads). Ending early is kDataLoss (a torn or
  /// truncated file), so callers can tell truncation apart from I/O errors; `out` then holds the
  /// bytes that were read.
  Status ReadExactly(size_t n, std::string* out);
};

/// A file open for reading and writing at any offset, for storage engines that update pages in
/// place (SQLite through mend's VFS, include/mend/store/sqlite_vfs.h). Like WritableFile, what it
/// writes is durable only after Sync() returns OK: a power cut leaves the file exactly as it was at
/// its last successful Sync() (contents and size), or as it was when opened if it was never synced.
/// Not thread-safe. Destroying an unclosed file closes it; operations on a closed file fail with
/// kFailedPrecondition.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  /// Reads up to `n` bytes at `offset` into `out` (replacing its contents). Fewer bytes come back
  /// only at the end of the file (none at or past it).
  virtual Status ReadAt(uint64_t offset, size_t n, std::string* out) = 0;
  /// Writes all of `data` at `offset`; writing past the end extends the file, with zeros in
  /// any gap.
  virtual Status WriteAt(uint64_t offset, std::string_view data) = 0;
  /// Sets the size: shrinking drops the tail, growing appends zeros (ftruncate(2)).
  virtual Status Truncate(uint64_t size) = 0;
  /// The current size of the file.
  virtual Result<uint64_t> Size() = 0;
  virtual Status Sync() = 0;  ///< fsync(2): data and metadata (the size) of this file
  /// Closes the file; later operations fail with kFailedPrecondition.
  virtual Status Close() = 0;
};

/// An exclusive advisory lock on a file (flock-like: held by this open file, released when the
/// object is destroyed or the process dies).
class FileLock {
 public:
  virtual ~FileLock() = default;
};

/// How OpenWritable treats an existing file.
enum class WriteMode {
  kTruncate,         ///< create or truncate
  kAppend,           ///< create or append
  kCreateExclusive,  ///< fail with kAlreadyExists when the file exists
};

/// What Stat says about a path.
struct FileInfo {
  uint64_t size = 0;          ///< in bytes
  bool is_directory = false;  ///< a directory rather than a file
};

/// The filesystem seam (LevelDB's Env, narrowed to what mend needs). Paths are plain strings;
/// errors carry the path and the system's description. Implementations are thread-safe.
class FileSystem {
 public:
  virtual ~FileSystem() = default;

  /// Opens `path` for writing as `mode` says; its directory entry is durable after SyncDir of the
  /// parent.
  virtual Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path,
                                                             WriteMode mode) = 0;
  /// Opens `path` for reading; kNotFound when it does not exist.
  virtual Result<std::unique_ptr<ReadableFile>> OpenReadable(const std::string& path) = 0;
  /// Opens `path` for reading and writing at any offset; with `create`, a missing file is created
  /// empty (like OpenWritable, its directory entry is durable only after SyncDir of the parent).
  /// Without `create` a missing file is kNotFound. The default is kUnimplemented, for filesystems
  /// that only serve append-only users.
  virtual Result<std::unique_ptr<RandomAccessFile>> OpenRandomAccess(const std::string& path,
                                                                     bool create);
  /// rename(2): atomic replacement of `to`; durable once the parent directory is synced.
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  /// fsync(2) of a directory, making creations, renames and unlinks in it durable.
  virtual Status SyncDir(const std::string& dir) = 0;
  /// Removes a file; durable once the parent directory is synced.
  virtual Status Unlink(const std::string& path) = 0;
  /// Names (not paths) of the entries of `dir`, without "." and "..", sorted.
  virtual Result<std::vector<std::string>> List(const std::string& dir) = 0;
  /// mkdir -p. Existing directories are fine (and keep their mode); PosixFileSystem creates new
  /// ones 0700.
  virtual Status CreateDirs(const std::string& dir) = 0;
  /// The size and kind of `path`; kNotFound when it does not exist.
  virtual Result<FileInfo> Stat(const std::string& path) = 0;
  /// Takes an exclusive lock on `path` (created if missing) without blocking: kUnavailable when
  /// another holder (in this or another process) has it. A second Lock() of the same path in the
  /// same process also fails: the lock belongs to the returned object, not to the process.
  virtual Result<std::unique_ptr<FileLock>> Lock(const std::string& path) = 0;

  /// Whether Stat(path) succeeds.
  bool Exists(const std::string& path) { return Stat(path).ok(); }
};

/// Whole-file helpers on top of any FileSystem.
Result<std::string> ReadFileToString(FileSystem& fs, const std::string& path);
/// Writes `data` to `path` crash-safely: a temporary file `<path>.tmp` → Sync → Rename → SyncDir of
/// the parent. Readers see either the old or the new contents, never a mix. On failure the
/// temporary is removed (best effort). Concurrent writers of one path must serialize themselves.
Status WriteFileAtomically(FileSystem& fs, const std::string& path, std::string_view data);
///@{
/// Purely lexical. JoinPath("a/b", "c") → "a/b/c" with exactly one '/' between the parts (an empty
/// part yields the other). DirName("a/b/c") → "a/b", DirName("c") → ".", DirName("/c") → "/".
/// BaseName("a/b/c") → "c". Trailing slashes are ignored: DirName("a/b/") → "a".
std::string JoinPath(std::string_view a, std::string_view b);
std::string DirName(std::string_view path);
std::string BaseName(std::string_view path);
///@}
/// Purely lexical normal form: repeated slashes collapsed, "." segments dropped, each ".." removing
/// the segment before it (at the root it is dropped), no trailing slash.
/// NormalizePath("/tmp/x/agents/notes/../../ws/") → "/tmp/x/ws"; NormalizePath("a/./b") → "a/b";
/// NormalizePath("../a") → "../a"; "" stays "".
std::string NormalizePath(std::string_view path);

/// The operating system's filesystem (POSIX calls). Every descriptor is opened O_CLOEXEC; EINTR is
/// retried and short writes continue. Errors come from ErrnoToStatus with the operation and the
/// path in the message. Lock() uses flock(2) on a fresh descriptor. Files it creates (OpenWritable,
/// Lock) get mode 0600 masked by the umask: what mend writes is private to its user.
class PosixFileSystem final : public FileSystem {
 public:
  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path,
                                                     WriteMode mode) override;
  Result<std::unique_ptr<ReadableFile>> OpenReadable(const std::string& path) override;
  /// pread/pwrite/ftruncate/fstat/fsync on one O_RDWR descriptor; created files are 0600.
  Result<std::unique_ptr<RandomAccessFile>> OpenRandomAccess(const std::string& path,
                                                             bool create) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status SyncDir(const std::string& dir) override;
  Status Unlink(const std::string& path) override;
  Result<std::vector<std::string>> List(const std::string& dir) override;
  Status CreateDirs(const std::string& dir) override;
  Result<FileInfo> Stat(const std::string& path) override;
  Result<std::unique_ptr<FileLock>> Lock(const std::string& path) override;

  /// A process-wide instance; only main() and defaults should use it.
  static PosixFileSystem* Default();

  /// For files another library opens itself (SQLite databases, which it would create 0644 and whose
  /// -wal and -shm files get the database's mode): creates `path` empty with mode 0600 when it is
  /// missing, and narrows an existing file that others may read or write to 0600.
  static Status MakePrivateFile(const std::string& path);
};

}  // namespace mend
