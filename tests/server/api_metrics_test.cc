// /api/v1/metrics: since when the server's counters count, and the store's totals beside them.
#include <gmock/gmock.h>

#include <chrono>
#include <string>

#include "mend/base/manual_clock.h"
#include "mend/base/time_format.h"
#include "mend/memory/fact_store.h"
#include "tests/server/server_fixture.h"

namespace mend::server {
namespace {

class MetricsApiTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    env_.clock = &clock_;
  }

  void MakeRun(const std::string& id, store::RunStatus status) {
    store::RunRecord run;
    run.id = id;
    run.agent = "a";
    run.task = "task of " + id;
    MEND_ASSERT_OK(runtime_->store->CreateRun(run));
    if (status == store::RunStatus::kRunning) return;
    store::RunUpdate update;
    update.status = status;
    MEND_ASSERT_OK(runtime_->store->UpdateUnleased(id, update));
  }

  void AddFact(const std::string& text, const std::string& category) {
    memory::NewFact fact;
    fact.content = text;
    fact.category = category;
    fact.source = "user";
    MEND_ASSERT_OK(runtime_->facts->Add(fact).status());
  }

  ManualClock clock_{*ParseRfc3339("2025-01-02T10:00:00Z")};
};

TEST_F(MetricsApiTest, SaysSinceWhenAndGivesTheStoresTotals) {
  StartServer();
  MakeRun("r1", store::RunStatus::kCompleted);
  MakeRun("r2", store::RunStatus::kCompleted);
  MakeRun("r3", store::RunStatus::kFailed);
  MakeRun("r4", store::RunStatus::kRunning);
  MakeRun("r5", store::RunStatus::kWaiting);
  AddFact("Run the migrations before deploying payments.", "lesson");
  AddFact("Settings live in settings.conf, not settings.cfg.", "lesson");
  AddFact("The staging cluster is blue-7.", "general");
  clock_.Advance(std::chrono::seconds(90));

  Reply reply = Get("/api/v1/metrics");
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body, nlohmann::json::parse(R"({
    "started_at": "2025-01-02T10:00:00Z",
    "uptime_seconds": 90,
    "runs": {"total": 5, "running": 1, "waiting": 1, "completed": 2, "failed": 1,
             "quarantined": 0},
    "facts": {"active": 3, "superseded": 0, "lessons": 2}
  })"));
}

TEST_F(MetricsApiTest, AnEmptyHomeHasZeroTotals) {
  StartServer();
  Reply reply = Get("/api/v1/metrics");
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["uptime_seconds"], 0);
  EXPECT_EQ(reply.body["runs"]["total"], 0);
  EXPECT_EQ(reply.body["runs"]["completed"], 0);
  EXPECT_EQ(reply.body["facts"]["active"], 0);
  EXPECT_EQ(reply.body["facts"]["lessons"], 0);
}

}  // namespace
}  // namespace mend::server
