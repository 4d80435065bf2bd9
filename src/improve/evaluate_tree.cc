#include "improve/evaluate_tree.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/result.h"

namespace mend::improve::internal {
namespace {

constexpr size_t kCopyChunkBytes = 64 * 1024;

bool IsWithin(const std::string& root, const std::string& path) {
  if (root == "/") return true;
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

// Streams the file in chunks, so a large fixture file never sits in memory whole.
Status CopyFile(FileSystem& fs, const std::string& from, const std::string& to, bool executable) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> in, fs.OpenReadable(from));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out,
                        fs.OpenWritable(to, WriteMode::kCreateExclusive));
  std::string chunk;
  while (true) {
    MEND_RETURN_IF_ERROR(in->Read(kCopyChunkBytes, &chunk));
    if (chunk.empty()) break;
    MEND_RETURN_IF_ERROR(out->Append(chunk));
  }
  MEND_RETURN_IF_ERROR(out->Close());
  // The copy stays private: the executable bit is kept for its owner only.
  if (executable && ::chmod(to.c_str(), 0700) != 0) return ErrnoToStatus(errno, "chmod " + to);
  return OkStatus();
}

class TreeCopier {
 public:
  TreeCopier(FileSystem& fs, std::string root, std::string empty_subdir)
      : fs_(fs), root_(std::move(root)), empty_subdir_(std::move(empty_subdir)) {}

  Status CopyDir(const std::string& from, const std::string& to, const std::string& rel) {
    MEND_RETURN_IF_ERROR(fs_.CreateDirs(to));
    if (!rel.empty() && rel == empty_subdir_) return OkStatus();
    MEND_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_.List(from));
    for (const std::string& name : names) {
      MEND_RETURN_IF_ERROR(CopyEntry(JoinPath(from, name), JoinPath(to, name),
                                     rel.empty() ? name : rel + "/" + name));
    }
    return OkStatus();
  }

 private:
  Status CopyEntry(const std::string& from, const std::string& to, const std::string& rel) {
    struct stat st;
    if (::lstat(from.c_str(), &st) != 0) return ErrnoToStatus(errno, "lstat " + from);
    if (S_ISDIR(st.st_mode)) return CopyDir(from, to, rel);
    if (S_ISLNK(st.st_mode) && !LinkToFileInside(from, st)) return OkStatus();
    if (!S_ISREG(st.st_mode)) return OkStatus();
    return CopyFile(fs_, from, to, (st.st_mode & 0111) != 0);
  }

  // Whether the link `path` resolves to a regular file inside the root; `st` then describes it.
  bool LinkToFileInside(const std::string& path, struct stat& st) const {
    Result<std::string> target = RealPath(path);
    if (!target.ok() || !IsWithin(root_, *target)) return false;
    return ::stat(target->c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }

  FileSystem& fs_;
  const std::string root_;  // `from` resolved: absolute and free of links
  const std::string empty_subdir_;
};

}  // namespace

Result<std::string> RealPath(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> resolved(realpath(path.c_str(), nullptr), &std::free);
  if (resolved == nullptr) return ErrnoToStatus(errno, "realpath " + path);
  return std::string(resolved.get());
}

Status CopyTree(FileSystem& fs, const std::string& from, const std::string& to,
                const CopyTreeOptions& options) {
  MEND_ASSIGN_OR_RETURN(std::string root, RealPath(from));
  TreeCopier copier(fs, std::move(root), options.empty_subdir);
  return copier.CopyDir(from, to, "");
}

Status RemoveTree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? OkStatus() : ErrnoToStatus(errno, "lstat " + path);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return ErrnoToStatus(errno, "unlink " + path);
    return OkStatus();
  }
  // A run's command may have taken away the owner's write or search permission; the folder is
  // ours, so give it back rather than leave the copy behind. Failing here shows up below.
  if ((st.st_mode & S_IRWXU) != S_IRWXU) (void)::chmod(path.c_str(), st.st_mode | S_IRWXU);
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoToStatus(errno, "opendir " + path);
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  Status first = OkStatus();
  for (const std::string& name : names) {
    Status s = RemoveTree(JoinPath(path, name));
    if (first.ok()) first = s;
  }
  if (::rmdir(path.c_str()) != 0 && first.ok()) first = ErrnoToStatus(errno, "rmdir " + path);
  return first;
}

}  // namespace mend::improve::internal
