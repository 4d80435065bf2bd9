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
#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kKey[] = "sk-lesson-leftover-KEY-5151";
constexpr char kModel[] = "gpt-4o-mini";
constexpr char kLesson[] =
    R"({"text": "<situation>Editing generated files</situation>\n<mistake>Edited the output instead of the template</mistake>\n<correction>Change the template and regenerate</correction>\n<tags>codegen, templates</tags>"})";

class LessonLeftoverE2eTest : public E2eTest {
 protected:
  LessonLeftoverE2eTest()
      : E2eTest({.secret = kKey,
                 .agent_toml = "name = \"deployer\"\ntools = []\n",
                 .instructions = "Deploy services.\n"}) {}

  // A fake server answering `script` in order (then "ok"), logging every request to <name>.log.
  std::unique_ptr<ChildProcess> StartServer(const std::string& name, const std::string& script,
                                            int* port) {
    auto server = StartAnotherFakeLlm({"--script", WriteTestFile(name + ".json", script),
                                       "--api-key", kKey, "--log", dir_->File(name + ".log")});
    EXPECT_THAT(server, IsOk());
    if (!server.ok()) return nullptr;
    *port = server->port;
    return std::move(server->process);
  }

  // The requests a server has logged.
  std::vector<nlohmann::json> Requests(const std::string& name) {
    return ReadJsonLines(dir_->File(name + ".log"), IfMissing::kEmpty);
  }

  static std::string Url(int port) { return LoopbackUrl(port); }

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
    MendCall call;
    if (provider_port != 0 && given == Given::kFlags) {
      args.insert(args.end(),
                  {"--provider", "openai", "--model", kModel, "--base-url", Url(provider_port)});
    } else if (provider_port != 0) {
      call.extra_env = {"MEND_PROVIDER=openai", std::string("MEND_MODEL=") + kModel,
                        "MEND_BASE_URL=" + Url(provider_port)};
    }
    return E2eTest::MendJson(std::move(args), call);
  }
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
