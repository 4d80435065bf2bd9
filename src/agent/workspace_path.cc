#include "agent/workspace_path.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>
#include <vector>

namespace mend::agent {
namespace {

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

std::string Join(const std::string& root, const std::vector<std::string>& parts) {
  std::string path = root;
  for (const std::string& p : parts) path += (path.back() == '/' ? "" : "/") + p;
  return path;
}

// `resolved` is an absolute, symlink-free path; true when it is `root` or below it.
bool IsWithin(const std::string& root, const std::string& resolved) {
  if (resolved == root) return true;
  const std::string prefix = root.back() == '/' ? root : root + "/";
  return resolved.compare(0, prefix.size(), prefix) == 0;
}

Status Escapes(std::string_view relative_path, std::string_view why) {
  return PermissionDeniedError("path \"" + std::string(relative_path) +
                               "\" is outside the workspace (" + std::string(why) + ")");
}

}  // namespace

Result<std::string> ResolveInWorkspace(std::string_view workspace, std::string_view relative_path,
                                       PathUse use) {
  if (relative_path.find('\0') != std::string_view::npos) {
    return InvalidArgumentError("path contains a NUL byte");
  }
  if (!relative_path.empty() && relative_path.front() == '/') {
    return InvalidArgumentError("path \"" + std::string(relative_path) +
                                "\" is absolute; give a path relative to the workspace");
  }
  Result<std::string> root = RealPath(std::string(workspace));
  if (!root.ok()) return FailedPreconditionError("workspace unusable: " + root.status().ToString());
  // `parts` is always the symlink-free path below the root reached so far.
  std::vector<std::string> parts;
  for (const std::string& component : SplitPath(relative_path)) {
    if (component == "..") {
      if (parts.empty()) return Escapes(relative_path, "\"..\" climbs above it");
      parts.pop_back();
      continue;
    }
    parts.push_back(component);
    const std::string current = Join(*root, parts);
    struct stat st;
    if (lstat(current.c_str(), &st) != 0) {
      // A component that does not exist yet is a plain name; later ones cannot exist either
      // (unless ".." climbs back, and then they are examined again).
      if (errno == ENOENT || errno == ENOTDIR) continue;
      return ErrnoToStatus(errno, "stat " + std::string(relative_path));
    }
    if (!S_ISLNK(st.st_mode)) continue;
    Result<std::string> target = RealPath(current);
    if (!target.ok()) return Escapes(relative_path, "a symlink on it cannot be resolved");
    if (!IsWithin(*root, *target)) return Escapes(relative_path, "a symlink on it leads out");
    parts = SplitPath(std::string_view(*target).substr(root->size()));
  }
  std::string resolved = Join(*root, parts);
  struct stat st;
  if (use == PathUse::kRead && lstat(resolved.c_str(), &st) != 0) {
    return NotFoundError("no such file or directory: " + std::string(relative_path));
  }
  return resolved;
}

}  // namespace mend::agent
