// The real `mend` executable as a child process with an API key in its environment (and in its
// config file): exit codes, the one-line error contract, and that the key never appears in
// anything it prints. Every test's captured stdout and stderr are checked for the key in TearDown.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kSecret[] = "sk-e2e-SECRET-777";
// The part of the key that no masked form may show (masking keeps at most the last 4 chars).
constexpr char kSecretCore[] = "SECRET";
constexpr char kMasked[] = "****-777";

class MendBinaryTest : public E2eTest {
 protected:
  // A scripted error is an outage that lasts: runs do not ask again themselves.
  MendBinaryTest()
      : E2eTest(
            {.secret = kSecret,
             .extra_env = {std::string("OPENAI_API_KEY=") + kSecret, "MEND_PROVIDER_RETRIES=0"}}) {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(E2eTest::SetUp());
    // The test's directory is the home itself.
    home_ = dir_.get();
    // Two tests put the key into config.toml themselves, to see that mend never prints it.
    key_written_by_test_.insert(home_->File("config.toml"));
  }

  void TearDown() override {
    EXPECT_GT(runs_, 0);
    EXPECT_THAT(captured_, AllOf(Not(HasSubstr(kSecret)), Not(HasSubstr(kSecretCore))));
    E2eTest::TearDown();
  }

  // Runs `mend --home <fresh dir> args...` with env_ and keeps its output for TearDown.
  ChildOutput Mend(const std::vector<std::string>& args) {
    ChildOutput result = E2eTest::Mend(args, {.home = home_->path()});
    if (result.status.exited || result.status.signal != 0) ++runs_;
    return result;
  }

  static const nlohmann::json* FindValue(const nlohmann::json& doc, const std::string& key) {
    for (const nlohmann::json& v : doc["values"]) {
      if (v["key"] == key) return &v;
    }
    return nullptr;
  }

  ScopedTempDir* home_ = nullptr;
  int runs_ = 0;
};

TEST_F(MendBinaryTest, ConfigShowMasksTheKeyFromTheEnvironment) {
  const ChildOutput r = Mend({"config", "show"});
  EXPECT_EQ(r.status.code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, AllOf(HasSubstr("provider.api_key"), HasSubstr(kMasked),
                           HasSubstr("env MEND_API_KEY")));
}

