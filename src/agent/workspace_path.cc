#include "agent/workspace_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <deque>
#include <memory>
#include <vector>

namespace mend::agent {
namespace {

// Symlinks (and components re-examined after a race) followed in one walk before giving up, as
// the kernel's own limit for path resolution.
constexpr int kMaxSymlinkHops = 40;

Result<std::string> RealPath(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> resolved(realpath(path.c_str(), nullptr), &std::free);
  if (resolved == nullptr) return ErrnoToStatus(errno, "resolve " + path);
  return std::string(resolved.get());
}

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (!part.empty() && part != ".") parts.emplace_back(part);
    start = end + 1;
  }
  return parts;
}

// `path` is absolute and free of "." and ".." components only after the walk; this is a plain
// prefix test of the text: true when `path` is `root` or below it.
bool IsWithin(const std::string& root, const std::string& path) {
  if (path == root) return true;
  const std::string prefix = root.back() == '/' ? root : root + "/";
  return path.compare(0, prefix.size(), prefix) == 0;
}

Status Escapes(std::string_view relative_path, std::string_view why) {
  return PermissionDeniedError("path \"" + std::string(relative_path) +
                               "\" is outside the workspace (" + std::string(why) + ")");
}

Result<std::string> ReadLinkAt(int dir, const std::string& name) {
  std::string target(PATH_MAX, '\0');
  const ssize_t n = readlinkat(dir, name.c_str(), target.data(), target.size());
  if (n < 0) return ErrnoToStatus(errno, "readlink " + name);
  target.resize(static_cast<std::size_t>(n));
  return target;
}

// One directory reached by the walk. `fd` is invalid for a directory that does not exist (a
// plain name below which nothing exists either) and for the final component, which the caller
// opens.
struct Level {
  std::string name;
  UniqueFd fd;
};

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = other.Release();
  }
  return *this;
}

void UniqueFd::Reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

Result<WorkspaceTarget> WalkWorkspace(std::string_view workspace, std::string_view relative_path,
                                      PathUse use, bool create_parents, const WalkHook& hook) {
  if (relative_path.find('\0') != std::string_view::npos) {
    return InvalidArgumentError("path contains a NUL byte");
  }
  if (!relative_path.empty() && relative_path.front() == '/') {
    return InvalidArgumentError("path \"" + std::string(relative_path) +
                                "\" is absolute; give a path relative to the workspace");
  }
  const std::string workspace_str(workspace);
  UniqueFd root_fd(open(workspace_str.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) {
    return FailedPreconditionError("workspace unusable: " +
                                   ErrnoToStatus(errno, "open " + workspace_str).ToString());
  }
  Result<std::string> root = RealPath(workspace_str);
  if (!root.ok()) return FailedPreconditionError("workspace unusable: " + root.status().ToString());

  std::vector<Level> levels;
  levels.push_back({"", std::move(root_fd)});
  std::deque<std::string> pending;
  for (std::string& part : SplitPath(relative_path)) pending.push_back(std::move(part));
  bool via_symlink = false;  // escapes after a symlink was expanded are the symlink's doing
  bool ends_in_leaf = false;
  int hops = 0;
  while (!pending.empty()) {
    std::string component = std::move(pending.front());
    pending.pop_front();
    ends_in_leaf = false;
    if (component == "..") {
      if (levels.size() == 1) {
        return Escapes(relative_path,
                       via_symlink ? "a symlink on it leads out" : "\"..\" climbs above it");
      }
      levels.pop_back();
      continue;
    }
    const bool last = pending.empty();
    const int dir = levels.back().fd.get();
    if (dir < 0) {  // below a directory that does not exist
      levels.push_back({std::move(component), UniqueFd()});
      ends_in_leaf = last;
      continue;
    }
    struct stat st;
    if (fstatat(dir, component.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) return ErrnoToStatus(errno, "stat " + std::string(relative_path));
      if (last || !create_parents) {
        levels.push_back({std::move(component), UniqueFd()});
        ends_in_leaf = last;
        continue;
      }
      if (mkdirat(dir, component.c_str(), 0755) != 0 && errno != EEXIST) {
        return ErrnoToStatus(errno, "create directory " + component);
      }
      if (++hops > kMaxSymlinkHops) return Escapes(relative_path, "it keeps changing");
      pending.push_front(std::move(component));  // examine what is there now
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      if (++hops > kMaxSymlinkHops) {
        return Escapes(relative_path, "a symlink on it cannot be resolved: too many levels");
      }
      Result<std::string> target = ReadLinkAt(dir, component);
      if (!target.ok()) return Escapes(relative_path, "a symlink on it cannot be resolved");
      std::string_view rest = *target;
      if (!rest.empty() && rest.front() == '/') {
        if (!IsWithin(*root, *target)) return Escapes(relative_path, "a symlink on it leads out");
        levels.resize(1);
        rest.remove_prefix(root->size());
      }
      std::vector<std::string> parts = SplitPath(rest);
      pending.insert(pending.begin(), parts.begin(), parts.end());
      via_symlink = true;
      continue;
    }
    if (last) {  // the caller opens the final component itself
      levels.push_back({std::move(component), UniqueFd()});
      ends_in_leaf = true;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (create_parents) {
        return FailedPreconditionError("cannot create " + std::string(relative_path) + ": " +
                                       component + " is not a directory");
      }
      levels.push_back({std::move(component), UniqueFd()});
      continue;
    }
    if (hook) hook(component);
    UniqueFd next(openat(dir, component.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      if (errno != ELOOP && errno != ENOTDIR && errno != ENOENT) {
        return ErrnoToStatus(errno, "open " + std::string(relative_path));
      }
      // It changed since fstatat (a symlink or a file now, or gone): examine it again.
      if (++hops > kMaxSymlinkHops) return Escapes(relative_path, "it keeps changing");
      pending.push_front(std::move(component));
      continue;
    }
    levels.push_back({std::move(component), std::move(next)});
  }

  WorkspaceTarget target;
  target.path = *root;
  for (std::size_t i = 1; i < levels.size(); ++i) {
    target.relative += (i > 1 ? "/" : "") + levels[i].name;
  }
  if (!target.relative.empty()) target.path += (root->back() == '/' ? "" : "/") + target.relative;
  if (ends_in_leaf) {
    target.name = levels.back().name;
    target.dir = std::move(levels[levels.size() - 2].fd);
  } else {
    target.name = ".";
    target.dir = std::move(levels.back().fd);
  }
  if (use == PathUse::kRead) {
    struct stat st;
    if (!target.dir.valid() ||
        fstatat(target.dir.get(), target.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return NotFoundError("no such file or directory: " + std::string(relative_path));
    }
  }
  return target;
}

Result<UniqueFd> OpenTarget(const WorkspaceTarget& target, int flags, int mode) {
  if (!target.dir.valid()) return NotFoundError("no such file or directory");
  UniqueFd fd(openat(target.dir.get(), target.name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode));
  if (fd.valid()) return fd;
  if (errno == ELOOP) {
    return PermissionDeniedError(target.relative + " became a symlink after it was checked");
  }
  return ErrnoToStatus(errno, "open");
}

Result<std::string> ResolveInWorkspace(std::string_view workspace, std::string_view relative_path,
                                       PathUse use) {
  MEND_ASSIGN_OR_RETURN(WorkspaceTarget target,
                        WalkWorkspace(workspace, relative_path, use, /*create_parents=*/false));
  return std::move(target.path);
}

}  // namespace mend::agent
