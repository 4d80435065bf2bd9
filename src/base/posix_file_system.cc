#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "mend/base/file_system.h"

namespace mend {

namespace {

Status PosixError(std::string_view op, std::string_view path) {
  const int err = errno;
  std::string context(op);
  context += ' ';
  context.append(path);
  return ErrnoToStatus(err, context);
}

// Retries a system call interrupted by a signal; a signal is not an error of the operation.
template <typename F>
auto RetryOnEintr(F f) {
  decltype(f()) r;
  do {
    r = f();
  } while (r < 0 && errno == EINTR);
  return r;
}

void CloseIgnoringErrors(int fd) {
  // After close(2) fails the descriptor is released anyway (Linux); retrying could close a
  // descriptor another thread just opened.
  ::close(fd);
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) CloseIgnoringErrors(fd_);
  }

  Status Append(std::string_view data) override {
    if (fd_ < 0) return FailedPreconditionError("append to closed file " + path_);
    while (!data.empty()) {
      const ssize_t n = RetryOnEintr([&] { return ::write(fd_, data.data(), data.size()); });
      if (n < 0) return PosixError("write", path_);
      data.remove_prefix(static_cast<size_t>(n));  // A short write continues with the rest.
    }
    return OkStatus();
  }

  Status Sync() override {
    if (fd_ < 0) return FailedPreconditionError("sync of closed file " + path_);
    if (RetryOnEintr([&] { return ::fsync(fd_); }) < 0) return PosixError("fsync", path_);
    return OkStatus();
  }

  Status Close() override {
    if (fd_ < 0) return FailedPreconditionError("file already closed: " + path_);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) < 0 && errno != EINTR) return PosixError("close", path_);
    return OkStatus();
  }

 private:
  int fd_;
  std::string path_;
};

class PosixReadableFile final : public ReadableFile {
 public:
  PosixReadableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixReadableFile() override { CloseIgnoringErrors(fd_); }

  Status Read(size_t n, std::string* out) override {
    out->resize(n);
    const ssize_t got = RetryOnEintr([&] { return ::read(fd_, out->data(), n); });
    if (got < 0) {
      out->clear();
      return PosixError("read", path_);
    }
    out->resize(static_cast<size_t>(got));
    return OkStatus();
  }

 private:
  int fd_;
  std::string path_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixRandomAccessFile() override {
    if (fd_ >= 0) CloseIgnoringErrors(fd_);
  }

  Status ReadAt(uint64_t offset, size_t n, std::string* out) override {
    out->clear();
    MEND_RETURN_IF_ERROR(CheckOpen("read"));
    out->resize(n);
    size_t got = 0;
    while (got < n) {  // pread may return less than asked before the end of the file.
      const ssize_t r = RetryOnEintr([&] {
        return ::pread(fd_, out->data() + got, n - got, static_cast<off_t>(offset + got));
      });
      if (r < 0) {
        out->clear();
        return PosixError("pread", path_);
      }
      if (r == 0) break;  // End of file.
      got += static_cast<size_t>(r);
    }
    out->resize(got);
    return OkStatus();
  }

  Status WriteAt(uint64_t offset, std::string_view data) override {
    MEND_RETURN_IF_ERROR(CheckOpen("write"));
    while (!data.empty()) {
      const ssize_t n = RetryOnEintr(
          [&] { return ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(offset)); });
      if (n < 0) return PosixError("pwrite", path_);
      data.remove_prefix(static_cast<size_t>(n));
      offset += static_cast<uint64_t>(n);
    }
    return OkStatus();
  }

  Status Truncate(uint64_t size) override {
    MEND_RETURN_IF_ERROR(CheckOpen("truncate"));
    if (RetryOnEintr([&] { return ::ftruncate(fd_, static_cast<off_t>(size)); }) < 0) {
      return PosixError("ftruncate", path_);
    }
    return OkStatus();
  }

  Result<uint64_t> Size() override {
    MEND_RETURN_IF_ERROR(CheckOpen("stat"));
    struct stat st;
    if (::fstat(fd_, &st) < 0) return PosixError("fstat", path_);
    return static_cast<uint64_t>(st.st_size);
  }

  Status Sync() override {
    MEND_RETURN_IF_ERROR(CheckOpen("sync"));
    if (RetryOnEintr([&] { return ::fsync(fd_); }) < 0) return PosixError("fsync", path_);
    return OkStatus();
  }

  Status Close() override {
    if (fd_ < 0) return FailedPreconditionError("file already closed: " + path_);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) < 0 && errno != EINTR) return PosixError("close", path_);
    return OkStatus();
  }

 private:
  Status CheckOpen(std::string_view op) const {
    if (fd_ >= 0) return OkStatus();
    return FailedPreconditionError(std::string(op) + " of closed file " + path_);
  }

  int fd_;
  std::string path_;
};

// flock(2) locks belong to the open file description, so a second open() of the same path in
// this process conflicts with the first just as another process would (unlike fcntl locks).
class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { CloseIgnoringErrors(fd_); }  // Closing releases the lock.

 private:
  int fd_;
};

