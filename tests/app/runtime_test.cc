#include "mend/app/runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/deferred_provider.h"
#include "app/runtime_parts.h"
#include "mend/llm/scripted_provider.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSecret[] = "sk-test-0123456789abcdefSECRET";

class RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "mend-app-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    home_ = dir_ + "/home";
    env_ = Env::Default();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Config MakeConfig(std::map<std::string, std::string> flags) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = home_;
    Result<Config> config = LoadConfig(sources, *env_.fs);
    EXPECT_THAT(config, IsOk());
    return *std::move(config);
  }

  void WriteFile(const std::string& path, const std::string& text) {
    MEND_ASSERT_OK(env_.fs->CreateDirs(DirName(path)));
    MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, path, text));
  }

  std::string dir_, home_;
  Env env_;
};

TEST_F(RuntimeTest, CreatesHomeAndSqliteDatabase) {
  auto runtime = OpenRuntime(MakeConfig({}), env_);
  MEND_ASSERT_OK(runtime);
  EXPECT_EQ((*runtime)->home, home_);
  EXPECT_TRUE(std::filesystem::exists(home_ + "/mend.db"));
  EXPECT_TRUE(std::filesystem::exists(home_ + "/events.jsonl"));
  ASSERT_NE((*runtime)->store, nullptr);
  EXPECT_THAT((*runtime)->store->ListRuns({}), IsOk());
  EXPECT_FALSE((*runtime)->holder.id.empty());
}

TEST_F(RuntimeTest, PostgresUrlSelectsPostgresAndNeverShowsThePassword) {
  // Nothing listens on port 1: the store is unreachable, and says so without the password.
  auto runtime =
      OpenRuntime(MakeConfig({{"store.url", "postgres://u:hunter2@127.0.0.1:1/mend"}}), env_);
  EXPECT_THAT(runtime, StatusIs(StatusCode::kUnavailable, ::testing::Not(HasSubstr("hunter2"))));
}

TEST_F(RuntimeTest, MemoryFromANewerMendDisablesMemoryNotTheRuntime) {
  { MEND_ASSERT_OK(OpenRuntime(MakeConfig({}), env_)); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((home_ + "/mend.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'memory.schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto runtime = OpenRuntime(MakeConfig({}), env_);
  MEND_ASSERT_OK(runtime);
  EXPECT_THAT((*runtime)->store->ListRuns({}), IsOk());
  EXPECT_THAT((*runtime)->facts->Count().status(),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("newer mend")));
}

TEST_F(RuntimeTest, UnknownStoreUrlIsInvalid) {
  auto runtime = OpenRuntime(MakeConfig({{"store.url", "mysql://db"}}), env_);
  EXPECT_THAT(runtime, StatusIs(StatusCode::kInvalidArgument, HasSubstr("store.url")));
}

TEST_F(RuntimeTest, ProviderIsBuiltOnlyWhenNeeded) {
  // openai without a model cannot be built, yet the runtime opens: pending and fork need no model.
  auto runtime = OpenRuntime(MakeConfig({{"provider.name", "openai"}}), env_);
  MEND_ASSERT_OK(runtime);
  ASSERT_NE(internal::PartsOf(**runtime).deferred, nullptr);
  EXPECT_FALSE(internal::PartsOf(**runtime).deferred->built());
  EXPECT_EQ((*runtime)->provider->name(), "deferred");

  EXPECT_THAT(PrepareProvider(**runtime),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("needs a model")));
  llm::CompletionRequest request;
  EXPECT_THAT((*runtime)->provider->Complete(request),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("needs a model")));
}

TEST_F(RuntimeTest, AgentModelIsTheFallbackModel) {
  auto runtime =
      OpenRuntime(MakeConfig({{"provider.name", "openai"}, {"provider.api_key", kSecret}}), env_);
  MEND_ASSERT_OK(runtime);
  MEND_EXPECT_OK(PrepareProvider(**runtime, "gpt-4o-mini"));
  EXPECT_TRUE(internal::PartsOf(**runtime).deferred->built());
  EXPECT_EQ((*runtime)->provider->name(), "openai");
}

TEST_F(RuntimeTest, MissingScriptFileIsAClearError) {
  auto runtime = OpenRuntime(
      MakeConfig({{"provider.name", "scripted"}, {"provider.script_file", dir_ + "/none.json"}}),
      env_);
  MEND_ASSERT_OK(runtime);
  EXPECT_THAT(PrepareProvider(**runtime), StatusIs(StatusCode::kNotFound, HasSubstr("none.json")));
}

