#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/message_codec.h"
#include "tests/agent/agent_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::agent::testing {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

// Three tool calls over two model turns, then the answer. Saves: 1 start, 2 turn 0, 3 and 4 the
// two results, 5 turn 1, 6 its result, 7 the final answer.
constexpr int kSaves = 7;

std::vector<Result<llm::Completion>> ThreeCallScript() {
  return {Calls({Call("c1", "touch", R"({"f":"a"})"), Call("c2", "touch", R"({"f":"b"})")}),
          Calls({Call("c3", "touch", R"({"f":"c"})")}), Answer("all three done")};
}

// Which model turn (0, 1, 2) checkpoint `save` records, or -1 for other saves.
// The crash and lease tests run on the in-memory fake and on the SQLite store (a fresh file per
// test), so every crash point is proven against the real store too.
class AgentResumeTest : public ::testing::TestWithParam<StoreKind> {};

INSTANTIATE_TEST_SUITE_P(Stores, AgentResumeTest,
                         ::testing::Values(StoreKind::kFake, StoreKind::kSqlite), StoreKindName);

int TurnOfSave(int save) { return save == 2 ? 0 : save == 5 ? 1 : save == 7 ? 2 : -1; }
// Which tool call checkpoint `save` records, or "".
std::string CallOfSave(int save) {
  return save == 3 ? "c1" : save == 4 ? "c2" : save == 6 ? "c3" : "";
}

void CrashAndResume(StoreKind kind, int crash_at, CrashPoint point) {
  SCOPED_TRACE("crash at save " + std::to_string(crash_at) +
               (point == CrashPoint::kBeforeSave ? " before" : " after") + " it is durable");
  Harness h(kind);
  TurnProvider model(ThreeCallScript());
  CrashingStore crashing(h.store, crash_at, point);
  {
    AgentOptions options = h.Options(model, "A", &crashing);
    options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
    auto agent = Agent::Create(Harness::Spec(), options);
    ASSERT_TRUE(agent.ok());
    EXPECT_THAT((*agent)->Send("touch a, b, c", {.run_id = "r1"}), StatusIs(StatusCode::kInternal));
    ASSERT_TRUE(crashing.crashed());
  }
  h.MarkDead("A");  // the process is gone; its lease does not block a claim

  AgentOptions options = h.Options(model, "B");
  options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
  auto agent = Agent::Create(Harness::Spec(), options);
  ASSERT_TRUE(agent.ok());
  Result<RunResult> resumed = (*agent)->Resume("r1");
  if (crash_at == kSaves && point == CrashPoint::kAfterSave) {
    // The final answer was durable: nothing is left to do.
    EXPECT_THAT(resumed, StatusIs(StatusCode::kFailedPrecondition, HasSubstr("completed")));
  } else {
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->status, store::RunStatus::kCompleted);
    EXPECT_EQ(resumed->output, "all three done");
    EXPECT_EQ(resumed->steps, 3);
  }

  // Every model turn was asked once, except a turn whose checkpoint never reached the store.
  for (int turn = 0; turn < 3; ++turn) {
    bool lost = point == CrashPoint::kBeforeSave && TurnOfSave(crash_at) == turn;
    EXPECT_EQ(model.asked(turn), lost ? 2 : 1) << "turn " << turn;
  }
  // Every tool ran once, except the one in flight at the crash: again, with the same call id.
  for (std::string id : {"c1", "c2", "c3"}) {
    bool in_flight = point == CrashPoint::kBeforeSave && CallOfSave(crash_at) == id;
    EXPECT_EQ(h.log->Count(id), in_flight ? 2 : 1) << id;
  }

  // The durable conversation has each turn and each result exactly once.
  auto snapshot = h.store.Load("r1", std::nullopt);
  ASSERT_TRUE(snapshot.ok());
  int assistants = 0, results = 0;
  for (const std::string& text : snapshot->messages) {
    auto m = DecodeMessage(text, "r1");
    ASSERT_TRUE(m.ok());
    assistants += m->role == llm::Role::kAssistant;
    results += m->role == llm::Role::kTool;
  }
  EXPECT_EQ(assistants, 3);
  EXPECT_EQ(results, 3);
  EXPECT_EQ(snapshot->run.status, store::RunStatus::kCompleted);
}

