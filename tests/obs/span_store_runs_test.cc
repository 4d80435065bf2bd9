// ListRuns' per-run summaries, paging, replaced spans and DeleteEndedBefore.
#include <sqlite3.h>

#include "mend/obs/span_store.h"
#include "tests/obs/span_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using testing::At;
using testing::MakeSpan;

SpanData Attempt(int trace, int id, std::string run, int64_t start, int64_t end,
                 std::string status) {
  SpanData s = MakeSpan(trace, id, 0, "invoke_agent helper", std::move(run), start, end);
  s.attributes = {{"gen_ai.operation.name", std::string("invoke_agent")},
                  {"gen_ai.agent.name", std::string("helper")},
                  {"mend.run.status", std::move(status)}};
  return s;
}

SpanData Chat(int trace, int id, int parent, std::string run, int64_t t, double cost) {
  SpanData s = MakeSpan(trace, id, parent, "chat m", std::move(run), t, t + 1);
  s.attributes = {{"gen_ai.operation.name", std::string("chat")},
                  {"gen_ai.usage.input_tokens", int64_t{100}},
                  {"gen_ai.usage.output_tokens", int64_t{10}},
                  {"mend.cost_usd", cost}};
  return s;
}

SpanData Tool(int trace, int id, int parent, std::string run, int64_t t, SpanStatus status) {
  SpanData s = MakeSpan(trace, id, parent, "execute_tool shell", std::move(run), t, t + 1);
  s.attributes = {{"gen_ai.operation.name", std::string("execute_tool")}};
  s.status = status;
  return s;
}

class SpanStoreRunsTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto store = SpanStore::Open(dir_ + "/observe.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  std::unique_ptr<SpanStore> store_;
};

TEST_F(SpanStoreRunsTest, SummaryAddsUpSpansAcrossBatches) {
  // Two attempts: the first ends waiting, the second (later) completed.
  SpanData tool = Tool(1, 4, 1, "r1", 3, SpanStatus::kError);
  tool.events = {{"heal.action", At(3), {}}, {"other", At(3), {}}};
  MEND_ASSERT_OK(store_->Write({Chat(1, 2, 1, "r1", 1, 0.5), Chat(1, 3, 1, "r1", 2, 0.25), tool,
                                Attempt(1, 1, "r1", 0, 5, "waiting")}));
  MEND_ASSERT_OK(store_->Write(
      {Tool(1, 6, 5, "r1", 11, SpanStatus::kOk), Attempt(1, 5, "r1", 10, 20, "completed")}));
  Result<RunTraceSummary> s = store_->RunSummary("r1");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->trace_id, std::string(31, '0') + "1");
  EXPECT_EQ(s->agent, "helper");
  EXPECT_EQ(s->status, "completed");
  EXPECT_EQ(s->start, At(0));
  EXPECT_EQ(s->end, At(20));
  EXPECT_EQ(s->attempts, 2);
  EXPECT_EQ(s->model_turns, 2);
  EXPECT_EQ(s->tool_calls, 2);
  EXPECT_EQ(s->tool_errors, 1);
  EXPECT_EQ(s->heal_actions, 1);
  EXPECT_DOUBLE_EQ(s->cost_usd, 0.75);
  EXPECT_EQ(s->input_tokens, 200);
  EXPECT_EQ(s->output_tokens, 20);
}

TEST_F(SpanStoreRunsTest, StatusComesFromTheAttemptThatEndedLast) {
  MEND_ASSERT_OK(store_->Write({Attempt(1, 5, "r", 10, 20, "completed")}));
  MEND_ASSERT_OK(store_->Write({Attempt(1, 1, "r", 0, 5, "waiting")}));  // written late
  EXPECT_THAT(store_->RunSummary("r"),
              IsOkAndHolds(::testing::Field(&RunTraceSummary::status, "completed")));
}

TEST_F(SpanStoreRunsTest, ReplacedSpanIsNotCountedTwice) {
  MEND_ASSERT_OK(store_->Write({Chat(1, 2, 1, "r", 1, 0.5), Attempt(1, 1, "r", 0, 5, "failed")}));
  MEND_ASSERT_OK(store_->Write({Chat(1, 2, 1, "r", 1, 0.125)}));
  Result<RunTraceSummary> s = store_->RunSummary("r");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->model_turns, 1);
  EXPECT_DOUBLE_EQ(s->cost_usd, 0.125);
  EXPECT_EQ(s->attempts, 1);
  auto spans = store_->SpansOfTrace(s->trace_id);
  ASSERT_TRUE(spans.ok());
  EXPECT_EQ(spans->size(), 2u);
}

TEST_F(SpanStoreRunsTest, ListRunsPagesNewestFirst) {
  for (int i = 0; i < 5; ++i) {
    MEND_ASSERT_OK(store_->Write(
        {Attempt(i + 1, 1, "run-" + std::to_string(i), i * 10, i * 10 + 5, "completed")}));
  }
  Result<RunTracePage> first = store_->ListRuns({.limit = 2});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->runs.size(), 2u);
  EXPECT_EQ(first->runs[0].run_id, "run-4");
  EXPECT_EQ(first->runs[1].run_id, "run-3");
  ASSERT_TRUE(first->next.has_value());
  // The cursor survives its text form.
  Result<RunTraceCursor> cursor = ParseRunTraceCursor(FormatRunTraceCursor(*first->next));
  ASSERT_TRUE(cursor.ok());
  EXPECT_EQ(*cursor, *first->next);
  Result<RunTracePage> second = store_->ListRuns({.limit = 2, .before = *cursor});
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->runs.size(), 2u);
  EXPECT_EQ(second->runs[0].run_id, "run-2");
  Result<RunTracePage> last = store_->ListRuns({.limit = 2, .before = second->next});
  ASSERT_TRUE(last.ok());
  ASSERT_EQ(last->runs.size(), 1u);
  EXPECT_EQ(last->runs[0].run_id, "run-0");
  EXPECT_FALSE(last->next.has_value());
}