TEST_F(MendBinaryTest, ConfigShowJsonMasksTheKey) {
  const ChildOutput r = Mend({"config", "show", "--json"});
  ASSERT_EQ(r.status.code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.out;
  const nlohmann::json* key = FindValue(doc, "provider.api_key");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ((*key)["value"], kMasked);
  EXPECT_EQ((*key)["origin"], "env MEND_API_KEY");
}

TEST_F(MendBinaryTest, OpenAiKeyFallbackIsMaskedToo) {
  env_ = {"PATH=/usr/bin:/bin", "HOME=" + home_->path(), std::string("OPENAI_API_KEY=") + kSecret};
  const ChildOutput r = Mend({"--json", "config", "show", "--provider", "openai"});
  ASSERT_EQ(r.status.code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  const nlohmann::json* key = FindValue(doc, "provider.api_key");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ((*key)["value"], kMasked);
  EXPECT_EQ((*key)["origin"], "env OPENAI_API_KEY");
}

TEST_F(MendBinaryTest, KeyInTheBaseUrlIsMasked) {
  env_.push_back(std::string("MEND_BASE_URL=https://user:") + kSecret + "@llm.example.com/v1");
  const ChildOutput r = Mend({"config", "show"});
  EXPECT_EQ(r.status.code, 0);
  EXPECT_THAT(r.out, AllOf(HasSubstr("llm.example.com"), HasSubstr("env MEND_BASE_URL")));
}

TEST_F(MendBinaryTest, InvalidFlagValueIsAUsageErrorOnOneLineAndInJson) {
  const ChildOutput r = Mend({"--json", "config", "show", "--timeout", "abc"});
  EXPECT_EQ(r.status.code, 2);
  ExpectOneErrorLine(r);
  EXPECT_THAT(r.err, AllOf(HasSubstr("provider.timeout"), HasSubstr("--timeout")));
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(doc["error"]["class"], "permanent");
  EXPECT_EQ(doc["error"]["retryable"], false);
  EXPECT_EQ("mend: " + doc["error"]["message"].get<std::string>() + "\n", r.err);
}

TEST_F(MendBinaryTest, DemoCrashesAndResumesOfflineWithTheKeySet) {
  const ChildOutput text = Mend({"demo"});
  EXPECT_EQ(text.status.code, 0) << text.err;
  EXPECT_EQ(text.err, "");
  EXPECT_THAT(text.out, AllOf(HasSubstr("simulated crash"), HasSubstr("resumes"),
                              HasSubstr("completed steps were not repeated")));

  const ChildOutput json = Mend({"demo", "--json"});
  ASSERT_EQ(json.status.code, 0) << json.err;
  const nlohmann::json doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << json.out;
  EXPECT_EQ(doc["status"], "completed");
  EXPECT_EQ(doc["repeated_steps"], 0);
}

TEST_F(MendBinaryTest, RunWithoutATaskIsAUsageError) {
  // stdin is /dev/null: not a terminal, and empty.
  const ChildOutput r = Mend({"run", "x"});
  EXPECT_EQ(r.status.code, 2);
  ExpectOneErrorLine(r);
  EXPECT_THAT(r.err, StartsWith("mend: a task is needed"));
  EXPECT_EQ(r.out, "");
}

TEST_F(MendBinaryTest, RunThenPendingThenResumeWithTheScriptedProvider) {
  ASSERT_TRUE(std::filesystem::create_directories(home_->File("agent")));
  MEND_ASSERT_OK(home_->WriteFile("agent/agent.toml", "name = \"e2e\"\ntools = []\n"));
  MEND_ASSERT_OK(home_->WriteFile("agent/instructions.md", "Do the task.\n"));
  const std::string agent = home_->File("agent");
  MEND_ASSERT_OK(home_->WriteFile(
      "script.json", R"([{"error": {"code": "unavailable", "message": "upstream down"}}])"));
  const std::vector<std::string> model = {"--provider", "scripted", "--script-file",
                                          home_->File("script.json")};
  std::vector<std::string> run = {"run", agent, "do it", "--id", "r1", "--json"};
  run.insert(run.end(), model.begin(), model.end());
  const ChildOutput failed = Mend(run);
  EXPECT_EQ(failed.status.code, 1);
  ExpectOneErrorLine(failed);
  EXPECT_EQ(nlohmann::json::parse(failed.out, nullptr, false)["status"], "failed");

  const ChildOutput pending = Mend({"pending", "--json"});
  ASSERT_EQ(pending.status.code, 0) << pending.err;
  const nlohmann::json runs = nlohmann::json::parse(pending.out, nullptr, false)["runs"];
  ASSERT_EQ(runs.size(), 1u) << pending.out;
  EXPECT_EQ(runs[0]["id"], "r1");
  EXPECT_EQ(runs[0]["last_error"]["class"], "transient");

  MEND_ASSERT_OK(home_->WriteFile("script.json", R"([{"text": "done"}])"));
  std::vector<std::string> resume = {"resume", "r1"};
  resume.insert(resume.end(), model.begin(), model.end());
  const ChildOutput resumed = Mend(resume);
  EXPECT_EQ(resumed.status.code, 0) << resumed.err;
  EXPECT_EQ(resumed.out, "done\n");
  EXPECT_THAT(resumed.err, StartsWith("run r1 completed in 1 step"));

  const ChildOutput unknown = Mend({"resume", "nope"});
  EXPECT_EQ(unknown.status.code, 1);
  EXPECT_EQ(unknown.err, "mend: no run named nope\n");
}

TEST_F(MendBinaryTest, McpServeOnAnOpenAddressWithoutATokenExitsTwoWithOneLine) {
  const ChildOutput r = Mend({"mcp", "serve", "--http", "0.0.0.0:0"});
  EXPECT_EQ(r.status.code, 2);
  ExpectOneErrorLine(r);
  EXPECT_EQ(r.err,
            "mend: listening on 0.0.0.0 (not loopback) requires serve.token (MEND_SERVE_TOKEN) "
            "(run 'mend mcp serve --help' for usage)\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(MendBinaryTest, UnknownCommandExitsTwoWithOneLine) {
  const ChildOutput r = Mend({"frobnicate"});
  EXPECT_EQ(r.status.code, 2);
  ExpectOneErrorLine(r);
  EXPECT_EQ(r.err, "mend: unknown command 'frobnicate' (run 'mend --help' for usage)\n");
}

TEST_F(MendBinaryTest, MalformedConfigFileNamesFileAndLine) {
  MEND_ASSERT_OK(home_->WriteFile("config.toml", "[provider]\nmodel = \"x\"\ntimeout = = 3\n"));
  const ChildOutput r = Mend({"config", "show"});
  EXPECT_EQ(r.status.code, 2);
  ExpectOneErrorLine(r);
  EXPECT_THAT(r.err, HasSubstr(home_->File("config.toml") + ":3"));
  EXPECT_EQ(r.out, "");
}

TEST_F(MendBinaryTest, KeyOnAMalformedConfigLineIsNotEchoed) {
  env_ = {"PATH=/usr/bin:/bin", "HOME=" + home_->path()};
  MEND_ASSERT_OK(
      home_->WriteFile("config.toml", std::string("[provider]\napi_key = \"") + kSecret + "\n"));
  const ChildOutput r = Mend({"config", "show"});
  EXPECT_EQ(r.status.code, 2);
  ExpectOneErrorLine(r);
  EXPECT_THAT(r.err, HasSubstr(home_->File("config.toml") + ":2"));
}

TEST_F(MendBinaryTest, KeyFromTheConfigFileIsMasked) {
  env_ = {"PATH=/usr/bin:/bin", "HOME=" + home_->path()};
  MEND_ASSERT_OK(
      home_->WriteFile("config.toml", std::string("[provider]\napi_key = \"") + kSecret + "\"\n"));
  const ChildOutput r = Mend({"config", "show", "--json"});
  ASSERT_EQ(r.status.code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  const nlohmann::json* key = FindValue(doc, "provider.api_key");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ((*key)["value"], kMasked);
  EXPECT_EQ((*key)["source"], "file");
}

}  // namespace
}  // namespace mend::testing
