// `mend init`: every template writes a folder that the real loader accepts as written, and that
// `mend run` (the real executable, in a workspace) completes on a fake OpenAI-compatible server
// given only the model settings of the environment: the model calls the template's command tool
// once, the tool's output passes the template's check, and the model answers. Overwrites are
// refused before anything is written unless --force; the files are private, the script executable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "tests/cli/cli_home_test.h"
#include "tests/e2e/child_process.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/status_matchers.h"

namespace mend::cli {
namespace {

using ::mend::testing::ChildOutput;
using ::mend::testing::FakeLlmServer;
using ::mend::testing::FakeResponse;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kKey[] = "init-test-key";

const std::vector<std::string> kFixerFiles = {"agent.toml", "instructions.md",
                                              "skills/minimal-fix.md", "tools/run_checks.toml",
                                              "tools/run_checks.sh"};

mode_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// What each template's run needs: the workspace's files, the tool call the model makes, and how
// the tool's output must start.
struct TemplateCase {
  std::string name;
  std::string tool;
  std::string arguments;
  std::vector<std::pair<std::string, std::string>> workspace;
  std::string output_start;
};

std::string PrintCase(const ::testing::TestParamInfo<TemplateCase>& info) {
  return info.param.name;
}

class InitCommandTest : public CliHomeTest {
 protected:
  std::string Read(const std::string& path) {
    Result<std::string> text = ReadFileToString(fs_, path);
    EXPECT_THAT(text, ::mend::testing::IsOk());
    return text.ok() ? *text : "";
  }

  // `mend --home <home> run <agent> <task> --json` as a child process in `workspace`, with only
  // the model settings (and PATH, HOME) in its environment.
  ChildOutput RunAgent(const std::string& base_url, const std::string& workspace) {
    const char* path = getenv("PATH");
    const std::vector<std::string> env = {
        "PATH=" + std::string(path == nullptr ? "/usr/bin:/bin" : path),
        "HOME=" + dir_,
        "MEND_PROVIDER=openai",
        "MEND_MODEL=fake-model",
        "MEND_BASE_URL=" + base_url,
        "MEND_API_KEY=" + std::string(kKey)};
    Result<ChildOutput> run = ::mend::testing::RunProcess(
        {MEND_BINARY, "--home", home_, "run", agent_, "do the task", "--json"}, env,
        std::chrono::seconds(60), workspace);
    EXPECT_THAT(run, ::mend::testing::IsOk());
    return run.ok() ? *run : ChildOutput{};
  }

