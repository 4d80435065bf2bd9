#include "cli/cli.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mend/base/memory_file_system.h"
#include "tests/support/status_matchers.h"

namespace mend::cli {
namespace {

using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kSecret[] = "sk-live-abcdefghijklmnopqrstuvwxyz987654";

size_t LineCount(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

class CliTest : public ::testing::Test {
 protected:
  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), "mend");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    out_.str("");
    err_.str("");
    return RunCli(static_cast<int>(args.size()), argv.data(), env_, out_, err_, fs_);
  }
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }

  const nlohmann::json* FindValue(const nlohmann::json& doc, const std::string& key) {
    for (const nlohmann::json& v : doc["values"]) {
      if (v["key"] == key) return &v;
    }
    return nullptr;
  }

  MemoryFileSystem fs_;
  std::map<std::string, std::string> env_ = {{"HOME", "/u"}};
  std::ostringstream out_, err_;
};

TEST_F(CliTest, VersionPrintsNameAndVersion) {
  EXPECT_EQ(Run({"--version"}), 0);
  // The package version, then what the build's git description adds to it, if anything
  // (version_command_test.cc has the cases).
  EXPECT_THAT(out(), MatchesRegex("mend [0-9]+\\.[0-9]+\\.[0-9]+( \\(.+\\))?\n"));
  EXPECT_EQ(err(), "");
}

TEST_F(CliTest, ShortVersionFlagAndVersionCommandPrintTheVersion) {
  ASSERT_EQ(Run({"--version"}), 0);
  const std::string version = out();
  EXPECT_EQ(Run({"-V"}), 0);
  EXPECT_EQ(out(), version);
  EXPECT_EQ(err(), "");
  EXPECT_EQ(Run({"version"}), 0);
  EXPECT_EQ(out(), version);
  EXPECT_EQ(err(), "");
  EXPECT_EQ(Run({"version", "--json"}), 0);
  const nlohmann::json doc = nlohmann::json::parse(out(), nullptr, false);
  EXPECT_THAT(version, StartsWith("mend " + doc.value("version", "")));
  EXPECT_EQ(Run({"version", "extra"}), 2);
}

TEST_F(CliTest, ASubcommandsUsageErrorPointsToItsHelp) {
  // CLI11's own check of an option's value.
  EXPECT_EQ(Run({"memory", "search", "deploy", "-k", "0"}), 2);
  EXPECT_THAT(err(), AllOf(StartsWith("mend: "), HasSubstr("-k"),
                           EndsWith(" (run 'mend memory search --help' for usage)\n")));
  EXPECT_EQ(LineCount(err()), 1u);
  // A missing argument.
  EXPECT_EQ(Run({"memory", "search"}), 2);
  EXPECT_EQ(err(), "mend: QUERY is required (run 'mend memory search --help' for usage)\n");
  // A usage error the command itself finds after parsing.
  EXPECT_EQ(Run({"pending", "--limit", "0"}), 2);
  EXPECT_EQ(err(),
            "mend: --limit must be between 1 and 1000, not 0 (run 'mend pending --help' for "
            "usage)\n");
  // An unknown subcommand of a command points to that command's help.
  EXPECT_EQ(Run({"config", "frob"}), 2);
  EXPECT_THAT(err(), EndsWith(" (run 'mend config --help' for usage)\n"));
  // Nothing selected yet: the top-level help.
  EXPECT_EQ(Run({"--frob"}), 2);
  EXPECT_THAT(err(), EndsWith(" (run 'mend --help' for usage)\n"));
}

TEST_F(CliTest, MemorySearchHelpShowsKAsANumberWithItsRange) {
  ASSERT_EQ(Run({"memory", "search", "--help"}), 0);
  EXPECT_THAT(out(), ContainsRegex("-k N +how many results at most, 1–1000 \\(default 10\\)"));
  EXPECT_THAT(out(), Not(HasSubstr("UINT")));
  EXPECT_THAT(out(), Not(HasSubstr("[1 - 1000]")));
}

