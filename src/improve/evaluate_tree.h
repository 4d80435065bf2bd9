#pragma once

// Copying and removing the folders candidate evaluation runs in (evaluate.cc). Not a public API.

#include <string>

#include "mend/base/file_system.h"
#include "mend/base/result.h"

namespace mend::improve::internal {

struct CopyTreeOptions {
  // A folder below `from` (relative, "workspace") whose content is not copied: `to` gets it as an
  // empty folder. Empty: copy everything.
  std::string empty_subdir;
};

// Copies the folder `from` into `to` (created, with its parents; it must not hold any of the
// copied names yet). Only directories and regular files are copied: directories are created 0700,
// files 0600, or 0700 when the original is executable by anyone (a script a command tool runs).
//
// Symbolic links are never recreated. A link to a regular file that resolves inside `from` is
// copied as a regular file holding the target's bytes; every other link is skipped: one leading
// out of `from` would bring files from elsewhere into a run (and let a run's tools read them), a
// dangling one has nothing to copy, and a link to a directory could loop back to an ancestor.
// Sockets, FIFOs and devices are skipped too.
//
// `fs` reads and writes the data; the types and modes of entries are read with lstat(2) and set
// with chmod(2), which the FileSystem seam does not offer, so `from` and `to` must be folders of
// the operating system (the copies are run by real processes anyway). Errors keep the file
// system's code and name the path.
Status CopyTree(FileSystem& fs, const std::string& from, const std::string& to,
                const CopyTreeOptions& options = {});

// realpath(3): `path` absolute, without "." or ".." and with every symbolic link resolved. Errors
// keep errno's code (kNotFound for a missing path) and name the path.
Result<std::string> RealPath(const std::string& path);

// Removes `path` and everything below it without following symbolic links (a link is removed,
// never what it points to). A directory whose mode a run narrowed is made writable by its owner
// first. A missing `path` is OK. Keeps going after a failure and returns the first one.
Status RemoveTree(const std::string& path);

}  // namespace mend::improve::internal
