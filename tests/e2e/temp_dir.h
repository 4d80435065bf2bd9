#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "mend/base/result.h"

namespace mend::testing {

// A fresh directory under the test runner's temporary directory, removed with everything in it
// when the object is destroyed. Not thread-safe.
class ScopedTempDir {
 public:
  // kInternal (or the errno mapping of mkdtemp) when the directory cannot be created.
  static Result<std::unique_ptr<ScopedTempDir>> Create();
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }
  // `path()/name`.
  std::string File(std::string_view name) const;
  // Writes `contents` to `path()/name` (replacing it) and returns that path.
  Result<std::string> WriteFile(std::string_view name, std::string_view contents) const;

 private:
  explicit ScopedTempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// The whole contents of the file at `path`; kNotFound when it cannot be read.
Result<std::string> ReadWholeFile(const std::string& path);

}  // namespace mend::testing