TEST_P(AgentResumeTest, UncrashedRunSavesSevenCheckpoints) {
  Harness h(GetParam());
  TurnProvider model(ThreeCallScript());
  CrashingStore counting(h.store, /*crash_at=*/1000, CrashPoint::kBeforeSave);
  AgentOptions options = h.Options(model, "A", &counting);
  options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
  auto agent = Agent::Create(Harness::Spec(), options);
  ASSERT_TRUE(agent.ok());
  auto result = (*agent)->Send("touch a, b, c", {.run_id = "r1"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->output, "all three done");
  EXPECT_EQ(counting.saves(), kSaves);
}

TEST_P(AgentResumeTest, CrashBeforeEverySaveResumesWithoutRepeatingDurableWork) {
  for (int n = 1; n <= kSaves; ++n) CrashAndResume(GetParam(), n, CrashPoint::kBeforeSave);
}

TEST_P(AgentResumeTest, CrashAfterEverySaveResumesWithoutRepeatingDurableWork) {
  for (int n = 1; n <= kSaves; ++n) CrashAndResume(GetParam(), n, CrashPoint::kAfterSave);
}

TEST_P(AgentResumeTest, ResumeOfCompletedRunIsFailedPrecondition) {
  Harness h(GetParam());
  TurnProvider model({Answer("done")});
  auto agent = Agent::Create(Harness::Spec(), h.Options(model));
  ASSERT_TRUE(agent.ok());
  ASSERT_TRUE((*agent)->Send("hi", {.run_id = "r1"}).ok());
  EXPECT_THAT((*agent)->Resume("r1"), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT((*agent)->Resume("nope"), StatusIs(StatusCode::kNotFound));
}

TEST_P(AgentResumeTest, RunLeasedByLiveHolderCannotBeResumed) {
  Harness h(GetParam());
  TurnProvider model(ThreeCallScript());
  CrashingStore crashing(h.store, 3, CrashPoint::kBeforeSave);
  AgentOptions first = h.Options(model, "A", &crashing);
  first.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
  auto a = Agent::Create(Harness::Spec(), first);
  ASSERT_TRUE(a.ok());
  EXPECT_THAT((*a)->Send("t", {.run_id = "r1"}), StatusIs(StatusCode::kInternal));

  // Holder A is alive (only its store connection failed) and its lease has not expired.
  auto b = Agent::Create(Harness::Spec(), h.Options(model, "B"));
  ASSERT_TRUE(b.ok());
  EXPECT_THAT((*b)->Resume("r1"), StatusIs(StatusCode::kUnavailable));
  EXPECT_EQ(model.asked(1), 0);

  // The lease expires: A took it for the tool's run (lease_ttl + the default tool timeout).
  h.clock.Advance(AgentOptions{}.lease_ttl + ToolContext{}.timeout + std::chrono::seconds(1));
  AgentOptions second = h.Options(model, "B");
  second.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
  auto c = Agent::Create(Harness::Spec(), second);
  ASSERT_TRUE(c.ok());
  auto resumed = (*c)->Resume("r1");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->output, "all three done");
}

TEST_P(AgentResumeTest, StaleLeaseStopsTheLoopWithAborted) {
  Harness h(GetParam());
  TurnProvider model(ThreeCallScript());
  auto tool = std::make_shared<RecordingTool>("touch", h.log);
  // While the first tool runs, holder A is presumed dead and B claims the run.
  tool->on_call = [&] {
    if (h.log->size() != 1) return;
    h.MarkDead("A");
    ASSERT_TRUE(h.store.Claim("r1", store::LeaseHolder{.id = "B"}, std::chrono::seconds(30)).ok());
  };
  AgentOptions options = h.Options(model, "A");
  options.extra_tools = {tool};
  auto agent = Agent::Create(Harness::Spec(), options);
  ASSERT_TRUE(agent.ok());
  EXPECT_THAT((*agent)->Send("t", {.run_id = "r1"}), StatusIs(StatusCode::kAborted));
  EXPECT_EQ(h.log->size(), 1u);  // the loop stopped: no second tool
  EXPECT_EQ(model.asked(1), 0);  // and no further model turn
  auto record = h.store.GetRun("r1");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->step, 2);  // the stale result was not written
  EXPECT_EQ(record->lease_holder->id, "B");
}

TEST(AgentCorruptRowTest, CorruptRowFailsOnlyThatRun) {
  Harness h;
  TurnProvider model(ThreeCallScript());
  for (const char* id : {"bad", "good"}) {
    CrashingStore crashing(h.store, 3, CrashPoint::kBeforeSave);
    AgentOptions options = h.Options(model, "A", &crashing);
    options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
    auto agent = Agent::Create(Harness::Spec(), options);
    ASSERT_TRUE(agent.ok());
    EXPECT_THAT((*agent)->Send("t", {.run_id = id}), StatusIs(StatusCode::kInternal));
  }
  h.MarkDead("A");
  h.fake->CorruptMessage("bad", 2, "{\"role\":\"assistant\",\"tool_calls\":7");

  AgentOptions options = h.Options(model, "B");
  options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
  auto agent = Agent::Create(Harness::Spec(), options);
  ASSERT_TRUE(agent.ok());
  EXPECT_THAT((*agent)->Resume("bad"), StatusIs(StatusCode::kDataLoss, HasSubstr("run bad")));
  auto bad = h.store.GetRun("bad");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, store::RunStatus::kFailed);
  ASSERT_TRUE(bad->last_error.has_value());
  EXPECT_EQ(bad->last_error->code, "DATA_LOSS");
  EXPECT_FALSE(bad->last_error->retryable);

  auto good = (*agent)->Resume("good");
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->output, "all three done");
}

