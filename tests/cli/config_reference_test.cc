// docs/configuration.md's key table is what `mend config reference` prints from the schema, so a
// key added, removed or changed in src/base/config_schema.cc fails here until the page is
// regenerated; and the renderer writes each fact of a key where the table says.
#include "cli/config_reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "mend/base/memory_file_system.h"
#include "tests/cli/repository_file.h"

namespace mend::cli {
namespace {

using ::testing::HasSubstr;

constexpr char kBegin[] = "<!-- BEGIN generated: mend config reference -->\n";
constexpr char kEnd[] = "<!-- END generated -->";
constexpr char kRegenerate[] =
    "docs/configuration.md is out of date: replace the lines between\n"
    "  <!-- BEGIN generated: mend config reference --> and <!-- END generated -->\n"
    "with the output of\n"
    "  mend config reference\n"
    "(a fact the table needs beyond the key's type, range and default goes into its help in "
    "src/base/config_schema.cc).";

// The text between the markers; "" when they are missing.
std::string GeneratedBlock(const std::string& page) {
  const size_t begin = page.find(kBegin);
  if (begin == std::string::npos) return "";
  const size_t from = begin + std::string(kBegin).size();
  const size_t end = page.find(kEnd, from);
  return end == std::string::npos ? "" : page.substr(from, end - from);
}

TEST(ConfigReferenceDocsTest, ThePagesTableIsTheGeneratedOne) {
  const std::string page = ReadRepositoryFile("docs/configuration.md");
  const std::string block = GeneratedBlock(page);
  ASSERT_FALSE(block.empty()) << "docs/configuration.md lacks the generated block's markers";
  EXPECT_EQ(block, RenderConfigReference(DefaultConfigSchema())) << kRegenerate;
}

TEST(ConfigReferenceDocsTest, TheCommandPrintsTheTable) {
  MemoryFileSystem fs;
  const std::map<std::string, std::string> env = {{"HOME", "/home/alice"}};
  std::vector<std::string> args = {"mend", "config", "reference"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  ASSERT_EQ(RunCli(static_cast<int>(args.size()), argv.data(), env, out, err, fs), 0) << err.str();
  EXPECT_EQ(out.str(), RenderConfigReference(DefaultConfigSchema()));
  EXPECT_EQ(err.str(), "");
}

TEST(ConfigReferenceTest, EachFactOfAKeyHasItsColumn) {
  ConfigKeySpec home;
  home.name = "home";
  home.default_value = "{user_home}/.mend";
  home.env_var = "MEND_HOME";
  home.flag = "home";
  home.file_allowed = false;
  home.help = "where | things live";

  ConfigKeySpec size;
  size.name = "x.max_bytes";
  size.type = ConfigType::kInt;
  size.default_value = std::to_string(8 << 20);
  size.int_min = 1024;
  size.int_max = 1 << 30;
  size.env_var = "MEND_QUALITY_REFLEXION_QUEUE_MAX";
  size.help = "bytes";

  ConfigKeySpec wait;
  wait.name = "x.wait";
  wait.type = ConfigType::kDuration;
  wait.default_value = "2m";
  wait.duration_min = std::chrono::milliseconds(100);
  wait.duration_max = std::chrono::hours(24 * 365);
  wait.help = "how long <n> waits for `<x>`";

  ConfigKeySpec key;
  key.name = "x.api_key";
  key.sensitivity = Sensitivity::kSecret;
  key.env_var = "MEND_API_KEY";
  key.env_fallbacks = {{"provider.name", "openai", "OPENAI_API_KEY"},
                       {"provider.name", "anthropic", "ANTHROPIC_API_KEY"}};
  key.list = true;

  ConfigKeySpec kind;
  kind.name = "x.kind";
  kind.type = ConfigType::kEnum;
  kind.choices = {"a", "b"};
  kind.default_value = "a";
  kind.sensitivity = Sensitivity::kUrl;

  const std::string table = RenderConfigReference({home, size, wait, key, kind});
  std::vector<std::string> lines;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 7u) << table;
  EXPECT_EQ(lines[0], "| key | type | default | accepted | environment | flag | shown | meaning |");
  EXPECT_EQ(lines[2],
            "| `home` | string | `$HOME/.mend` | any; **not settable in config.toml** | "
            "`MEND_HOME` | `--home` | public | where \\| things live |");
  EXPECT_EQ(lines[3],
            "| `x.max_bytes` | int | `8388608` (8 MiB) | 1024 – 1073741824 | `R_QUEUE_MAX` | — | "
            "public | bytes |");
  // A placeholder outside a code span is no HTML tag.
  EXPECT_EQ(lines[4],
            "| `x.wait` | duration | `2m` | 100ms – 8760h | — | — | public | how long \\<n\\> "
            "waits for `<x>` |");
  EXPECT_EQ(lines[5],
            "| `x.api_key` | list | empty | any | `MEND_API_KEY`, then `OPENAI_API_KEY` / "
            "`ANTHROPIC_API_KEY` | — | **secret** |  |");
  EXPECT_EQ(lines[6], "| `x.kind` | enum | `a` | `a`, `b` | — | — | URL, password masked |  |");
  EXPECT_THAT(table, ::testing::EndsWith("\n"));
}

}  // namespace
}  // namespace mend::cli
