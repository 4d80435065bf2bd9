// docs/operations.md's alert rules are rules Prometheus loads (`promtool check rules`, skipped when
// promtool, Debian package prometheus, is not installed), and every metric they name is one the
// metrics pages document.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "tests/cli/repository_file.h"

namespace mend::cli {
namespace {

// The fenced yaml block after the heading "### Alert rules"; "" when there is none.
std::string AlertRules(const std::string& page) {
  const size_t heading = page.find("\n### Alert rules\n");
  if (heading == std::string::npos) return "";
  const std::string open = "```yaml\n";
  const size_t begin = page.find(open, heading);
  if (begin == std::string::npos) return "";
  const size_t end = page.find("\n```", begin + open.size());
  if (end == std::string::npos) return "";
  return page.substr(begin + open.size(), end + 1 - (begin + open.size()));
}

std::string Promtool() {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    const std::string path = std::string(dir) + "/promtool";
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

TEST(OperationsAlertsTest, EveryMetricTheRulesNameIsDocumented) {
  const std::string rules = AlertRules(ReadRepositoryFile("docs/operations.md"));
  ASSERT_THAT(rules, ::testing::HasSubstr("groups:"));
  const std::string documented = ReadRepositoryFile("docs/metrics.md") +
                                 ReadRepositoryFile("docs/lesson_queue.md") +
                                 ReadRepositoryFile("docs/proxy.md");
  static const std::regex kMetric("mend_[a-z_]+");
  std::set<std::string> names;
  for (std::sregex_iterator it(rules.begin(), rules.end(), kMetric), end; it != end; ++it) {
    std::string name = it->str();
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (name.ends_with(suffix)) name.resize(name.size() - std::string(suffix).size());
    }
    names.insert(name);
  }
  EXPECT_GE(names.size(), 8u);
  for (const std::string& name : names) {
    EXPECT_NE(documented.find("`" + name + "`"), std::string::npos)
        << name << " is in docs/operations.md's alert rules but no metrics page documents it";
  }
}

TEST(OperationsAlertsTest, TheRulesPassPromtool) {
  const std::string promtool = Promtool();
  if (promtool.empty()) GTEST_SKIP() << "promtool is not installed (Debian package prometheus)";
  const std::string rules = AlertRules(ReadRepositoryFile("docs/operations.md"));
  ASSERT_FALSE(rules.empty());
  std::string dir = (std::filesystem::temp_directory_path() / "mend-alerts-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string file = dir + "/mend.rules.yml";
  std::ofstream(file) << rules;
  const std::string command = "'" + promtool + "' check rules '" + file + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  EXPECT_THAT(output, ::testing::HasSubstr("SUCCESS"));
}

}  // namespace
}  // namespace mend::cli
