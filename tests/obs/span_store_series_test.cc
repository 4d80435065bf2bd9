// SpanStore::Series: runs and model calls added up per key and bucket by the database.
#include <gmock/gmock.h>

#include "mend/obs/span_store.h"
#include "tests/obs/span_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::StatusIs;
using testing::At;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using testing::MakeSpan;

SpanData Attempt(int trace, int id, std::string run, std::string agent, int64_t start, int64_t end,
                 std::string status) {
  SpanData s = MakeSpan(trace, id, 0, "invoke_agent " + agent, std::move(run), start, end);
  s.attributes = {{"gen_ai.operation.name", std::string("invoke_agent")},
                  {"gen_ai.agent.name", std::move(agent)},
                  {"mend.run.status", std::move(status)}};
  return s;
}

SpanData Chat(int trace, int id, int parent, std::string run, std::string model, int64_t start,
              int64_t end, double cost) {
  SpanData s = MakeSpan(trace, id, parent, "chat " + model, std::move(run), start, end);
  s.attributes = {{"gen_ai.operation.name", std::string("chat")},
                  {"gen_ai.request.model", std::move(model)},
                  {"gen_ai.usage.input_tokens", int64_t{100}},
                  {"gen_ai.usage.output_tokens", int64_t{10}},
                  {"mend.cost_usd", cost}};
  return s;
}

class SpanStoreSeriesTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto store = SpanStore::Open(dir_ + "/observe.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    // Two runs of "writer" in the first hour (one failed), one of "helper" in the second, and one
    // of "writer" after the range.
    MEND_ASSERT_OK(store_->Write({Chat(1, 2, 1, "r1", "m-a", 10, 12, 0.5),
                                  Chat(1, 3, 1, "r1", "m-b", 20, 21, 0.25),
                                  Attempt(1, 1, "r1", "writer", 0, 40, "completed")}));
    MEND_ASSERT_OK(store_->Write({Chat(2, 2, 1, "r2", "m-a", 100, 104, 0.5),
                                  Attempt(2, 1, "r2", "writer", 100, 120, "failed")}));
    SpanData failed_call = Chat(3, 2, 1, "r3", "m-a", 3601, 3602, 0);
    failed_call.status = SpanStatus::kError;
    MEND_ASSERT_OK(
        store_->Write({failed_call, Attempt(3, 1, "r3", "helper", 3600, 3610, "completed")}));
    MEND_ASSERT_OK(store_->Write({Attempt(4, 1, "r4", "writer", 7300, 7301, "completed")}));
  }

  SeriesQuery Query(SeriesBy by) { return SeriesQuery{At(0), At(7200), std::chrono::hours(1), by}; }

  std::unique_ptr<SpanStore> store_;
};

