// docs/configuration.md's `mend config show` example is the command's real output for the
// example config.toml and environment the page describes, so it cannot lose rows again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "mend/base/memory_file_system.h"
#include "tests/cli/repository_file.h"
#include "tests/support/status_matchers.h"

namespace mend::cli {
namespace {

// The text between the line after `start` and the next line holding only ``` .
std::string BlockAfter(const std::string& page, const std::string& start) {
  const size_t at = page.find(start);
  if (at == std::string::npos) return "";
  const size_t begin = page.find('\n', at + start.size()) + 1;
  const size_t end = page.find("```", begin);
  return end == std::string::npos ? "" : page.substr(begin, end - begin);
}

TEST(ConfigDocsTest, TheConfigShowExampleIsTheRealOutput) {
  const std::string page = ReadRepositoryFile("docs/configuration.md");
  // The page's example config.toml, in the page's example home.
  const std::string toml = BlockAfter(page, "## Example config.toml\n\n```toml");
  ASSERT_THAT(toml, ::testing::HasSubstr("[reflexion.queue]"));
  MemoryFileSystem fs;
  MEND_ASSERT_OK(fs.CreateDirs("/home/alice/.mend"));
  MEND_ASSERT_OK(WriteFileAtomically(fs, "/home/alice/.mend/config.toml", toml));
  const std::map<std::string, std::string> env = {
      {"HOME", "/home/alice"}, {"OPENAI_API_KEY", "sk-example-0000"}, {"MEND_MODEL", "gpt-4o"}};
  std::vector<std::string> args = {"mend", "config", "show", "--timeout", "45s"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  ASSERT_EQ(RunCli(static_cast<int>(args.size()), argv.data(), env, out, err, fs), 0) << err.str();
  EXPECT_EQ(BlockAfter(page, "$ mend config show --timeout 45s"), out.str())
      << "docs/configuration.md, \"mend config show\": replace the example with this output";
}

}  // namespace
}  // namespace mend::cli
