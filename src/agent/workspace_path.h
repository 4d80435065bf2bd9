#pragma once

#include <string>
#include <string_view>

#include "mend/base/result.h"

namespace mend::agent {

// What a resolved path is for. A path to write may name a file (and directories) that do not
// exist yet; a path to read must exist.
enum class PathUse { kRead, kWrite };

// Resolves `relative_path` (as the model wrote it) inside `workspace` and returns the absolute,
// symlink-free path it denotes. Refuses — with a message the model can act on — absolute paths
// (kInvalidArgument), paths that climb out with "..", and symlinks anywhere along the path that
// point outside the workspace or cannot be resolved (kPermissionDenied). Every existing
// component is examined with lstat, and each symlink is resolved with realpath and checked, so a
// symlinked parent directory cannot smuggle a write outside. Components that do not exist yet
// are taken as plain names. An empty path or "." is the workspace itself. kNotFound when the
// path does not exist and `use` is kRead; kFailedPrecondition when the workspace is missing.
//
// The check is made at call time: a symlink created later by someone else is not prevented
// (the tools that use it run with the agent's own privileges, not as a sandbox).
Result<std::string> ResolveInWorkspace(std::string_view workspace, std::string_view relative_path,
                                       PathUse use);

}  // namespace mend::agent
