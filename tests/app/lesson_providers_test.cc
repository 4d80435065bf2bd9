// Reflexion against real provider errors (the OpenAI provider over loopback to the fake server):
// only a failure of the task becomes a lesson job, never a provider or network failure; a job
// records the provider of its run, and workers generate a job only on that provider.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/app/lesson_admin.h"
#include "mend/app/lessons.h"
#include "mend/app/runtime.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::FakeLlmServer;
using ::mend::testing::FakeResponse;
using ::mend::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kKey[] = "sk-lesson-providers-KEY-4242";
constexpr char kModel[] = "gpt-lesson-test";
constexpr char kTask[] = "Rotate the signing key of the billing service.";
constexpr char kLessonReply[] =
    "<situation>Rotating a signing key</situation>\n"
    "<mistake>Pasted the whole key ring into the prompt</mistake>\n"
    "<correction>Refer to the key ring by its path</correction>\n"
    "<tags>keys, rotation</tags>";

FakeResponse Reply(int status, std::string type = "") {
  FakeResponse response;
  response.status = status;
  response.error_type = std::move(type);
  response.error_message = "scripted " + std::to_string(status);
  return response;
}

FakeResponse Text(std::string text) {
  FakeResponse response;
  response.text = std::move(text);
  return response;
}

class LessonProvidersTest : public AgentHomeTest {
 protected:
  void SetUp() override {
    AgentHomeTest::SetUp();
    auto server = FakeLlmServer::Start();
    MEND_ASSERT_OK(server);
    server_ = std::move(server).value();
    server_->RequireApiKey(kKey);
  }
  void TearDown() override {
    runtimes_.clear();
    AgentHomeTest::TearDown();
  }

  // A runtime on dir_/home whose provider is the OpenAI provider at `base_url`.
  Runtime& Open(const std::string& base_url, std::map<std::string, std::string> flags = {}) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = dir_ + "/home";
    sources.flags["provider.retries"] = "0";  // a scripted failure is one that lasts
    sources.flags["provider.name"] = "openai";
    sources.flags["provider.base_url"] = base_url;
    sources.flags.try_emplace("provider.model", kModel);
    sources.flags.try_emplace("provider.api_key", kKey);
    Result<Config> config = LoadConfig(sources, *env_.fs);
    EXPECT_THAT(config, IsOk());
    RuntimeOptions options;
    options.event_log = EventLog::kNone;
    auto runtime = OpenRuntime(*config, env_, std::move(options));
    EXPECT_THAT(runtime, IsOk());
    runtimes_.push_back(std::move(runtime).value());
    return *runtimes_.back();
  }

  agent::RunResult Run(Runtime& runtime, const std::string& task = kTask) {
    auto agent = OpenAgent(runtime, agent_dir_);
    EXPECT_THAT(agent, IsOk());
    if (!agent.ok()) return {};
    auto result = (*agent)->Send(task);
    EXPECT_THAT(result, IsOk());
    return result.ok() ? *result : agent::RunResult{};
  }

  std::vector<lessonq::Job> Pending(Runtime& runtime) {
    auto pending = runtime.lessons.queue->Pending();
    EXPECT_THAT(pending, IsOk());
    return pending.ok() ? *pending : std::vector<lessonq::Job>{};
  }

  std::unique_ptr<FakeLlmServer> server_;
  std::vector<std::unique_ptr<Runtime>> runtimes_;
};