TEST_F(CliTest, HelpListsCommands) {
  EXPECT_EQ(Run({"--help"}), 0);
  EXPECT_THAT(out(), AllOf(HasSubstr("demo"), HasSubstr("config"), HasSubstr("--home"),
                           HasSubstr("--json"), HasSubstr("--version"), HasSubstr("serve"),
                           HasSubstr("proxy"), HasSubstr("mcp"), HasSubstr("improve")));
  // Every command of docs/cli.md is built: none is marked as planned.
  EXPECT_THAT(out(), Not(HasSubstr("Not yet implemented")));
  EXPECT_EQ(err(), "");
}

TEST_F(CliTest, SubcommandHelpDescribesTheSubcommand) {
  EXPECT_EQ(Run({"config", "show", "--help"}), 0);
  EXPECT_THAT(out(), AllOf(HasSubstr("where each value came from"), HasSubstr("--timeout")));
}

TEST_F(CliTest, UnknownCommandIsUsageErrorWithHintOnOneLine) {
  EXPECT_EQ(Run({"frobnicate"}), 2);
  EXPECT_EQ(err(), "mend: unknown command 'frobnicate' (run 'mend --help' for usage)\n");
  EXPECT_EQ(out(), "");
}

TEST_F(CliTest, BadFlagIsUsageError) {
  EXPECT_EQ(Run({"--frob"}), 2);
  EXPECT_THAT(err(), AllOf(StartsWith("mend: "), HasSubstr("--frob"),
                           EndsWith("(run 'mend --help' for usage)\n")));
  EXPECT_EQ(LineCount(err()), 1u);

  EXPECT_EQ(Run({"config", "show", "--timeout"}), 2);
  EXPECT_THAT(err(), AllOf(StartsWith("mend: "), HasSubstr("--timeout")));
  EXPECT_EQ(LineCount(err()), 1u);
}

TEST_F(CliTest, MissingCommandOrSubcommandIsUsageError) {
  EXPECT_EQ(Run({}), 2);
  EXPECT_THAT(err(), HasSubstr("no command given"));
  EXPECT_EQ(Run({"config"}), 2);
  EXPECT_THAT(err(), HasSubstr("'mend config' needs a subcommand"));
}

TEST_F(CliTest, AMissingArgumentIsNamedAsInTheHelp) {
  EXPECT_EQ(Run({"run"}), 2);
  EXPECT_EQ(err(), "mend: AGENT_DIR is required (run 'mend run --help' for usage)\n");
}

TEST_F(CliTest, OneCommandPerInvocation) {
  EXPECT_EQ(Run({"pending", "run"}), 2);
  EXPECT_THAT(err(), HasSubstr("not expected: run"));
}

TEST_F(CliTest, UsageErrorWithJsonPrintsErrorObject) {
  EXPECT_EQ(Run({"--json", "nope"}), 2);
  nlohmann::json doc = nlohmann::json::parse(out());
  EXPECT_EQ(doc["error"]["code"], "MEND_USAGE");
  EXPECT_EQ(doc["error"]["class"], "permanent");
  EXPECT_EQ(doc["error"]["retryable"], false);
  EXPECT_THAT(doc["error"]["message"].get<std::string>(), HasSubstr("nope"));
  EXPECT_EQ(LineCount(err()), 1u);
}

TEST_F(CliTest, ConfigShowTextMasksSecretsAndNamesSources) {
  env_["MEND_API_KEY"] = kSecret;
  EXPECT_EQ(Run({"config", "show", "--model", "m-flag"}), 0);
  EXPECT_THAT(out(), Not(HasSubstr(kSecret)));
  EXPECT_THAT(out(), ContainsRegex("provider.api_key +\\*\\*\\*\\*7654 +env MEND_API_KEY"));
  EXPECT_THAT(out(), ContainsRegex("provider.model +m-flag +flag --model"));
  EXPECT_THAT(out(), ContainsRegex("home +/u/.mend +default"));
  EXPECT_THAT(out(), HasSubstr("config file: /u/.mend/config.toml (not present)"));
}