TEST_F(RuntimeTest, ProviderOptionsComeFromTheProviderKeys) {
  const Config config = MakeConfig({{"provider.name", "anthropic"},
                                    {"provider.base_url", "http://127.0.0.1:9"},
                                    {"provider.api_key", kSecret},
                                    {"provider.timeout", "7s"},
                                    {"provider.connect_timeout", "2s"},
                                    {"provider.script_file", "/s.json"},
                                    {"provider.prices_file", "/p.json"}});
  const llm::ProviderOptions options = ProviderOptionsFromConfig(config, "claude-x");
  EXPECT_EQ(options.kind, "anthropic");
  EXPECT_EQ(options.model, "claude-x");
  EXPECT_EQ(options.base_url, "http://127.0.0.1:9");
  EXPECT_EQ(options.api_key, kSecret);
  EXPECT_EQ(options.timeout, std::chrono::seconds(7));
  EXPECT_EQ(options.connect_timeout, std::chrono::seconds(2));
  EXPECT_EQ(options.script_file, "/s.json");
  EXPECT_EQ(options.prices_file, "/p.json");

  const Config with_model = MakeConfig({{"provider.model", "m-config"}});
  EXPECT_EQ(ProviderOptionsFromConfig(with_model, "m-agent").model, "m-config");
}

TEST_F(RuntimeTest, EventsGoToJsonlWithTheKeyRedacted) {
  {
    auto runtime = OpenRuntime(MakeConfig({{"provider.api_key", kSecret}}), env_);
    MEND_ASSERT_OK(runtime);
    obs::Event event("test.event");
    event.AddString("detail", std::string("key=") + kSecret);
    (*runtime)->events->Publish(std::move(event));
    MEND_ASSERT_OK((*runtime)->events->Flush());
  }
  auto text = ReadFileToString(*env_.fs, home_ + "/events.jsonl");
  MEND_ASSERT_OK(text);
  EXPECT_THAT(*text, HasSubstr("test.event"));
  EXPECT_THAT(*text, HasSubstr("[REDACTED]"));
  EXPECT_THAT(*text, Not(HasSubstr(kSecret)));
}

TEST_F(RuntimeTest, OpenAgentRunsAndRecordsTheAgentFolder) {
  const std::string agent_dir = dir_ + "/agent";
  WriteFile(agent_dir + "/agent.toml", "name = \"t\"\ntools = [\"read_file\"]\n");
  WriteFile(agent_dir + "/instructions.md", "Answer briefly.\n");
  RuntimeOptions options;
  std::vector<llm::ScriptedStep> steps(1);
  steps[0].text = "hello there";
  options.provider = std::make_unique<llm::ScriptedProvider>(steps);
  auto runtime = OpenRuntime(MakeConfig({}), env_, std::move(options));
  MEND_ASSERT_OK(runtime);

  auto agent = OpenAgent(**runtime, agent_dir);
  MEND_ASSERT_OK(agent);
  agent::SendOptions send;
  send.run_id = "r1";
  auto result = (*agent)->Send("say hello", send);
  MEND_ASSERT_OK(result);
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);
  EXPECT_EQ(result->output, "hello there");

  auto run = FindRun(**runtime, "r1");
  MEND_ASSERT_OK(run);
  EXPECT_EQ(run->agent_dir, agent_dir);
  EXPECT_EQ(run->agent, "t");
  EXPECT_THAT(OpenAgentForRun(**runtime, "r1", ProviderUse::kNoModel), IsOk());
}

TEST_F(RuntimeTest, UnknownRunIsNamedInTheError) {
  auto runtime = OpenRuntime(MakeConfig({}), env_);
  MEND_ASSERT_OK(runtime);
  EXPECT_THAT(FindRun(**runtime, "nope"),
              StatusIs(StatusCode::kNotFound, ::testing::Eq("no run named nope")));
  EXPECT_THAT(OpenAgentForRun(**runtime, "nope"), StatusIs(StatusCode::kNotFound));
}

TEST_F(RuntimeTest, MissingAgentFolderIsNotFound) {
  auto runtime = OpenRuntime(MakeConfig({}), env_);
  MEND_ASSERT_OK(runtime);
  EXPECT_THAT(OpenAgent(**runtime, dir_ + "/missing", ProviderUse::kNoModel),
              StatusIs(StatusCode::kNotFound));
}

}  // namespace
}  // namespace mend::app