TEST(AgentCorruptRowTest, CorruptStateIsDataLoss) {
  Harness h;
  TurnProvider model({Calls({Call("c1", "touch", "{}")}), Answer("ok")});
  CrashingStore crashing(h.store, 3, CrashPoint::kBeforeSave);
  AgentOptions options = h.Options(model, "A", &crashing);
  options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
  auto agent = Agent::Create(Harness::Spec(), options);
  ASSERT_TRUE(agent.ok());
  EXPECT_THAT((*agent)->Send("t", {.run_id = "r1"}), StatusIs(StatusCode::kInternal));
  h.MarkDead("A");
  h.fake->CorruptState("r1", "not json");
  auto again = Agent::Create(Harness::Spec(), h.Options(model, "B"));
  ASSERT_TRUE(again.ok());
  EXPECT_THAT((*again)->Resume("r1"), StatusIs(StatusCode::kDataLoss, HasSubstr("run r1")));
}

TEST_P(AgentResumeTest, ForkCreatesNumberedRunsThatResumeFromTheirStep) {
  Harness h(GetParam());
  TurnProvider model(ThreeCallScript());
  AgentOptions options = h.Options(model);
  options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
  auto agent = Agent::Create(Harness::Spec(), options);
  ASSERT_TRUE(agent.ok());
  ASSERT_TRUE((*agent)->Send("t", {.run_id = "r1"}).ok());

  auto fork1 = (*agent)->Fork("r1", 4);  // after c1 and c2, before turn 1
  ASSERT_TRUE(fork1.ok()) << fork1.status();
  EXPECT_EQ(*fork1, "r1.fork-1");
  auto fork2 = (*agent)->Fork("r1");
  ASSERT_TRUE(fork2.ok());
  EXPECT_EQ(*fork2, "r1.fork-2");
  EXPECT_THAT((*agent)->Fork("r1", 99), StatusIs(StatusCode::kNotFound));

  auto resumed = (*agent)->Resume("r1.fork-1");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->output, "all three done");
  EXPECT_EQ(h.log->Count("c3"), 2);  // the fork re-ran the steps after its checkpoint
  EXPECT_EQ(h.log->Count("c1"), 1);  // but not those before it
}

TEST_P(AgentResumeTest, ForkWithNoteAppendsTheNoteAndLeavesTheForkToResume) {
  Harness h(GetParam());
  TurnProvider down({Result<llm::Completion>(UnavailableError("down"))});
  TurnProvider model({Answer("fixed")});
  auto failing = Agent::Create(Harness::Spec(), h.Options(down));
  ASSERT_TRUE(failing.ok());
  ASSERT_TRUE((*failing)->Send("do it", {.run_id = "r1"}).ok());
  auto agent = Agent::Create(Harness::Spec(), h.Options(model));
  ASSERT_TRUE(agent.ok());
  auto fork = (*agent)->ForkWithNote("r1", "r1.heal", "NOTE: the last attempt failed");
  ASSERT_TRUE(fork.ok()) << fork.status();
  EXPECT_EQ(*fork, "r1.heal");
  EXPECT_THAT((*agent)->ForkWithNote("r1", "r1.heal", "again"),
              StatusIs(StatusCode::kAlreadyExists));
  auto record = h.store.GetRun("r1.heal");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->status, store::RunStatus::kRunning);
  EXPECT_FALSE(record->lease_holder.has_value());
  auto resumed = (*agent)->Resume("r1.heal");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->output, "fixed");
  ASSERT_FALSE(model.requests().empty());
  const llm::CompletionRequest last = model.requests().back();
  ASSERT_GE(last.messages.size(), 3u);
  EXPECT_EQ(last.messages.back().role, llm::Role::kUser);
  EXPECT_EQ(last.messages.back().content, "NOTE: the last attempt failed");
  EXPECT_EQ(last.messages[last.messages.size() - 2].content, "do it");
}

TEST_P(AgentResumeTest, PendingListsUnfinishedRuns) {
  Harness h(GetParam());
  TurnProvider done({Answer("ok")});
  TurnProvider broken({Result<llm::Completion>(UnavailableError("down"))});
  auto a = Agent::Create(Harness::Spec(), h.Options(done));
  auto b = Agent::Create(Harness::Spec(), h.Options(broken));
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->Send("x", {.run_id = "finished"}).ok());
  ASSERT_TRUE((*b)->Send("y", {.run_id = "failing"}).ok());
  auto pending = (*a)->Pending();
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].id, "failing");
  EXPECT_EQ((*pending)[0].status, store::RunStatus::kFailed);
}

}  // namespace
}  // namespace mend::agent::testing
