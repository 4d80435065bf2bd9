// Lesson jobs left by earlier runs, with the real binaries: a `mend run` against a new endpoint
// sends none of them anywhere (they neither reach its model nor take its scripted replies), and
// each is generated later, by `mend reflect drain`, only on the provider its run used.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "mend/base/env.h"
#include "mend/lessonq/lesson_queue.h"
#include "tests/e2e/child_process.h"
#include "tests/e2e/temp_dir.h"
#include "tests/support/status_matchers.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kKey[] = "sk-lesson-leftover-KEY-5151";
constexpr std::chrono::seconds kBound(20);
constexpr char kModel[] = "gpt-4o-mini";
constexpr char kLesson[] =
    R"({"text": "<situation>Editing generated files</situation>\n<mistake>Edited the output instead of the template</mistake>\n<correction>Change the template and regenerate</correction>\n<tags>codegen, templates</tags>"})";

class LessonLeftoverE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = ScopedTempDir::Create();
    MEND_ASSERT_OK(dir);
    dir_ = std::move(*dir);
    std::error_code error;
    std::filesystem::create_directories(dir_->File("agent"), error);
    ASSERT_FALSE(error) << error.message();
    MEND_ASSERT_OK(dir_->WriteFile("agent/agent.toml", "name = \"deployer\"\ntools = []\n"));
    MEND_ASSERT_OK(dir_->WriteFile("agent/instructions.md", "Deploy services.\n"));
    env_ = {"PATH=/usr/bin:/bin", "HOME=" + dir_->path(), std::string("MEND_API_KEY=") + kKey};
  }

  // A fake server answering `script` in order (then "ok"), logging every request to <name>.log.
  std::unique_ptr<ChildProcess> StartServer(const std::string& name, const std::string& script,
                                            int* port) {
    auto file = dir_->WriteFile(name + ".json", script);
    EXPECT_THAT(file, IsOk());
    auto server = StartFakeServer(
        FAKE_LLM_SERVER_BINARY,
        {"--script", *file, "--api-key", kKey, "--log", dir_->File(name + ".log")}, kBound);
    EXPECT_THAT(server, IsOk());
    if (!server.ok()) return nullptr;
    *port = server->port;
    return std::move(server->process);
  }

  // The requests a server has logged.
  std::vector<nlohmann::json> Requests(const std::string& name) {
    std::vector<nlohmann::json> requests;
    std::ifstream in(dir_->File(name + ".log"));
    for (std::string line; std::getline(in, line);) {
      requests.push_back(nlohmann::json::parse(line, nullptr, false));
    }
    return requests;
  }

  static std::string Url(int port) { return "http://127.0.0.1:" + std::to_string(port); }

  // Jobs of earlier runs, as those runs' processes left them in the WAL.
  void Leave(const std::vector<lessonq::LessonRequest>& requests) {
    lessonq::QueueOptions options;
    options.base_dir = dir_->File("home/reflexion");
    auto queue = lessonq::LessonQueue::Open(Env::Default(), options, nullptr);
    MEND_ASSERT_OK(queue);
    for (const lessonq::LessonRequest& request : requests) {
      auto enqueued = (*queue)->Enqueue(request);
      MEND_ASSERT_OK(enqueued);
      ASSERT_TRUE(enqueued->created);
    }
  }

  // `mend ARGS` on the provider at `provider_port` (0: none), given as flags, or as environment
  // variables for commands without provider flags.
  enum class Given { kFlags, kEnvironment };
  nlohmann::json MendJson(std::vector<std::string> args, int provider_port,
                          Given given = Given::kFlags) {
    std::vector<std::string> argv = {MEND_BINARY, "--home", dir_->File("home"), "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env = env_;
    if (provider_port != 0 && given == Given::kFlags) {
      argv.insert(argv.end(),
                  {"--provider", "openai", "--model", kModel, "--base-url", Url(provider_port)});
    } else if (provider_port != 0) {
      env.insert(env.end(), {"MEND_PROVIDER=openai", std::string("MEND_MODEL=") + kModel,
                             "MEND_BASE_URL=" + Url(provider_port)});
    }
    auto result = RunProcess(argv, env, kBound);
    EXPECT_THAT(result, IsOk());
    if (!result.ok()) return nullptr;
    EXPECT_TRUE(result->status.exited && result->status.code == 0) << result->err;
    return nlohmann::json::parse(result->out, nullptr, false);
  }

  std::unique_ptr<ScopedTempDir> dir_;
  std::vector<std::string> env_;
};