  // The content of the tool result the model got back in the server's second request.
  static std::string ToolResultSent(const FakeLlmServer& server) {
    const auto requests = server.requests();
    for (const auto& request : requests) {
      if (request.path != "/v1/chat/completions") continue;
      const nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
      for (const nlohmann::json& message : body.value("messages", nlohmann::json::array())) {
        if (message.value("role", "") == "tool") return message.value("content", "");
      }
    }
    return "";
  }
};

class InitTemplateTest : public InitCommandTest,
                         public ::testing::WithParamInterface<TemplateCase> {};

TEST_P(InitTemplateTest, LoadsAsWrittenAndRunsOnTheHomesModel) {
  const TemplateCase& c = GetParam();
  ASSERT_EQ(Mend({"init", agent_, "--template", c.name}), 0) << err();

  Result<agent::AgentSpec> spec = agent::LoadAgentFolder(fs_, agent_);
  ASSERT_THAT(spec, ::mend::testing::IsOk());
  EXPECT_EQ(spec->name, "agent");  // the folder's own name
  EXPECT_EQ(spec->model, "");      // the home's model
  ASSERT_EQ(spec->command_tools.size(), 1u);
  EXPECT_EQ(spec->command_tools[0].spec.name, c.tool);
  EXPECT_THAT(spec->tools, ::testing::Contains(c.tool));
  ASSERT_EQ(spec->checks.size(), 1u);
  EXPECT_EQ(spec->checks[0].tool, c.tool);
  EXPECT_EQ(spec->skills.size(), 1u);
  EXPECT_THAT(spec->instructions, Not(::testing::IsEmpty()));

  const std::string workspace = dir_ + "/workspace";
  MEND_ASSERT_OK(fs_.CreateDirs(workspace));
  for (const auto& [file, text] : c.workspace) Write(workspace + "/" + file, text);
  auto server = FakeLlmServer::Start();
  ASSERT_THAT(server, ::mend::testing::IsOk());
  (*server)->RequireApiKey(kKey);
  FakeResponse call;
  call.tool_calls = {{"call_1", c.tool, c.arguments}};
  FakeResponse answer;
  answer.text = "done";
  (*server)->Enqueue(call);
  (*server)->Enqueue(answer);

  const ChildOutput run = RunAgent((*server)->base_url(), workspace);
  ASSERT_TRUE(run.status.exited) << run.err;
  ASSERT_EQ(run.status.code, 0) << run.out << run.err;
  const nlohmann::json result = nlohmann::json::parse(run.out, nullptr, false);
  EXPECT_EQ(result.value("status", ""), "completed") << run.out;
  EXPECT_EQ(result.value("output", ""), "done");
  // The tool ran in the workspace and its output passed the check: no hint was appended.
  const std::string tool_result = ToolResultSent(**server);
  EXPECT_THAT(tool_result, StartsWith(c.output_start));
  EXPECT_THAT(tool_result, Not(HasSubstr(spec->checks[0].message)));
}

INSTANTIATE_TEST_SUITE_P(
    Templates, InitTemplateTest,
    ::testing::Values(TemplateCase{"fixer",
                                   "run_checks",
                                   "{}",
                                   {{"check.sh", "echo all 3 tests pass\n"}},
                                   "PASS: sh check.sh\nall 3 tests pass"},
                      TemplateCase{"research",
                                   "search",
                                   R"({"query": "fridays"})",
                                   {{"notes.md", "# Deploys\nThe deploy runs on Fridays.\n"}},
                                   "notes.md:2:The deploy runs on Fridays."},
                      TemplateCase{
                          "empty", "echo", R"({"text":"hello"})", {}, R"({"text":"hello"})"}),
    PrintCase);

TEST_F(InitCommandTest, TheFixersCheckHintsWhileTheChecksFail) {
  ASSERT_EQ(Mend({"init", agent_}), 0) << err();
  Result<agent::AgentSpec> spec = agent::LoadAgentFolder(fs_, agent_);
  ASSERT_THAT(spec, ::mend::testing::IsOk());
  const std::string workspace = dir_ + "/workspace";
  Write(workspace + "/check.sh", "echo 'test_parse: expected 3, got 4'\nexit 1\n");
  auto server = FakeLlmServer::Start();
  ASSERT_THAT(server, ::mend::testing::IsOk());
  FakeResponse call;
  call.tool_calls = {{"call_1", "run_checks", "{}"}};
  FakeResponse answer;
  answer.text = "the checks fail";
  (*server)->Enqueue(call);
  (*server)->Enqueue(answer);

  const ChildOutput run = RunAgent((*server)->base_url(), workspace);
  ASSERT_EQ(run.status.code, 0) << run.out << run.err;
  const std::string tool_result = ToolResultSent(**server);
  EXPECT_THAT(tool_result, StartsWith("FAIL: sh check.sh exited with status 1\n"
                                      "test_parse: expected 3, got 4"));
  EXPECT_THAT(tool_result, HasSubstr(spec->checks[0].message));
}

TEST_F(InitCommandTest, PrintsWhatItWroteAndTheNextCommand) {
  ASSERT_EQ(Mend({"init", agent_}), 0) << err();
  EXPECT_EQ(out(),
            "wrote the fixer agent \"agent\" in " + agent_ +
                ":\n"
                "  agent.toml\n"
                "  instructions.md\n"
                "  skills/minimal-fix.md\n"
                "  tools/run_checks.toml\n"
                "  tools/run_checks.sh\n"
                "It runs on the model of the home's configuration (MEND_PROVIDER, "
                "MEND_MODEL, MEND_BASE_URL and MEND_API_KEY, or config.toml); `mend doctor " +
                agent_ + "` checks both.\nnext: mend run " + agent_ +
                " \"make the checks pass\"\n");
  EXPECT_EQ(err(), "");
}

TEST_F(InitCommandTest, JsonNamesTheFolderTheTemplateAndTheFiles) {
  ASSERT_EQ(Mend({"init", agent_, "--template", "research", "--json"}), 0) << err();
  const nlohmann::json json = Json();
  EXPECT_EQ(JsonKeys(json), (std::set<std::string>{"dir", "template", "files"}));
  EXPECT_EQ(json["dir"], agent_);
  EXPECT_EQ(json["template"], "research");
  EXPECT_EQ(json["files"],
            nlohmann::json({"agent.toml", "instructions.md", "skills/cite-sources.md",
                            "tools/search.toml", "tools/search.sh"}));
}

TEST_F(InitCommandTest, FilesArePrivateAndTheToolScriptIsExecutable) {
  ASSERT_EQ(Mend({"init", agent_}), 0) << err();
  EXPECT_EQ(ModeOf(agent_), 0700u);
  EXPECT_EQ(ModeOf(agent_ + "/skills"), 0700u);
  EXPECT_EQ(ModeOf(agent_ + "/tools"), 0700u);
  for (const std::string& file : kFixerFiles) {
    EXPECT_EQ(ModeOf(agent_ + "/" + file), file.ends_with(".sh") ? 0700u : 0600u) << file;
  }
  EXPECT_THAT(Read(agent_ + "/tools/run_checks.sh"), StartsWith("#!/bin/sh\n"));
}

TEST_F(InitCommandTest, RefusesToOverwriteAndWritesNothing) {
  Write(agent_ + "/instructions.md", "my own prompt\n");
  ASSERT_EQ(Mend({"init", agent_}), 1);
  EXPECT_EQ(err(), "mend: " + agent_ +
                       "/instructions.md already exists; mend init does not overwrite files, "
                       "--force replaces them\n");
  EXPECT_EQ(out(), "");
  EXPECT_FALSE(fs_.Exists(agent_ + "/agent.toml"));
  EXPECT_FALSE(fs_.Exists(agent_ + "/skills"));
  EXPECT_FALSE(fs_.Exists(agent_ + "/tools"));
  EXPECT_EQ(Read(agent_ + "/instructions.md"), "my own prompt\n");
}

TEST_F(InitCommandTest, ForceReplacesTheTemplatesFiles) {
  ASSERT_EQ(Mend({"init", agent_, "--template", "empty"}), 0) << err();
  Write(agent_ + "/instructions.md", "edited\n");
  Write(agent_ + "/notes.txt", "not the template's\n");

  ASSERT_EQ(Mend({"init", agent_, "--template", "empty", "--json"}), 1);
  EXPECT_THAT(err(), HasSubstr("/agent.toml already exists (and 4 more of the template's files)"));
  EXPECT_EQ(Json()["error"]["code"], "ALREADY_EXISTS");

  ASSERT_EQ(Mend({"init", agent_, "--template", "empty", "--force"}), 0) << err();
  EXPECT_THAT(Read(agent_ + "/instructions.md"), StartsWith("You are a new agent."));
  EXPECT_EQ(ModeOf(agent_ + "/instructions.md"), 0600u);
  EXPECT_EQ(ModeOf(agent_ + "/tools/echo.sh"), 0700u);
  EXPECT_EQ(Read(agent_ + "/notes.txt"), "not the template's\n");
}

TEST_F(InitCommandTest, AnUnknownTemplateIsAUsageErrorListingTheChoices) {
  ASSERT_EQ(Mend({"init", agent_, "--template", "fixr"}), 2);
  EXPECT_EQ(err(),
            "mend: unknown template \"fixr\"; choose fixer, research or empty (run 'mend init "
            "--help' for usage)\n");
  EXPECT_FALSE(fs_.Exists(agent_));
}

TEST_F(InitCommandTest, APathThatIsAFileIsRefused) {
  Write(agent_, "a file\n");
  ASSERT_EQ(Mend({"init", agent_}), 1);
  EXPECT_EQ(err(), "mend: " + agent_ + " exists and is not a folder\n");

  // A file where one of the template's folders goes stops it before anything is written.
  const std::string other = dir_ + "/other";
  Write(other + "/tools", "a file\n");
  ASSERT_EQ(Mend({"init", other, "--force"}), 1);
  EXPECT_EQ(err(), "mend: " + other + "/tools exists and is not a folder\n");
  EXPECT_FALSE(fs_.Exists(other + "/agent.toml"));
}

TEST_F(InitCommandTest, WritesIntoTheCurrentDirectoryByDefault) {
  const std::string here = dir_ + "/My Project";
  MEND_ASSERT_OK(fs_.CreateDirs(here));
  const char* path = getenv("PATH");
  Result<ChildOutput> init = ::mend::testing::RunProcess(
      {MEND_BINARY, "--home", home_, "init"},
      {"PATH=" + std::string(path == nullptr ? "/usr/bin:/bin" : path), "HOME=" + dir_},
      std::chrono::seconds(20), here);
  ASSERT_THAT(init, ::mend::testing::IsOk());
  ASSERT_EQ(init->status.code, 0) << init->err;
  EXPECT_THAT(init->out, HasSubstr("next: mend run . \"make the checks pass\"\n"));
  Result<agent::AgentSpec> spec = agent::LoadAgentFolder(fs_, here);
  ASSERT_THAT(spec, ::mend::testing::IsOk());
  // "My Project" is no agent name, so the agent takes the template's.
  EXPECT_EQ(spec->name, "fixer");
  EXPECT_THAT(spec->tools, ElementsAre("list_dir", "read_file", "grep", "edit_file", "run_checks"));
}

}  // namespace
}  // namespace mend::cli
