// ListTraces' filters: each one narrows the list, they combine, and paging and counts follow the
// filtered list.
#include "mend/obs/span_store.h"
#include "tests/obs/span_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOk;
using testing::At;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakeSpan;

std::string TraceId(int n) {
  const std::string digits = std::to_string(n);
  return std::string(32 - digits.size(), '0') + digits;
}

// Trace 1: agent "writer" of service "mend" (a run), model gpt-small, ok, started at 10.
// Trace 2: agent "writer", model big-model, a tool error "Permission denied", started at 20.
// Trace 3: service "shop", an error with an exception event "card Declined", started at 30.
// Trace 4: service "shop", ok, started at 40.
std::vector<SpanData> Fixture() {
  SpanData run1 = MakeSpan(1, 1, 0, "invoke_agent writer", "r-1", 10, 15);
  run1.attributes = {{"gen_ai.agent.name", std::string("writer")}};
  SpanData chat1 = MakeSpan(1, 2, 1, "chat gpt-small", "r-1", 11, 12);
  chat1.attributes = {{"gen_ai.request.model", std::string("gpt-small")}};
  SpanData run2 = MakeSpan(2, 1, 0, "invoke_agent writer", "r-2", 20, 25);
  run2.attributes = {{"gen_ai.agent.name", std::string("writer")}};
  SpanData chat2 = MakeSpan(2, 2, 1, "chat big", "r-2", 21, 22);
  chat2.attributes = {{"gen_ai.response.model", std::string("big-model")}};
  SpanData tool2 = MakeSpan(2, 3, 1, "execute_tool write", "r-2", 22, 23);
  tool2.status = SpanStatus::kError;
  tool2.status_message = "Permission denied";
  tool2.attributes = {{"error.type", std::string("tool_error")}};
  SpanData shop3 = MakeSpan(3, 1, 0, "checkout", "", 30, 31);
  shop3.attributes = {{"service.name", std::string("shop")}};
  SpanData charge3 = MakeSpan(3, 2, 1, "charge", "", 30, 31);
  charge3.attributes = shop3.attributes;
  charge3.status = SpanStatus::kError;
  charge3.events.push_back(
      {"exception", At(30), {{"exception.message", std::string("card Declined")}}});
  SpanData shop4 = MakeSpan(4, 1, 0, "checkout", "", 40, 41);
  shop4.attributes = shop3.attributes;
  return {run1, chat1, run2, chat2, tool2, shop3, charge3, shop4};
}

class SpanStoreFilterTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto store = SpanStore::Open(dir_ + "/observe.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    MEND_ASSERT_OK(store_->Write(Fixture()));
  }

  // The ids of the traces `query` lists (one page of up to 100); without a cursor, checks that the
  // total counts them.
  std::vector<int> List(TraceQuery query) {
    query.limit = 100;
    Result<TracePage> page = store_->ListTraces(query);
    EXPECT_THAT(page, IsOk());
    if (!page.ok()) return {};
    std::vector<int> ids;
    for (const TraceSummary& t : page->traces) ids.push_back(std::stoi(t.trace_id));
    if (!query.before) {
      EXPECT_EQ(page->total, static_cast<int64_t>(ids.size()));
    }
    return ids;
  }

  std::unique_ptr<SpanStore> store_;
};

TEST_F(SpanStoreFilterTest, NoFilterListsEverything) {
  EXPECT_THAT(List({}), ElementsAre(4, 3, 2, 1));
}

TEST_F(SpanStoreFilterTest, EachFilterNarrowsTheList) {
  EXPECT_THAT(List({.agent = "writer"}), ElementsAre(2, 1));
  EXPECT_THAT(List({.agent = "writ"}), IsEmpty());
  EXPECT_THAT(List({.service = "shop"}), ElementsAre(4, 3));
  EXPECT_THAT(List({.service = "mend"}), ElementsAre(2, 1));
  EXPECT_THAT(List({.outcome = TraceOutcome::kError}), ElementsAre(3, 2));
  EXPECT_THAT(List({.outcome = TraceOutcome::kOk}), ElementsAre(4, 1));
  EXPECT_THAT(List({.model = "gpt-small"}), ElementsAre(1));
  EXPECT_THAT(List({.model = "big-model"}), ElementsAre(2));
  EXPECT_THAT(List({.from = At(20)}), ElementsAre(4, 3, 2));
  EXPECT_THAT(List({.to = At(30)}), ElementsAre(2, 1));
  EXPECT_THAT(List({.from = At(15), .to = At(35)}), ElementsAre(3, 2));
}

TEST_F(SpanStoreFilterTest, ErrorTextMatchesMessagesTypesAndExceptionsInAnyCase) {
  EXPECT_THAT(List({.error_text = "permission DENIED"}), ElementsAre(2));
  EXPECT_THAT(List({.error_text = "tool_err"}), ElementsAre(2));
  EXPECT_THAT(List({.error_text = "declined"}), ElementsAre(3));
  EXPECT_THAT(List({.error_text = "d"}), ElementsAre(3, 2));
  // The text of a span that did not fail does not count, nor do attribute keys.
  EXPECT_THAT(List({.error_text = "gpt-small"}), IsEmpty());
  EXPECT_THAT(List({.error_text = "exception"}), IsEmpty());
}

TEST_F(SpanStoreFilterTest, FiltersCombine) {
  EXPECT_THAT(List({.agent = "writer", .outcome = TraceOutcome::kError}), ElementsAre(2));
  EXPECT_THAT(List({.service = "shop", .outcome = TraceOutcome::kOk}), ElementsAre(4));
  EXPECT_THAT(List({.service = "shop", .error_text = "permission"}), IsEmpty());
  EXPECT_THAT(List({.agent = "writer", .from = At(20)}), ElementsAre(2));
}

TEST_F(SpanStoreFilterTest, PagesAndCountsFollowTheFilters) {
  TraceQuery query{.limit = 1, .service = "shop"};
  std::vector<std::string> seen;
  for (int i = 0; i < 3; ++i) {
    Result<TracePage> page = store_->ListTraces(query);
    ASSERT_THAT(page, IsOk());
    EXPECT_EQ(page->total, 2);
    for (const TraceSummary& t : page->traces) seen.push_back(t.trace_id);
    EXPECT_EQ(page->more, 2 - static_cast<int64_t>(seen.size()));
    if (!page->next) break;
    query.before = page->next;
  }
  EXPECT_THAT(seen, ElementsAre(TraceId(4), TraceId(3)));
  // A cursor past `to` is bounded by it, and `to` past the cursor by the cursor.
  TraceQuery bounded{.before = TraceCursor{At(40), TraceId(4)}, .to = At(25)};
  EXPECT_THAT(List(bounded), ElementsAre(2, 1));
  TraceQuery cursor_first{.before = TraceCursor{At(20), TraceId(2)}, .to = At(35)};
  EXPECT_THAT(List(cursor_first), ElementsAre(1));
}

}  // namespace
}  // namespace mend::obs