lessonq::LessonRequest Leftover(const std::string& task, const std::string& base_url) {
  lessonq::LessonRequest request{task, "assistant: edited dist/app.js by hand",
                                 "FAILED_PRECONDITION: run reached max_steps (4)", "error"};
  request.run_id = "earlier-" + std::to_string(task.size());
  if (!base_url.empty()) {
    request.provider = "openai";
    request.base_url = base_url;
    request.model = kModel;
  }
  return request;
}

TEST_F(LessonLeftoverE2eTest, ARunOnANewEndpointLeavesEarlierLessonsToTheirOwnProviders) {
  int local_port = 0;
  int hosted_port = 0;
  auto local = StartServer(
      "local", std::string("[") + kLesson + "," + kLesson + "," + kLesson + "]", &local_port);
  ASSERT_NE(local, nullptr);
  auto hosted = StartServer("hosted",
                            std::string(R"([{"text": "The payments service is deployed."},)") +
                                kLesson + "," + kLesson + "]",
                            &hosted_port);
  ASSERT_NE(hosted, nullptr);
  // Three runs on the local model and one on the hosted endpoint failed earlier; one job was
  // enqueued by hand and records no provider.
  ASSERT_NO_FATAL_FAILURE(Leave({Leftover("Regenerate the API client.", Url(local_port)),
                                 Leftover("Regenerate the docs site.", Url(local_port)),
                                 Leftover("Regenerate the protobuf stubs.", Url(local_port)),
                                 Leftover("Regenerate the SDK.", Url(hosted_port)),
                                 Leftover("Regenerate the changelog.", "")}));

  // The new run gets its own reply and nobody else's request reaches its model.
  const nlohmann::json run =
      MendJson({"run", dir_->File("agent"), "Deploy the payments service."}, hosted_port);
  EXPECT_EQ(run["status"], "completed") << run;
  EXPECT_EQ(run["output"], "The payments service is deployed.") << run;
  EXPECT_EQ(Requests("hosted").size(), 1u);
  EXPECT_EQ(Requests("local").size(), 0u);

  // Every leftover waits, untouched: no attempt, no error, no dead letter; those of the local
  // model say for which provider.
  nlohmann::json listed = MendJson({"reflect", "list"}, hosted_port, Given::kEnvironment);
  ASSERT_EQ(listed["pending"].size(), 5u) << listed;
  EXPECT_EQ(listed["dlq"].size(), 0u) << listed;
  int waiting_for_local = 0;
  for (const nlohmann::json& job : listed["pending"]) {
    EXPECT_EQ(job["attempts"], 0) << job;
    EXPECT_TRUE(job["last_error"].is_null()) << job;
    if (job["provider"].is_object() && job["provider"]["base_url"] == Url(local_port)) {
      ++waiting_for_local;
      EXPECT_THAT(job["waits_for"].get<std::string>(), HasSubstr(Url(local_port))) << job;
    } else {
      EXPECT_TRUE(job["waits_for"].is_null()) << job;
    }
  }
  EXPECT_EQ(waiting_for_local, 3);

  // A drain on the hosted endpoint generates its own job and the one that recorded none.
  nlohmann::json drained = MendJson({"reflect", "drain"}, hosted_port);
  EXPECT_EQ(drained["succeeded"], 2) << drained;
  EXPECT_EQ(drained["dead_lettered"], 0) << drained;
  EXPECT_EQ(drained["remaining"], 3) << drained;
  EXPECT_EQ(Requests("hosted").size(), 3u);
  EXPECT_EQ(Requests("local").size(), 0u);

  // The local model's jobs go to the local model, with the model their runs used.
  drained = MendJson({"reflect", "drain"}, local_port);
  EXPECT_EQ(drained["succeeded"], 3) << drained;
  EXPECT_EQ(drained["remaining"], 0) << drained;
  const std::vector<nlohmann::json> to_local = Requests("local");
  ASSERT_EQ(to_local.size(), 3u);
  for (const nlohmann::json& request : to_local) {
    EXPECT_THAT(request["body"].get<std::string>(), HasSubstr("Regenerate the"));
  }
  listed = MendJson({"reflect", "list"}, 0);
  EXPECT_EQ(listed["pending"].size(), 0u) << listed;
  EXPECT_EQ(listed["dlq"].size(), 0u) << listed;
}

}  // namespace
}  // namespace mend::testing