int OpenFlags(WriteMode mode) {
  const int base = O_WRONLY | O_CREAT | O_CLOEXEC;
  switch (mode) {
    case WriteMode::kTruncate:
      return base | O_TRUNC;
    case WriteMode::kAppend:
      return base | O_APPEND;
    case WriteMode::kCreateExclusive:
      return base | O_EXCL;
  }
  return base;
}

}  // namespace

Result<std::unique_ptr<WritableFile>> PosixFileSystem::OpenWritable(const std::string& path,
                                                                    WriteMode mode) {
  // Everything mend writes is private to its user: new files are 0600 (before the umask).
  const int fd = RetryOnEintr([&] { return ::open(path.c_str(), OpenFlags(mode), 0600); });
  if (fd < 0) return PosixError("open", path);
  return std::unique_ptr<WritableFile>(std::make_unique<PosixWritableFile>(fd, path));
}

Result<std::unique_ptr<ReadableFile>> PosixFileSystem::OpenReadable(const std::string& path) {
  const int fd = RetryOnEintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); });
  if (fd < 0) return PosixError("open", path);
  return std::unique_ptr<ReadableFile>(std::make_unique<PosixReadableFile>(fd, path));
}

Result<std::unique_ptr<RandomAccessFile>> PosixFileSystem::OpenRandomAccess(const std::string& path,
                                                                            bool create) {
  const int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0);
  const int fd = RetryOnEintr([&] { return ::open(path.c_str(), flags, 0600); });
  if (fd < 0) return PosixError("open", path);
  return std::unique_ptr<RandomAccessFile>(std::make_unique<PosixRandomAccessFile>(fd, path));
}

Status PosixFileSystem::Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) < 0) return PosixError("rename", from + " to " + to);
  return OkStatus();
}

Status PosixFileSystem::SyncDir(const std::string& dir) {
  const int fd =
      RetryOnEintr([&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (fd < 0) return PosixError("open directory", dir);
  Status s;
  if (RetryOnEintr([&] { return ::fsync(fd); }) < 0) s = PosixError("fsync directory", dir);
  CloseIgnoringErrors(fd);
  return s;
}

Status PosixFileSystem::Unlink(const std::string& path) {
  if (::unlink(path.c_str()) < 0) return PosixError("unlink", path);
  return OkStatus();
}

Result<std::vector<std::string>> PosixFileSystem::List(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());  // glibc opens the directory with O_CLOEXEC.
  if (d == nullptr) return PosixError("opendir", dir);
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(d)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  const int err = errno;
  ::closedir(d);
  if (err != 0) return ErrnoToStatus(err, "readdir " + dir);
  std::sort(names.begin(), names.end());
  return names;
}

Status PosixFileSystem::CreateDirs(const std::string& dir) {
  if (dir.empty()) return InvalidArgumentError("CreateDirs of an empty path");
  // Create every prefix ending before a '/', then the whole path.
  for (size_t pos = dir.find('/', 1);; pos = dir.find('/', pos + 1)) {
    const std::string prefix = dir.substr(0, pos);
    // Directories mend creates are private to its user, like its files (0700 before the umask).
    if (::mkdir(prefix.c_str(), 0700) < 0 && errno != EEXIST) return PosixError("mkdir", prefix);
    if (pos == std::string::npos) break;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) < 0) return PosixError("stat", dir);
  if (!S_ISDIR(st.st_mode)) return ErrnoToStatus(ENOTDIR, "mkdir " + dir);
  return OkStatus();
}

Result<FileInfo> PosixFileSystem::Stat(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) < 0) return PosixError("stat", path);
  FileInfo info;
  info.size = static_cast<uint64_t>(st.st_size);
  info.is_directory = S_ISDIR(st.st_mode);
  return info;
}

Result<std::unique_ptr<FileLock>> PosixFileSystem::Lock(const std::string& path) {
  const int fd =
      RetryOnEintr([&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600); });
  if (fd < 0) return PosixError("open lock file", path);
  if (RetryOnEintr([&] { return ::flock(fd, LOCK_EX | LOCK_NB); }) < 0) {
    Status s = PosixError("lock", path);
    CloseIgnoringErrors(fd);
    return s;
  }
  return std::unique_ptr<FileLock>(std::make_unique<PosixFileLock>(fd));
}

PosixFileSystem* PosixFileSystem::Default() {
  static PosixFileSystem* fs = new PosixFileSystem();
  return fs;
}

Status PosixFileSystem::MakePrivateFile(const std::string& path) {
  // A file that is missing cannot be open (or locked) anywhere in this process, so creating it
  // with O_EXCL and closing it is safe. An existing one is narrowed by path: a close() of a
  // descriptor of it would release the locks of every SQLite connection of this process on it,
  // and another process closing its own connection would then believe it was the last one, and
  // checkpoint and delete the WAL that this process goes on writing into.
  const int fd = RetryOnEintr(
      [&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600); });
  if (fd >= 0) {
    ::close(fd);
    return OkStatus();
  }
  if (errno != EEXIST) return ErrnoToStatus(errno, "open " + path);
  struct stat st;
  if (::stat(path.c_str(), &st) < 0) return ErrnoToStatus(errno, "stat " + path);
  if ((st.st_mode & 077) != 0 && ::chmod(path.c_str(), 0600) < 0) {
    return ErrnoToStatus(errno, "chmod " + path);
  }
  return OkStatus();
}

}  // namespace mend