TEST_F(CliTest, ConfigShowJsonMasksSecrets) {
  env_["OPENAI_API_KEY"] = kSecret;
  EXPECT_EQ(Run({"config", "show", "--json"}), 0);
  EXPECT_THAT(out(), Not(HasSubstr(kSecret)));
  nlohmann::json doc = nlohmann::json::parse(out());
  const nlohmann::json* key = FindValue(doc, "provider.api_key");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ((*key)["value"], "****7654");
  EXPECT_EQ((*key)["source"], "env");
  EXPECT_EQ((*key)["origin"], "env OPENAI_API_KEY");
}

TEST_F(CliTest, ConfigShowReadsTheFileUnderHome) {
  MEND_ASSERT_OK(fs_.CreateDirs("/state"));
  MEND_ASSERT_OK(WriteFileAtomically(fs_, "/state/config.toml", "[provider]\nmodel = \"m\"\n"));
  EXPECT_EQ(Run({"--home", "/state", "config", "show", "--json"}), 0);
  nlohmann::json doc = nlohmann::json::parse(out());
  EXPECT_EQ((*FindValue(doc, "provider.model"))["origin"], "config.toml:2");
  EXPECT_EQ((*FindValue(doc, "home"))["origin"], "flag --home");
  EXPECT_EQ(doc["config_file_exists"], true);
}

TEST_F(CliTest, InvalidConfigurationIsUsageErrorOnOneLine) {
  env_["MEND_TIMEOUT"] = "abc";
  EXPECT_EQ(Run({"config", "show"}), 2);
  EXPECT_EQ(err(),
            "mend: invalid value for provider.timeout from environment MEND_TIMEOUT: \"abc\" "
            "(expected a duration between 1s and 1h, e.g. 30s)\n");
  EXPECT_EQ(out(), "");

  EXPECT_EQ(Run({"config", "show", "--json"}), 2);
  nlohmann::json doc = nlohmann::json::parse(out());
  EXPECT_EQ(doc["error"]["code"], "MEND_CONFIG_INVALID");
}

TEST_F(CliTest, InvalidSecretIsNeverEchoed) {
  MEND_ASSERT_OK(fs_.CreateDirs("/s"));
  MEND_ASSERT_OK(WriteFileAtomically(fs_, "/s/config.toml", "[provider]\napi_key = 12345678\n"));
  EXPECT_EQ(Run({"--home", "/s", "config", "show"}), 2);
  EXPECT_THAT(err(), AllOf(HasSubstr("provider.api_key"), Not(HasSubstr("12345678"))));
}

TEST_F(CliTest, McpNeedsASubcommandAndAnAgentFolder) {
  EXPECT_EQ(Run({"mcp"}), 2);
  EXPECT_THAT(err(), HasSubstr("mend mcp --help"));
  EXPECT_EQ(Run({"mcp", "list", "/no/such/agent"}), 2);
  EXPECT_THAT(err(), HasSubstr("/no/such/agent does not exist"));
}

// The real executable, as a user runs it.
std::pair<int, std::string> Exec(const std::string& args, const std::string& env = "") {
  const std::string command = env + " " + std::string(MEND_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) output.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(MendBinaryTest, VersionAndUsageErrorExitCodes) {
  auto [version_code, version] = Exec("--version");
  EXPECT_EQ(version_code, 0);
  EXPECT_THAT(version, StartsWith("mend "));

  auto [bad_code, bad] = Exec("no-such-command");
  EXPECT_EQ(bad_code, 2);
  EXPECT_EQ(bad, "mend: unknown command 'no-such-command' (run 'mend --help' for usage)\n");
}

TEST(MendBinaryTest, ReadsTheProcessEnvironment) {
  auto [code, output] =
      Exec("config show --json", "MEND_HOME=/nonexistent-mend-home MEND_MODEL=from-env");
  ASSERT_EQ(code, 0) << output;
  EXPECT_THAT(output, HasSubstr("\"origin\":\"env MEND_HOME\""));
  EXPECT_THAT(output, HasSubstr("\"value\":\"from-env\""));

  auto [bad_code, bad] = Exec("config show", "MEND_HOME=/nonexistent-mend-home MEND_TIMEOUT=x");
  EXPECT_EQ(bad_code, 2);
  EXPECT_THAT(bad, HasSubstr("MEND_TIMEOUT"));
}

}  // namespace
}  // namespace mend::cli
