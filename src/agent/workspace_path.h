#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "mend/base/result.h"

namespace mend::agent {

// What a resolved path is for. A path to write may name a file (and directories) that do not
// exist yet; a path to read must exist.
enum class PathUse { kRead, kWrite };

// An owned file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset();

 private:
  int fd_ = -1;
};

// Where a workspace path leads, reached by a descriptor walk from the workspace root.
struct WorkspaceTarget {
  // The directory that holds the target, opened component by component without following a
  // symlink; invalid when that directory does not exist (only for PathUse::kRead, which then
  // fails with kNotFound before returning).
  UniqueFd dir;
  // The target's name in `dir`; "." when the path denotes `dir` itself (the workspace, or a path
  // ending in ".."). Never a symlink at the time of the walk: a symlink there is resolved.
  std::string name;
  // The absolute, symlink-free path the walk arrived at (for messages and for callers that need
  // a path, such as a child process's working directory).
  std::string path;
  // `path` below the workspace root, "" for the root itself.
  std::string relative;
};

// Test seam: called with each component after it was examined and before it is opened, so a
// test can swap a directory for a symlink in exactly that window.
using WalkHook = std::function<void(std::string_view component)>;

// Walks `relative_path` (as the model wrote it) from the workspace root: the root is opened once
// (O_DIRECTORY) and each directory below it with openat(O_DIRECTORY | O_NOFOLLOW), so what is
// opened is always what was checked. A symlink met on the way is read with readlinkat and its
// target walked the same way: an absolute target must lie inside the workspace's real path, and
// ".." never climbs above the root, so a symlink can only lead to another place inside. A
// component replaced by a symlink between its check and its open makes the open fail (O_NOFOLLOW)
// and is examined again. With `create_parents`, missing directories on the way are created with
// mkdirat (mode 0755 before the umask).
//
// Errors, with a message the model can act on: kInvalidArgument for an absolute path or a NUL
// byte; kPermissionDenied for ".." climbing above the workspace or a symlink that leads out,
// dangles outside, or loops; kNotFound when `use` is kRead and the target does not exist;
// kFailedPrecondition when the workspace itself cannot be opened or a component on the way is a
// file.
Result<WorkspaceTarget> WalkWorkspace(std::string_view workspace, std::string_view relative_path,
                                      PathUse use, bool create_parents,
                                      const WalkHook& hook = nullptr);

// Opens the target of a walk: openat(target.dir, target.name, flags | O_NOFOLLOW | O_CLOEXEC).
// A symlink that appeared there since the walk is refused (kPermissionDenied), not followed.
Result<UniqueFd> OpenTarget(const WorkspaceTarget& target, int flags, int mode = 0);

// Resolves `relative_path` inside `workspace` with WalkWorkspace (creating nothing) and returns
// the absolute, symlink-free path it denotes. An empty path or "." is the workspace itself.
// Components that do not exist yet are taken as plain names. For callers that need a path
// (a child's working directory); the file tools use the descriptors of WalkWorkspace instead,
// because a path checked now may be swapped for a symlink before it is opened by name.
Result<std::string> ResolveInWorkspace(std::string_view workspace, std::string_view relative_path,
                                       PathUse use);

}  // namespace mend::agent
