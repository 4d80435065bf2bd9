// The recovery loop driving a real Agent whose OpenAI-compatible provider talks over HTTP to the
// fake LLM server: an interrupted run comes back through Tick() across a provider outage.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "mend/agent/agent.h"
#include "mend/base/memory_file_system.h"
#include "mend/heal/recovery.h"
#include "mend/llm/factory.h"
#include "tests/agent/agent_test_support.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/status_matchers.h"

namespace mend::heal {
namespace {

using ::mend::agent::testing::CrashingStore;
using ::mend::agent::testing::CrashPoint;
using ::mend::agent::testing::Harness;
using ::mend::testing::FakeLlmServer;
using ::mend::testing::FakeResponse;
using ::mend::testing::StatusIs;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// What `app` does: recovery drives runs through the Agent that owns them.
class AgentDriver final : public RunDriver {
 public:
  explicit AgentDriver(agent::Agent& agent) : agent_(agent) {}
  Result<agent::RunResult> Resume(const store::RunRecord& run) override {
    return agent_.Resume(run.id);
  }
  Status ForkWithNote(const store::RunRecord& run, const std::string& new_id,
                      const std::string& note) override {
    return agent_.ForkWithNote(run.id, new_id, note).status();
  }

 private:
  agent::Agent& agent_;
};

FakeResponse HttpStatus(int status) {
  FakeResponse r;
  r.status = status;
  r.error_message = "the server is overloaded";
  return r;
}

class RecoveryAgentTest : public ::testing::TestWithParam<agent::testing::StoreKind> {};

INSTANTIATE_TEST_SUITE_P(Stores, RecoveryAgentTest,
                         ::testing::Values(agent::testing::StoreKind::kFake,
                                           agent::testing::StoreKind::kSqlite),
                         agent::testing::StoreKindName);

TEST_P(RecoveryAgentTest, InterruptedRunComesBackThroughAnOutageOfTheProvider) {
  auto server = FakeLlmServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  MemoryFileSystem fs;
  Harness h(GetParam());
  Env env;
  env.fs = &fs;
  env.clock = &h.clock;
  llm::ProviderOptions po;
  po.kind = "openai";
  po.model = "gpt-test";
  po.base_url = (*server)->base_url();
  po.api_key = "sk-test";
  auto provider = llm::CreateProvider(po, env);
  ASSERT_TRUE(provider.ok()) << provider.status();

  // Process A starts the run and dies before its first checkpoint is durable.
  CrashingStore crashing(h.store, /*crash_at=*/1, CrashPoint::kBeforeSave);
  {
    auto a = agent::Agent::Create(Harness::Spec(), h.Options(**provider, "A", &crashing));
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_THAT((*a)->Send("say done", {.run_id = "r1"}), StatusIs(StatusCode::kInternal));
  }
  h.MarkDead("A");
  ASSERT_EQ(h.store.GetRun("r1")->status, store::RunStatus::kRunning);

  // The provider is down three times, then answers.
  for (int i = 0; i < 3; ++i) (*server)->Enqueue(HttpStatus(503));
  FakeResponse done;
  done.text = "done";
  (*server)->Enqueue(done);

  auto b = agent::Agent::Create(Harness::Spec(), h.Options(**provider, "B"));
  ASSERT_TRUE(b.ok()) << b.status();
  AgentDriver driver(**b);
  std::vector<bool> outages;
  std::vector<std::string> recovered;
  RecoveryOptions options;
  options.store = &h.store;
  options.driver = &driver;
  options.clock = &h.clock;
  options.events = &h.bus;
  options.on_outage = [&](const OutageChange& change) { outages.push_back(change.in_outage); };
  options.on_recovered = [&](const std::string& id) { recovered.push_back(id); };
  auto recovery = Recovery::Create(options);
  ASSERT_TRUE(recovery.ok()) << recovery.status();

  // Two failures are charged to the run with backoff; the third reveals an outage.
  auto first = (*recovery)->Tick();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(first->failed, ElementsAre("r1"));
  store::RunRecord r1 = *h.store.GetRun("r1");
  EXPECT_EQ(r1.status, store::RunStatus::kFailed);
  ASSERT_TRUE(r1.last_error.has_value());
  EXPECT_EQ(r1.last_error->code, "UNAVAILABLE");
  EXPECT_EQ(r1.attempts, 1);
  h.clock.Advance(seconds(30));
  EXPECT_THAT((*recovery)->Tick()->failed, ElementsAre("r1"));
  EXPECT_EQ(h.store.GetRun("r1")->attempts, 2);
  h.clock.Advance(seconds(60));
  auto third = (*recovery)->Tick();
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->outage);
  EXPECT_THAT(outages, ElementsAre(true));
  EXPECT_EQ(h.store.GetRun("r1")->attempts, 2);

  // The probe after one interval finds the provider back and the run completes.
  h.clock.Advance(seconds(30));
  auto probe = (*recovery)->Tick();
  ASSERT_TRUE(probe.ok());
  EXPECT_THAT(probe->completed, ElementsAre("r1"));
  EXPECT_FALSE(probe->outage);
  EXPECT_THAT(outages, ElementsAre(true, false));
  EXPECT_THAT(recovered, ElementsAre("r1"));
  r1 = *h.store.GetRun("r1");
  EXPECT_EQ(r1.status, store::RunStatus::kCompleted);
  EXPECT_EQ(r1.attempts, 2);  // kept as a record of the charged failures
  EXPECT_EQ((*server)->request_count(), 4u);
  EXPECT_THAT((*recovery)->Tick()->resumed, IsEmpty());
}

}  // namespace
}  // namespace mend::heal
