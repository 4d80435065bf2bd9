#pragma once

// The text of a file of the repository (MEND_SOURCE_DIR, set by tests/cli/CMakeLists.txt), for
// the tests that check a docs page against the code; "" when it cannot be read.
#include <fstream>
#include <sstream>
#include <string>

namespace mend::cli {

inline std::string ReadRepositoryFile(const std::string& path) {
  std::ifstream in(std::string(MEND_SOURCE_DIR) + "/" + path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace mend::cli
