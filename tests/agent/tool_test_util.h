#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "mend/agent/tool.h"

namespace mend::agent::tool_testing {

// A fresh directory under the system temp directory, removed with everything in it on
// destruction. path() is symlink-free.
class TempWorkspace {
 public:
  TempWorkspace() {
    std::string pattern = (std::filesystem::temp_directory_path() / "mend_tools_XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    root_ = std::filesystem::canonical(made != nullptr ? made : ".").string();
  }
  ~TempWorkspace() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  TempWorkspace(const TempWorkspace&) = delete;
  TempWorkspace& operator=(const TempWorkspace&) = delete;

  const std::string& path() const { return root_; }
  std::string Abs(const std::string& rel) const { return root_ + "/" + rel; }

  void Write(const std::string& rel, const std::string& content) const {
    const std::filesystem::path p = Abs(rel);
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }
  std::string Read(const std::string& rel) const {
    std::ifstream in(Abs(rel), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  ToolContext Context() const {
    ToolContext ctx;
    ctx.workspace = root_;
    ctx.run_id = "run-1";
    ctx.call_id = "call-1";
    return ctx;
  }

 private:
  std::string root_;
};

}  // namespace mend::agent::tool_testing
