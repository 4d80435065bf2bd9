// ListRunsByPrefix and SpansOfRun: mend proxy's conversations read back as sessions.
#include <gmock/gmock.h>

#include "mend/obs/span_store.h"
#include "tests/obs/span_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Field;
using testing::MakeSpan;

// A proxied call of conversation run `run` in its own trace, as mend proxy writes it.
SpanData Call(int trace, std::string run, int64_t start, std::string agent = "") {
  SpanData s = MakeSpan(trace, 1, 0, "chat m", std::move(run), start, start + 1);
  s.attributes = {{"gen_ai.operation.name", std::string("chat")},
                  {"gen_ai.request.model", std::string("m")},
                  {"mend.cost_usd", 0.25}};
  if (!agent.empty()) s.attributes.push_back({"mend.agent", std::move(agent)});
  return s;
}

class SpanStoreSessionsTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto store = SpanStore::Open(dir_ + "/observe.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  std::unique_ptr<SpanStore> store_;
};

TEST_F(SpanStoreSessionsTest, ConversationsByLatestCallWithTheirAgent) {
  MEND_ASSERT_OK(store_->Write({Call(1, "proxy-a", 10, "support")}));
  MEND_ASSERT_OK(store_->Write({Call(2, "proxy-b", 20)}));
  MEND_ASSERT_OK(store_->Write({Call(3, "proxy-a", 30, "support")}));
  MEND_ASSERT_OK(store_->Write({Call(4, "run-1", 40)}));
  Result<std::vector<RunTraceSummary>> runs = store_->ListRunsByPrefix("proxy-", 10);
  MEND_ASSERT_OK(runs.status());
  ASSERT_THAT(*runs, ElementsAre(Field(&RunTraceSummary::run_id, "proxy-a"),
                                 Field(&RunTraceSummary::run_id, "proxy-b")));
  EXPECT_EQ((*runs)[0].agent, "support");
  EXPECT_EQ((*runs)[0].model_turns, 2);
  EXPECT_DOUBLE_EQ((*runs)[0].cost_usd, 0.5);
  EXPECT_EQ((*runs)[1].agent, "");
  EXPECT_THAT(store_->ListRunsByPrefix("proxy-", 1), ::mend::testing::IsOk());
  EXPECT_EQ(store_->ListRunsByPrefix("proxy-", 1)->size(), 1u);
  EXPECT_THAT(store_->ListRunsByPrefix("proxy-", 0), StatusIs(StatusCode::kInvalidArgument));
}

TEST_F(SpanStoreSessionsTest, SpansOfARunAcrossTracesInOrder) {
  MEND_ASSERT_OK(store_->Write({Call(3, "proxy-a", 30), Call(1, "proxy-a", 10)}));
  MEND_ASSERT_OK(store_->Write({Call(2, "proxy-b", 20)}));
  Result<std::vector<SpanData>> spans = store_->SpansOfRun("proxy-a");
  MEND_ASSERT_OK(spans.status());
  ASSERT_EQ(spans->size(), 2u);
  EXPECT_EQ((*spans)[0].start, testing::At(10));
  EXPECT_EQ((*spans)[1].start, testing::At(30));
  EXPECT_NE((*spans)[0].context.trace_id, (*spans)[1].context.trace_id);
  EXPECT_TRUE(store_->SpansOfRun("proxy-none")->empty());
}

}  // namespace
}  // namespace mend::obs
