#include "mend/base/memory_file_system.h"

#include <algorithm>
#include <cerrno>

namespace mend {

namespace {

// One inode. `data` is what readers see; `durable` is what a disk holds after a power cut (the
// contents at the last successful Sync()).
struct FileNode {
  std::string data;
  std::string durable;
};

struct Entry {
  bool is_directory = false;
  std::shared_ptr<FileNode> file;  // Null for directories.
};

// Normalized path → entry. Files are shared between the live and the durable namespace, so a
// rename moves the same inode and a power cut brings back the old name with the synced bytes.
using Namespace = std::map<std::string, Entry>;

// Drops empty and "." components and trailing slashes. The roots are "/" and "." (relative).
std::string Normalize(std::string_view path) {
  std::string out = !path.empty() && path.front() == '/' ? "/" : "";
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (!out.empty() && out.back() != '/') out += '/';
    out.append(part);
  }
  return out.empty() ? "." : out;
}

bool IsRoot(const std::string& p) { return p == "/" || p == "."; }

std::string Parent(const std::string& p) {
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

bool IsDir(const Namespace& ns, const std::string& p) {
  if (IsRoot(p)) return true;
  auto it = ns.find(p);
  return it != ns.end() && it->second.is_directory;
}

Status Error(int err, std::string_view op, const std::string& path) {
  return ErrnoToStatus(err, std::string(op) + " " + path);
}

// Shared by the filesystem and the handles it gives out, so handles stay safe to use (and fail)
// after the filesystem is gone.
struct SharedState {
  std::mutex mu;
  Namespace live;
  Namespace durable;
  std::set<std::string> locks;
  uint64_t epoch = 0;  // Bumped by CutPower(); handles of an older epoch are dead.

  Status CheckHandle(uint64_t handle_epoch, bool closed, const std::string& path) const {
    if (closed) return FailedPreconditionError("file already closed: " + path);
    if (handle_epoch != epoch) return FailedPreconditionError("file handle lost power: " + path);
    return OkStatus();
  }
};

// What every open file holds: its inode, its path (for messages) and the epoch it was opened in,
// so a power cut kills it. Callers lock mu() around Check() and their use of node().
class NodeHandle {
 public:
  NodeHandle(std::shared_ptr<SharedState> state, std::shared_ptr<FileNode> node, std::string path)
      : state_(std::move(state)),
        node_(std::move(node)),
        path_(std::move(path)),
        epoch_(state_->epoch) {}

  std::mutex& mu() { return state_->mu; }
  FileNode& node() { return *node_; }
  Status Check() const { return state_->CheckHandle(epoch_, closed_, path_); }

  // Makes the whole of `data` (size included) the contents a power cut brings back.
  Status Sync() {
    std::lock_guard<std::mutex> guard(state_->mu);
    MEND_RETURN_IF_ERROR(Check());
    node_->durable = node_->data;
    return OkStatus();
  }

  Status Close() {
    std::lock_guard<std::mutex> guard(state_->mu);
    MEND_RETURN_IF_ERROR(Check());
    closed_ = true;
    return OkStatus();
  }

 private:
  std::shared_ptr<SharedState> state_;
  std::shared_ptr<FileNode> node_;
  std::string path_;
  uint64_t epoch_;
  bool closed_ = false;
};

class MemoryWritableFile final : public WritableFile {
 public:
  MemoryWritableFile(std::shared_ptr<SharedState> state, std::shared_ptr<FileNode> node,
                     std::string path)
      : file_(std::move(state), std::move(node), std::move(path)) {}

  Status Append(std::string_view data) override {
    std::lock_guard<std::mutex> guard(file_.mu());
    MEND_RETURN_IF_ERROR(file_.Check());
    file_.node().data.append(data);
    return OkStatus();
  }

  Status Sync() override { return file_.Sync(); }
  Status Close() override { return file_.Close(); }

 private:
  NodeHandle file_;
};

class MemoryReadableFile final : public ReadableFile {
 public:
  MemoryReadableFile(std::shared_ptr<SharedState> state, std::shared_ptr<FileNode> node,
                     std::string path)
      : file_(std::move(state), std::move(node), std::move(path)) {}

  Status Read(size_t n, std::string* out) override {
    std::lock_guard<std::mutex> guard(file_.mu());
    out->clear();
    MEND_RETURN_IF_ERROR(file_.Check());
    const std::string& data = file_.node().data;
    if (offset_ < data.size()) out->assign(data, offset_, n);
    offset_ += out->size();
    return OkStatus();
  }

 private:
  NodeHandle file_;
  size_t offset_ = 0;
};

// Writes go to `data` in place; Sync() makes the whole of `data` (size included) the durable
// contents, so a power cut brings the file back to its state at the last Sync().
class MemoryRandomAccessFile final : public RandomAccessFile {
 public:
  MemoryRandomAccessFile(std::shared_ptr<SharedState> state, std::shared_ptr<FileNode> node,
                         std::string path)
      : file_(std::move(state), std::move(node), std::move(path)) {}

  Status ReadAt(uint64_t offset, size_t n, std::string* out) override {
    std::lock_guard<std::mutex> guard(file_.mu());
    out->clear();
    MEND_RETURN_IF_ERROR(file_.Check());
    const std::string& data = file_.node().data;
    if (offset < data.size()) out->assign(data, static_cast<size_t>(offset), n);
    return OkStatus();
  }

  Status WriteAt(uint64_t offset, std::string_view data) override {
    std::lock_guard<std::mutex> guard(file_.mu());
    MEND_RETURN_IF_ERROR(file_.Check());
    std::string& bytes = file_.node().data;
    const size_t start = static_cast<size_t>(offset);
    if (bytes.size() < start + data.size()) bytes.resize(start + data.size(), '\0');
    bytes.replace(start, data.size(), data);
    return OkStatus();
  }

  Status Truncate(uint64_t size) override {
    std::lock_guard<std::mutex> guard(file_.mu());
    MEND_RETURN_IF_ERROR(file_.Check());
    file_.node().data.resize(static_cast<size_t>(size), '\0');
    return OkStatus();
  }

  Result<uint64_t> Size() override {
    std::lock_guard<std::mutex> guard(file_.mu());
    MEND_RETURN_IF_ERROR(file_.Check());
    return static_cast<uint64_t>(file_.node().data.size());
  }

  Status Sync() override { return file_.Sync(); }
  Status Close() override { return file_.Close(); }

 private:
  NodeHandle file_;
};

class MemoryFileLock final : public FileLock {
 public:
  MemoryFileLock(std::shared_ptr<SharedState> state, std::string path)
      : state_(std::move(state)), path_(std::move(path)), epoch_(state_->epoch) {}
  ~MemoryFileLock() override {
    std::lock_guard<std::mutex> guard(state_->mu);
    // After a power cut the lock was already released (its process "died").
    if (epoch_ == state_->epoch) state_->locks.erase(path_);
  }

 private:
  std::shared_ptr<SharedState> state_;
  std::string path_;
  uint64_t epoch_;
};

}  // namespace

struct MemoryFileSystem::State : SharedState {};

MemoryFileSystem::MemoryFileSystem() : state_(std::make_shared<State>()) {}
MemoryFileSystem::~MemoryFileSystem() = default;

Result<std::unique_ptr<WritableFile>> MemoryFileSystem::OpenWritable(const std::string& path,
                                                                     WriteMode mode) {
  const std::string p = Normalize(path);
  std::lock_guard<std::mutex> guard(state_->mu);
  if (!IsDir(state_->live, Parent(p))) return Error(ENOENT, "open", path);
  if (IsRoot(p)) return Error(EISDIR, "open", path);
  auto it = state_->live.find(p);
  std::shared_ptr<FileNode> node;
  if (it == state_->live.end()) {
    node = std::make_shared<FileNode>();
    state_->live[p] = Entry{false, node};
  } else if (it->second.is_directory) {
    return Error(EISDIR, "open", path);
  } else if (mode == WriteMode::kCreateExclusive) {
    return Error(EEXIST, "open", path);
  } else {
    node = it->second.file;
    if (mode == WriteMode::kTruncate) node->data.clear();
  }
  return std::unique_ptr<WritableFile>(
      std::make_unique<MemoryWritableFile>(state_, std::move(node), path));
}

Result<std::unique_ptr<ReadableFile>> MemoryFileSystem::OpenReadable(const std::string& path) {
  const std::string p = Normalize(path);
  std::lock_guard<std::mutex> guard(state_->mu);
  if (IsDir(state_->live, p)) return Error(EISDIR, "open", path);
  auto it = state_->live.find(p);
  if (it == state_->live.end()) return Error(ENOENT, "open", path);
  return std::unique_ptr<ReadableFile>(
      std::make_unique<MemoryReadableFile>(state_, it->second.file, path));
}

Result<std::unique_ptr<RandomAccessFile>> MemoryFileSystem::OpenRandomAccess(
    const std::string& path, bool create) {
  const std::string p = Normalize(path);
  std::lock_guard<std::mutex> guard(state_->mu);
  if (IsDir(state_->live, p)) return Error(EISDIR, "open", path);
  auto it = state_->live.find(p);
  std::shared_ptr<FileNode> node;
  if (it != state_->live.end()) {
    node = it->second.file;
  } else if (!create || !IsDir(state_->live, Parent(p))) {
    return Error(ENOENT, "open", path);
  } else {
    node = std::make_shared<FileNode>();
    state_->live[p] = Entry{false, node};
  }
  return std::unique_ptr<RandomAccessFile>(
      std::make_unique<MemoryRandomAccessFile>(state_, std::move(node), path));
}

Status MemoryFileSystem::Rename(const std::string& from, const std::string& to) {
  const std::string f = Normalize(from);
  const std::string t = Normalize(to);
  const std::string context = from + " to " + to;
  std::lock_guard<std::mutex> guard(state_->mu);
  auto it = state_->live.find(f);
  if (it == state_->live.end()) return Error(ENOENT, "rename", context);
  if (it->second.is_directory) return UnimplementedError("rename of a directory: " + context);
  if (!IsDir(state_->live, Parent(t))) return Error(ENOENT, "rename", context);
  if (IsDir(state_->live, t)) return Error(EISDIR, "rename", context);
  if (f == t) return OkStatus();
  state_->live[t] = it->second;
  state_->live.erase(f);
  return OkStatus();
}

Status MemoryFileSystem::SyncDir(const std::string& dir) {
  const std::string d = Normalize(dir);
  std::lock_guard<std::mutex> guard(state_->mu);
  if (!IsDir(state_->live, d)) {
    return Error(state_->live.count(d) > 0 ? ENOTDIR : ENOENT, "fsync directory", dir);
  }
  // The durable entries of `d` become exactly its live file entries (directories are always
  // durable, see CreateDirs).
  std::erase_if(state_->durable,
                [&](const auto& kv) { return !kv.second.is_directory && Parent(kv.first) == d; });
  for (const auto& [p, entry] : state_->live) {
    if (!entry.is_directory && Parent(p) == d) state_->durable[p] = entry;
  }
  return OkStatus();
}

Status MemoryFileSystem::Unlink(const std::string& path) {
  const std::string p = Normalize(path);
  std::lock_guard<std::mutex> guard(state_->mu);
  if (IsDir(state_->live, p)) return Error(EISDIR, "unlink", path);
  if (state_->live.erase(p) == 0) return Error(ENOENT, "unlink", path);
  return OkStatus();
}

Result<std::vector<std::string>> MemoryFileSystem::List(const std::string& dir) {
  const std::string d = Normalize(dir);
  std::lock_guard<std::mutex> guard(state_->mu);
  if (!IsDir(state_->live, d)) {
    return Error(state_->live.count(d) > 0 ? ENOTDIR : ENOENT, "opendir", dir);
  }
  std::vector<std::string> names;
  for (const auto& [p, entry] : state_->live) {
    if (Parent(p) == d) names.push_back(BaseName(p));
  }
  std::sort(names.begin(), names.end());
  return names;
}

Status MemoryFileSystem::CreateDirs(const std::string& dir) {
  const std::string d = Normalize(dir);
  std::lock_guard<std::mutex> guard(state_->mu);
  for (size_t pos = d.find('/', 1);; pos = d.find('/', pos + 1)) {
    const std::string prefix = d.substr(0, pos);
    if (!IsRoot(prefix)) {
      auto it = state_->live.find(prefix);
      if (it == state_->live.end()) {
        state_->live[prefix] = Entry{true, nullptr};
        state_->durable[prefix] = Entry{true, nullptr};
      } else if (!it->second.is_directory) {
        return Error(ENOTDIR, "mkdir", dir);
      }
    }
    if (pos == std::string::npos) break;
  }
  return OkStatus();
}

Result<FileInfo> MemoryFileSystem::Stat(const std::string& path) {
  const std::string p = Normalize(path);
  std::lock_guard<std::mutex> guard(state_->mu);
  FileInfo info;
  if (IsRoot(p)) {
    info.is_directory = true;
    return info;
  }
  auto it = state_->live.find(p);
  if (it == state_->live.end()) return Error(ENOENT, "stat", path);
  info.is_directory = it->second.is_directory;
  if (!info.is_directory) info.size = it->second.file->data.size();
  return info;
}

Result<std::unique_ptr<FileLock>> MemoryFileSystem::Lock(const std::string& path) {
  const std::string p = Normalize(path);
  std::lock_guard<std::mutex> guard(state_->mu);
  if (!IsDir(state_->live, Parent(p))) return Error(ENOENT, "open lock file", path);
  if (IsDir(state_->live, p)) return Error(EISDIR, "open lock file", path);
  if (state_->live.count(p) == 0) state_->live[p] = Entry{false, std::make_shared<FileNode>()};
  if (!state_->locks.insert(p).second) return Error(EWOULDBLOCK, "lock", path);
  return std::unique_ptr<FileLock>(std::make_unique<MemoryFileLock>(state_, p));
}

void MemoryFileSystem::DropUnsyncedData() {
  std::lock_guard<std::mutex> guard(state_->mu);
  for (Namespace* ns : {&state_->live, &state_->durable}) {
    for (auto& [p, entry] : *ns) {
      if (!entry.is_directory) entry.file->data = entry.file->durable;
    }
  }
}

void MemoryFileSystem::CutPower() {
  DropUnsyncedData();
  std::lock_guard<std::mutex> guard(state_->mu);
  state_->live = state_->durable;
  state_->locks.clear();
  ++state_->epoch;
}

}  // namespace mend