TEST_F(SpanStoreRunsTest, BadPageSizeAndCursorAreInvalid) {
  EXPECT_THAT(store_->ListRuns({.limit = 0}), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->ListRuns({.limit = kMaxRunTracePageSize + 1}),
              StatusIs(StatusCode::kInvalidArgument));
  for (const char* bad : {"", "12", ":run", "12:", "x1:run", "1x:run"}) {
    EXPECT_THAT(ParseRunTraceCursor(bad), StatusIs(StatusCode::kInvalidArgument)) << bad;
  }
}

TEST_F(SpanStoreRunsTest, DeleteEndedBeforeRemovesOldSpansAndKeepsSummariesRight) {
  MEND_ASSERT_OK(store_->Write({Chat(1, 2, 1, "old", 1, 0.5), Attempt(1, 1, "old", 0, 5, "ok")}));
  // A run with spans on both sides of the cutoff (100).
  MEND_ASSERT_OK(
      store_->Write({Chat(2, 2, 1, "across", 50, 0.5), Chat(2, 3, 1, "across", 150, 0.25),
                     Attempt(2, 1, "across", 40, 200, "completed")}));
  Result<SpanPruneResult> dry = store_->DeleteEndedBefore(At(100), SpanStore::Mode::kDryRun);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  EXPECT_EQ(dry->spans, 3);
  EXPECT_EQ(dry->runs, 1);
  EXPECT_GT(dry->bytes_reclaimed, 0);
  EXPECT_THAT(store_->ListRuns({}),
              IsOkAndHolds(::testing::Field(&RunTracePage::runs, ::testing::SizeIs(2))));

  Result<SpanPruneResult> done = store_->DeleteEndedBefore(At(100));
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->spans, 3);
  EXPECT_EQ(done->runs, 1);
  EXPECT_THAT(store_->RunSummary("old"), StatusIs(StatusCode::kNotFound));
  Result<RunTraceSummary> across = store_->RunSummary("across");
  ASSERT_TRUE(across.ok());
  EXPECT_EQ(across->model_turns, 1);
  EXPECT_DOUBLE_EQ(across->cost_usd, 0.25);
  EXPECT_EQ(across->start, At(40));
}

TEST_F(SpanStoreRunsTest, DeleteEndedBeforeSparesTheRunsToKeep) {
  MEND_ASSERT_OK(
      store_->Write({Chat(1, 2, 1, "done", 1, 0.5), Attempt(1, 1, "done", 0, 5, "ok"),
                     Chat(2, 2, 1, "waiting", 1, 0.5), Attempt(2, 1, "waiting", 0, 5, "waiting")}));
  Result<SpanPruneResult> dry =
      store_->DeleteEndedBefore(At(100), SpanStore::Mode::kDryRun, {"waiting"});
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  EXPECT_EQ(dry->spans, 2);
  EXPECT_EQ(dry->runs, 1);
  Result<SpanPruneResult> done =
      store_->DeleteEndedBefore(At(100), SpanStore::Mode::kDelete, {"waiting"});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->spans, 2);
  EXPECT_THAT(store_->RunSummary("done"), StatusIs(StatusCode::kNotFound));
  Result<RunTraceSummary> kept = store_->RunSummary("waiting");
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->model_turns, 1);
  // The list to keep is per call: the next prune without it removes the run.
  Result<SpanPruneResult> later = store_->DeleteEndedBefore(At(100));
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->spans, 2);
}

TEST_F(SpanStoreRunsTest, PruneReclaimsSpace) {
  std::vector<SpanData> batch;
  SpanData big = Attempt(1, 1, "big", 0, 1, "completed");
  big.attributes.push_back({"payload", std::string(4000, 'x')});
  for (int i = 1; i <= 500; ++i) {
    big.context.span_id = std::string(12, '0') + std::to_string(1000 + i);
    batch.push_back(big);
  }
  MEND_ASSERT_OK(store_->Write(batch));
  Result<SpanPruneResult> done = store_->DeleteEndedBefore(At(100));
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->spans, 500);
  EXPECT_GT(done->bytes_reclaimed, 500 * 4000);
}

TEST_F(SpanStoreRunsTest, DroppedSpansAccumulate) {
  EXPECT_THAT(store_->dropped_spans(), IsOkAndHolds(0));
  MEND_ASSERT_OK(store_->Write({}, 4));
  MEND_ASSERT_OK(store_->Write({Attempt(1, 1, "r", 0, 1, "ok")}, 3));
  EXPECT_THAT(store_->dropped_spans(), IsOkAndHolds(7));
}

TEST_F(SpanStoreRunsTest, CorruptAttributesAreDataLoss) {
  MEND_ASSERT_OK(store_->Write({Attempt(1, 1, "r", 0, 1, "ok")}));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ + "/observe.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "UPDATE spans SET attributes = '[{\"k\":1}]'", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  EXPECT_THAT(store_->SpansOfTrace(std::string(31, '0') + "1"), StatusIs(StatusCode::kDataLoss));
}

}  // namespace
}  // namespace mend::obs