TEST_F(LessonProvidersTest, ProviderAndNetworkFailuresAreNotLessons) {
  // 401: a wrong key.
  Runtime& wrong_key = Open(server_->base_url(), {{"provider.api_key", "sk-wrong-key-00000000"}});
  agent::RunResult failed = Run(wrong_key);
  ASSERT_EQ(failed.status, store::RunStatus::kFailed);
  ASSERT_TRUE(failed.error.has_value());
  EXPECT_EQ(failed.error->error_class, "auth");
  EXPECT_THAT(Pending(wrong_key), IsEmpty());

  // 503: the provider is down.
  Runtime& runtime = Open(server_->base_url());
  server_->Enqueue(Reply(503));
  failed = Run(runtime);
  ASSERT_EQ(failed.status, store::RunStatus::kFailed);
  EXPECT_EQ(failed.error->error_class, "transient");
  EXPECT_THAT(Pending(runtime), IsEmpty());

  // A refused connection: nothing listens at the port any more.
  auto gone = FakeLlmServer::Start();
  MEND_ASSERT_OK(gone);
  const std::string closed = (*gone)->base_url();
  gone->reset();
  Runtime& unreachable = Open(closed);
  failed = Run(unreachable);
  ASSERT_EQ(failed.status, store::RunStatus::kFailed);
  EXPECT_EQ(failed.error->error_class, "transient");
  EXPECT_THAT(Pending(unreachable), IsEmpty());

  // A failure of the task itself still is one: the prompt the run built was too long.
  server_->Enqueue(Reply(400, "context_length_exceeded"));
  failed = Run(runtime);
  ASSERT_EQ(failed.status, store::RunStatus::kFailed);
  EXPECT_EQ(failed.error->error_class, "permanent");
  const std::vector<lessonq::Job> pending = Pending(runtime);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].request.trigger, "error");
  EXPECT_THAT(pending[0].request.outcome, HasSubstr("INVALID_ARGUMENT"));
}

TEST_F(LessonProvidersTest, AJobRecordsItsRunsProviderAndOnlyThatProviderGetsIt) {
  auto other = FakeLlmServer::Start();
  MEND_ASSERT_OK(other);
  (*other)->RequireApiKey(kKey);
  // A run on the fake server fails; its lesson job names that server and the run's model.
  Runtime& first = Open(server_->base_url(), {{"reflexion.queue.drain_timeout", "0s"}});
  server_->Enqueue(Reply(400, "context_length_exceeded"));
  ASSERT_EQ(Run(first).status, store::RunStatus::kFailed);
  std::vector<lessonq::Job> pending = Pending(first);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].request.provider, "openai");
  EXPECT_EQ(pending[0].request.base_url, server_->base_url());
  EXPECT_EQ(pending[0].request.model, kModel);
  const size_t first_requests = server_->request_count();

  // A process configured with the other server leaves it pending, untouched, and says why.
  Runtime& elsewhere = Open((*other)->base_url());
  EXPECT_THAT(WhyLessonWaits(elsewhere, pending[0]), HasSubstr(server_->base_url()));
  MEND_ASSERT_OK(StartLessonWorkers(elsewhere));
  auto drained = elsewhere.lessons.queue->DrainNow(std::chrono::seconds(20));
  MEND_ASSERT_OK(drained);
  EXPECT_EQ(drained->succeeded + drained->dead_lettered + drained->retried, 0);
  EXPECT_EQ(drained->remaining, 1);
  EXPECT_EQ((*other)->request_count(), 0u);
  MEND_ASSERT_OK(StopLessonWorkers(elsewhere, std::chrono::seconds(5)));
  pending = Pending(elsewhere);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].attempts, 0);
  EXPECT_EQ(pending[0].last_error, "");
  const nlohmann::json listed = PendingLessonJobsJson(elsewhere, pending, env_.clock->Now());
  EXPECT_EQ(listed[0]["provider"]["base_url"], server_->base_url());
  EXPECT_THAT(listed[0]["waits_for"].get<std::string>(), HasSubstr(server_->base_url()));

  // A process on the job's provider generates it there, with the recorded model.
  Runtime& home = Open(server_->base_url(), {{"provider.model", "another-default"}});
  EXPECT_EQ(WhyLessonWaits(home, pending[0]), "");
  server_->Enqueue(Text(kLessonReply));
  MEND_ASSERT_OK(StartLessonWorkers(home));
  drained = home.lessons.queue->DrainNow(std::chrono::seconds(20));
  MEND_ASSERT_OK(drained);
  EXPECT_EQ(drained->succeeded, 1);
  EXPECT_EQ(drained->remaining, 0);
  const std::vector<mend::testing::RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), first_requests + 1);
  EXPECT_THAT(requests.back().body, HasSubstr(std::string("\"model\":\"") + kModel + "\""));
}

}  // namespace
}  // namespace mend::app