TEST_F(SpanStoreSeriesTest, RunsAddUpPerAgentAndBucket) {
  Result<std::vector<SeriesPoint>> points = store_->Series(Query(SeriesBy::kAgent));
  MEND_ASSERT_OK(points.status());
  ASSERT_EQ(points->size(), 2u);
  const SeriesPoint& helper = (*points)[0];
  EXPECT_EQ(helper.key, "helper");
  EXPECT_EQ(helper.bucket, 1);
  EXPECT_EQ(helper.count, 1);
  EXPECT_EQ(helper.failed, 0);
  EXPECT_DOUBLE_EQ(helper.mean_ms, 10'000);
  const SeriesPoint& writer = (*points)[1];
  EXPECT_EQ(writer.key, "writer");
  EXPECT_EQ(writer.bucket, 0);
  EXPECT_EQ(writer.count, 2);
  EXPECT_EQ(writer.failed, 1);
  EXPECT_DOUBLE_EQ(writer.cost_usd, 1.25);
  EXPECT_EQ(writer.input_tokens, 300);
  EXPECT_EQ(writer.output_tokens, 30);
  EXPECT_DOUBLE_EQ(writer.mean_ms, 30'000);  // 40 s and 20 s
  EXPECT_DOUBLE_EQ(writer.max_ms, 40'000);
}

TEST_F(SpanStoreSeriesTest, ModelCallsAddUpPerModelAndBucket) {
  Result<std::vector<SeriesPoint>> points = store_->Series(Query(SeriesBy::kModel));
  MEND_ASSERT_OK(points.status());
  EXPECT_THAT(*points, ElementsAre(Field(&SeriesPoint::key, "m-a"), Field(&SeriesPoint::key, "m-a"),
                                   Field(&SeriesPoint::key, "m-b")));
  const SeriesPoint& first = (*points)[0];
  EXPECT_EQ(first.bucket, 0);
  EXPECT_EQ(first.count, 2);
  EXPECT_EQ(first.failed, 0);
  EXPECT_DOUBLE_EQ(first.cost_usd, 1.0);
  EXPECT_EQ(first.input_tokens, 200);
  EXPECT_DOUBLE_EQ(first.mean_ms, 3'000);  // 2 s and 4 s
  EXPECT_DOUBLE_EQ(first.max_ms, 4'000);
  EXPECT_EQ((*points)[1].bucket, 1);
  EXPECT_EQ((*points)[1].failed, 1);
  EXPECT_EQ((*points)[2].count, 1);
  EXPECT_DOUBLE_EQ((*points)[2].cost_usd, 0.25);
}

TEST_F(SpanStoreSeriesTest, ResponseModelWinsOverTheRequestedOne) {
  SpanData call = Chat(5, 2, 1, "r5", "alias", 50, 51, 0);
  call.attributes.push_back({"gen_ai.response.model", std::string("m-c-2025")});
  MEND_ASSERT_OK(store_->Write({call}));
  Result<std::vector<SeriesPoint>> points = store_->Series(Query(SeriesBy::kModel));
  MEND_ASSERT_OK(points.status());
  EXPECT_THAT(*points, ::testing::Contains(Field(&SeriesPoint::key, "m-c-2025")));
  EXPECT_THAT(*points, ::testing::Not(::testing::Contains(Field(&SeriesPoint::key, "alias"))));
}

TEST_F(SpanStoreSeriesTest, ProxyConversationsAreModelCallsButNoRuns) {
  MEND_ASSERT_OK(store_->Write({Chat(6, 1, 0, "proxy-c1", "m-p", 30, 31, 0.5)}));
  Result<std::vector<SeriesPoint>> agents = store_->Series(Query(SeriesBy::kAgent));
  MEND_ASSERT_OK(agents.status());
  EXPECT_THAT(*agents,
              ElementsAre(Field(&SeriesPoint::key, "helper"), Field(&SeriesPoint::key, "writer")));
  Result<std::vector<SeriesPoint>> models = store_->Series(Query(SeriesBy::kModel));
  MEND_ASSERT_OK(models.status());
  EXPECT_THAT(*models, ::testing::Contains(Field(&SeriesPoint::key, "m-p")));
}

TEST_F(SpanStoreSeriesTest, NothingInRangeIsEmpty) {
  SeriesQuery q{At(-7200), At(-3600), std::chrono::minutes(5), SeriesBy::kAgent};
  Result<std::vector<SeriesPoint>> points = store_->Series(q);
  MEND_ASSERT_OK(points.status());
  EXPECT_THAT(*points, IsEmpty());
}

TEST_F(SpanStoreSeriesTest, BadRangesAreRefused) {
  EXPECT_THAT(store_->Series({At(10), At(10), std::chrono::hours(1), SeriesBy::kAgent}),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->Series({At(0), At(10), Duration::zero(), SeriesBy::kAgent}),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->Series({At(0), At(1001), std::chrono::seconds(1), SeriesBy::kModel}),
              StatusIs(StatusCode::kInvalidArgument));
  MEND_EXPECT_OK(store_->Series({At(0), At(1000), std::chrono::seconds(1), SeriesBy::kModel}));
}

}  // namespace
}  // namespace mend::obs
