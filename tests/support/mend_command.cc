#include "tests/support/mend_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace mend::testing {

std::vector<std::string> CleanEnv(const std::string& user_home,
                                  const std::vector<std::string>& extra) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + user_home};
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<std::string> MendArgv(const std::string& mend_binary, const std::string& home,
                                  const std::vector<std::string>& args) {
  std::vector<std::string> argv = {mend_binary, "--home", home};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::vector<std::string> OutputToFile(const std::string& log,
                                      const std::vector<std::string>& argv) {
  std::vector<std::string> wrapped = {"/bin/sh", "-c", "log=$1; shift; exec \"$@\" >>\"$log\" 2>&1",
                                      "sh", log};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

std::string LoopbackUrl(int port) { return "http://127.0.0.1:" + std::to_string(port); }

bool IsOneErrorLine(const std::string& err) {
  return err.starts_with("mend: ") && err.ends_with("\n") &&
         std::count(err.begin(), err.end(), '\n') == 1;
}

std::vector<std::string> FilesContaining(const std::string& root, const std::string& needle) {
  std::vector<std::string> found;
  std::error_code error;
  if (!std::filesystem::exists(root, error)) return found;
  for (auto it = std::filesystem::recursive_directory_iterator(
           root, std::filesystem::directory_options::skip_permission_denied, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (!it->is_regular_file(error)) continue;
    std::ifstream in(it->path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      found.push_back(it->path().string());
    } else if (bytes.find(needle) != std::string::npos) {
      found.push_back(it->path().string());
    }
  }
  return found;
}

}  // namespace mend::testing
