// A lesson stored through the runtime's lesson sink (reflexion, the proxy, MCP's add_lesson) wakes
// the embedding backfill, as `mend memory add` and the API's memory writes do: its vector is
// stored at once, not after the backfill's idle pause.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "mend/app/runtime.h"
#include "mend/base/manual_clock.h"
#include "mend/reflexion/lesson.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::FakeLlmServer;
using ::mend::testing::IsOk;
using ::mend::testing::RecordedRequest;

class LessonBackfillTest : public AgentHomeTest {
 protected:
  void SetUp() override {
    AgentHomeTest::SetUp();
    auto server = FakeLlmServer::Start();
    MEND_ASSERT_OK(server);
    server_ = std::move(server).value();
    server_->SetRequestObserver([this](const RecordedRequest& request) {
      if (request.path != "/v1/embeddings") return;
      std::lock_guard<std::mutex> lock(mu_);
      ++embedding_requests_;
      cv_.notify_all();
    });
    env_.clock = &clock_;  // the backfill's idle pause never ends on its own
    ConfigSources sources;
    sources.flags = {{"home", dir_ + "/home"},
                     {"provider.name", "scripted"},
                     {"provider.script_file", dir_ + "/none.json"},
                     {"memory.embeddings.url", server_->base_url() + "/v1"},
                     // No span writer: the backfill is then the only thread that waits on the
                     // clock, which the test counts.
                     {"observe.enabled", "false"}};
    Result<Config> config = LoadConfig(sources, *env_.fs);
    MEND_ASSERT_OK(config);
    RuntimeOptions options;
    options.event_log = EventLog::kNone;
    auto runtime = OpenRuntime(*config, env_, std::move(options));
    MEND_ASSERT_OK(runtime);
    runtime_ = std::move(runtime).value();
    ASSERT_NE(runtime_->backfill, nullptr);
    ASSERT_NE(runtime_->lessons.sink, nullptr);
  }
  void TearDown() override {
    runtime_.reset();
    AgentHomeTest::TearDown();
  }

  // Waits (on a condition variable, for at most `limit` of real time, which only a failing test
  // reaches) until the fake server has answered `n` embedding requests.
  bool EmbeddingRequestsReach(int n, std::chrono::seconds limit = std::chrono::seconds(20)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return embedding_requests_ >= n; });
  }

  int64_t Unembedded() {
    auto coverage = runtime_->facts->Coverage(runtime_->embedder->model_id());
    EXPECT_THAT(coverage, IsOk());
    if (!coverage.ok()) return -1;
    for (const memory::EmbeddingCoverage& c : *coverage) {
      if (c.model_id == runtime_->embedder->model_id()) return c.uncovered;
    }
    return -1;
  }

  ManualClock clock_;
  std::unique_ptr<FakeLlmServer> server_;
  std::unique_ptr<Runtime> runtime_;
  std::mutex mu_;
  std::condition_variable cv_;
  int embedding_requests_ = 0;
};

TEST_F(LessonBackfillTest, AStoredLessonIsEmbeddedWithoutWaitingForTheIdlePause) {
  ASSERT_EQ(clock_.waiters(), 0);
  runtime_->backfill->Start();
  clock_.BlockUntilWaiters(1);  // the backfill found nothing to embed and is pausing
  reflexion::Lesson lesson;
  lesson.situation = "Rotating the signing key of the billing service";
  lesson.mistake = "Pasted the whole key ring into the prompt";
  lesson.correction = "Refer to the key ring by its path";
  lesson.trigger = "error";
  lesson.created_at = clock_.Now();

  ASSERT_THAT(runtime_->lessons.sink->Persist(lesson, nullptr), IsOk());

  ASSERT_TRUE(EmbeddingRequestsReach(1)) << "the backfill was not woken by the stored lesson";
  clock_.BlockUntilWaiters(1);  // it stored the vector and is pausing again
  EXPECT_EQ(Unembedded(), 0);
}

}  // namespace
}  // namespace mend::app
