// The CheckpointStore conformance suite, part three: pages of unfinished runs, and of every run
// (ListPending).

#include <chrono>
#include <string>
#include <vector>

#include "tests/store/checkpoint_store_conformance.h"
#include "tests/support/status_matchers.h"

namespace mend::store::testing {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr RunStatus kRunning = RunStatus::kRunning;
constexpr RunStatus kWaiting = RunStatus::kWaiting;
constexpr RunStatus kFailed = RunStatus::kFailed;
constexpr RunStatus kQuarantined = RunStatus::kQuarantined;
constexpr RunStatus kCompleted = RunStatus::kCompleted;

// Creates run `id` of `agent` at the store clock's now and moves it to `status`.
void Make(CheckpointStore& store, const std::string& id, const std::string& agent,
          RunStatus status = kRunning) {
  RunRecord run;
  run.id = id;
  run.agent = agent;
  run.agent_dir = "agents/" + agent;
  run.task = "task " + id;
  MEND_ASSERT_OK(store.CreateRun(run));
  if (status == kRunning) return;
  RunUpdate update;
  update.status = status;
  MEND_ASSERT_OK(store.UpdateUnleased(id, update));
}

PendingQuery Query(size_t limit, std::vector<RunStatus> statuses = {}, std::string agent = "") {
  PendingQuery query;
  query.limit = limit;
  query.statuses = std::move(statuses);
  query.agent = std::move(agent);
  return query;
}

PendingPage MustPage(CheckpointStore& store, const PendingQuery& query) {
  Result<PendingPage> page = store.ListPending(query);
  EXPECT_THAT(page, IsOk());
  return page.ok() ? *std::move(page) : PendingPage{};
}

std::vector<std::string> Ids(const PendingPage& page) {
  std::vector<std::string> ids;
  for (const RunRecord& r : page.runs) ids.push_back(r.id);
  return ids;
}

// Follows `next` from `query` to the last page; the ids of every page, in order.
std::vector<std::vector<std::string>> AllPages(CheckpointStore& store, PendingQuery query) {
  std::vector<std::vector<std::string>> pages;
  for (int guard = 0; guard < 50; ++guard) {
    PendingPage page = MustPage(store, query);
    pages.push_back(Ids(page));
    if (!page.next.has_value()) break;
    query.before = page.next;
  }
  return pages;
}

TEST_P(CheckpointStoreConformanceTest, PendingPagesAreNewestFirstAndListEveryRunOnce) {
  // r1..r8, one second apart, except that r4, r5 and r6 share an instant (ordered by id, newest
  // first: r6, r5, r4). r3 completes, so it is never listed.
  for (int i = 1; i <= 8; ++i) {
    if (i != 5 && i != 6) clock_.Advance(seconds(1));
    Make(*store_, "r" + std::to_string(i), "a", i == 3 ? kCompleted : kRunning);
  }
  PendingPage first = MustPage(*store_, Query(3));
  EXPECT_THAT(Ids(first), ElementsAre("r8", "r7", "r6"));
  EXPECT_EQ(first.total, 7);
  EXPECT_EQ(first.more, 4);
  ASSERT_TRUE(first.next.has_value());
  EXPECT_EQ(first.next->id, "r6");
  EXPECT_EQ(first.next->created_at, first.runs.back().created_at);

  PendingQuery second_query = Query(3);
  second_query.before = first.next;
  PendingPage second = MustPage(*store_, second_query);
  EXPECT_THAT(Ids(second), ElementsAre("r5", "r4", "r2"));
  EXPECT_EQ(second.total, 7);
  EXPECT_EQ(second.more, 1);

  EXPECT_THAT(
      AllPages(*store_, Query(3)),
      ElementsAre(ElementsAre("r8", "r7", "r6"), ElementsAre("r5", "r4", "r2"), ElementsAre("r1")));
  // A page exactly as large as what is left says nothing more is left.
  PendingPage all = MustPage(*store_, Query(7));
  EXPECT_EQ(all.runs.size(), 7u);
  EXPECT_EQ(all.more, 0);
  EXPECT_FALSE(all.next.has_value());
}

TEST_P(CheckpointStoreConformanceTest, PendingPagesCarryTheRunRecord) {
  Make(*store_, "r1", "coder");
  RunUpdate failed;
  failed.status = kFailed;
  failed.attempts = 3;
  failed.next_attempt_at = clock_.Now() + seconds(60);
  failed.last_error = RunError{"UNAVAILABLE", "upstream 503", "transient", true};
  MEND_ASSERT_OK(store_->UpdateUnleased("r1", failed));
  PendingPage page = MustPage(*store_, Query(20));
  ASSERT_EQ(page.runs.size(), 1u);
  const RunRecord& run = page.runs[0];
  EXPECT_EQ(run.agent, "coder");
  EXPECT_EQ(run.agent_dir, "agents/coder");
  EXPECT_EQ(run.status, kFailed);
  EXPECT_EQ(run.attempts, 3);
  EXPECT_EQ(run.next_attempt_at, clock_.Now() + seconds(60));
  ASSERT_TRUE(run.last_error.has_value());
  EXPECT_EQ(run.last_error->message, "upstream 503");
  EXPECT_EQ(page.total, 1);
  EXPECT_EQ(page.more, 0);
  EXPECT_FALSE(page.next.has_value());
}

TEST_P(CheckpointStoreConformanceTest, PendingPagesStayStableWhileRunsAreAdded) {
  for (int i = 1; i <= 5; ++i) {
    clock_.Advance(seconds(1));
    Make(*store_, "old" + std::to_string(i), "a");
  }
  PendingPage first = MustPage(*store_, Query(2));
  EXPECT_THAT(Ids(first), ElementsAre("old5", "old4"));
  // New runs arrive between the pages, and one listed run finishes: neither shifts the next page.
  for (int i = 1; i <= 3; ++i) {
    clock_.Advance(seconds(1));
    Make(*store_, "new" + std::to_string(i), "a");
  }
  RunUpdate done;
  done.status = kCompleted;
  MEND_ASSERT_OK(store_->UpdateUnleased("old5", done));
  PendingQuery next = Query(2);
  next.before = first.next;
  PendingPage second = MustPage(*store_, next);
  EXPECT_THAT(Ids(second), ElementsAre("old3", "old2"));
  EXPECT_EQ(second.total, 7);  // old1..old4 and new1..new3
  EXPECT_EQ(second.more, 1);
  next.before = second.next;
  PendingPage third = MustPage(*store_, next);
  EXPECT_THAT(Ids(third), ElementsAre("old1"));
  EXPECT_EQ(third.more, 0);
  EXPECT_FALSE(third.next.has_value());
}

TEST_P(CheckpointStoreConformanceTest, PendingFiltersOnStatusAndAgent) {
  const std::vector<std::pair<std::string, RunStatus>> runs = {
      {"a1", kRunning}, {"b1", kFailed},      {"a2", kWaiting},   {"b2", kQuarantined},
      {"a3", kFailed},  {"b3", kCompleted},   {"a4", kFailed},    {"b4", kRunning},
      {"a5", kWaiting}, {"b5", kQuarantined}, {"a6", kCompleted}, {"b6", kFailed}};
  for (const auto& [id, status] : runs) {
    clock_.Advance(seconds(1));
    Make(*store_, id, id.substr(0, 1) == "a" ? "alpha" : "beta", status);
  }
  PendingPage failed = MustPage(*store_, Query(20, {kFailed}));
  EXPECT_THAT(Ids(failed), ElementsAre("b6", "a4", "a3", "b1"));
  EXPECT_EQ(failed.total, 4);

  PendingPage two = MustPage(*store_, Query(20, {kQuarantined, kWaiting, kQuarantined}));
  EXPECT_THAT(Ids(two), ElementsAre("b5", "a5", "b2", "a2"));
  EXPECT_EQ(two.total, 4);

  PendingPage alpha = MustPage(*store_, Query(20, {}, "alpha"));
  EXPECT_THAT(Ids(alpha), ElementsAre("a5", "a4", "a3", "a2", "a1"));
  EXPECT_EQ(alpha.total, 5);

  PendingPage beta_failed = MustPage(*store_, Query(20, {kFailed, kRunning}, "beta"));
  EXPECT_THAT(Ids(beta_failed), ElementsAre("b6", "b4", "b1"));

  EXPECT_THAT(Ids(MustPage(*store_, Query(20, {}, "gamma"))), IsEmpty());
  EXPECT_THAT(Ids(MustPage(*store_, Query(20, {}, "alph"))), IsEmpty());  // exact names only

  // Filtered pages follow the same cursor rules.
  EXPECT_THAT(
      AllPages(*store_, Query(2, {kFailed, kWaiting})),
      ElementsAre(ElementsAre("b6", "a5"), ElementsAre("a4", "a3"), ElementsAre("a2", "b1")));
  EXPECT_THAT(AllPages(*store_, Query(2, {}, "beta")),
              ElementsAre(ElementsAre("b6", "b5"), ElementsAre("b4", "b2"), ElementsAre("b1")));
  PendingQuery second = Query(2, {}, "beta");
  second.before = MustPage(*store_, second).next;
  PendingPage page = MustPage(*store_, second);
  EXPECT_EQ(page.total, 5);
  EXPECT_EQ(page.more, 1);
}

TEST_P(CheckpointStoreConformanceTest, PendingOfNothingIsAnEmptyPage) {
  PendingPage empty = MustPage(*store_, Query(20));
  EXPECT_THAT(empty.runs, IsEmpty());
  EXPECT_EQ(empty.total, 0);
  EXPECT_EQ(empty.more, 0);
  EXPECT_FALSE(empty.next.has_value());

  Make(*store_, "r1", "a");
  PendingQuery past_the_end = Query(20);
  past_the_end.before = RunCursor{clock_.Now() - seconds(1), "zzz"};
  PendingPage after = MustPage(*store_, past_the_end);
  EXPECT_THAT(after.runs, IsEmpty());
  EXPECT_EQ(after.total, 1);
  EXPECT_EQ(after.more, 0);
  // A cursor between two runs of one instant continues after it in id order.
  Make(*store_, "r3", "a");
  PendingQuery between = Query(20);
  between.before = RunCursor{clock_.Now(), "r2"};
  EXPECT_THAT(Ids(MustPage(*store_, between)), ElementsAre("r1"));
}

PendingQuery EveryRun(size_t limit, std::vector<RunStatus> statuses = {}, std::string agent = "") {
  PendingQuery query = Query(limit, std::move(statuses), std::move(agent));
  query.scope = RunScope::kAll;
  return query;
}

TEST_P(CheckpointStoreConformanceTest, RunPagesOfEveryScopeListCompletedRunsToo) {
  // r1..r7 one second apart, except that r4 and r5 share an instant; r2, r5 and r7 complete.
  for (int i = 1; i <= 7; ++i) {
    if (i != 5) clock_.Advance(seconds(1));
    const bool done = i == 2 || i == 5 || i == 7;
    Make(*store_, "r" + std::to_string(i), "a", done ? kCompleted : kRunning);
  }
  PendingPage first = MustPage(*store_, EveryRun(3));
  EXPECT_THAT(Ids(first), ElementsAre("r7", "r6", "r5"));
  EXPECT_EQ(first.total, 7);
  EXPECT_EQ(first.more, 4);
  EXPECT_EQ(first.runs[0].status, kCompleted);
  EXPECT_THAT(
      AllPages(*store_, EveryRun(3)),
      ElementsAre(ElementsAre("r7", "r6", "r5"), ElementsAre("r4", "r3", "r2"), ElementsAre("r1")));
  PendingQuery second = EveryRun(3);
  second.before = first.next;
  PendingPage page = MustPage(*store_, second);
  EXPECT_EQ(page.total, 7);
  EXPECT_EQ(page.more, 1);
  // The unfinished scope of the same store is unchanged.
  EXPECT_THAT(Ids(MustPage(*store_, Query(20))), ElementsAre("r6", "r4", "r3", "r1"));
}

TEST_P(CheckpointStoreConformanceTest, RunPagesFilterOnEveryStatusAndAgent) {
  const std::vector<std::pair<std::string, RunStatus>> runs = {
      {"a1", kCompleted}, {"b1", kFailed},     {"a2", kWaiting},   {"b2", kCompleted},
      {"a3", kFailed},    {"b3", kCompleted},  {"a4", kCompleted}, {"b4", kRunning},
      {"a5", kRunning},   {"b5", kQuarantined}};
  for (const auto& [id, status] : runs) {
    clock_.Advance(seconds(1));
    Make(*store_, id, id.substr(0, 1) == "a" ? "alpha" : "beta", status);
  }
  PendingPage completed = MustPage(*store_, EveryRun(20, {kCompleted}));
  EXPECT_THAT(Ids(completed), ElementsAre("a4", "b3", "b2", "a1"));
  EXPECT_EQ(completed.total, 4);
  PendingPage two = MustPage(*store_, EveryRun(20, {kFailed, kCompleted, kFailed}));
  EXPECT_THAT(Ids(two), ElementsAre("a4", "b3", "a3", "b2", "b1", "a1"));
  EXPECT_EQ(two.total, 6);
  EXPECT_THAT(Ids(MustPage(*store_, EveryRun(20, {kRunning}))), ElementsAre("a5", "b4"));

  PendingPage alpha = MustPage(*store_, EveryRun(20, {}, "alpha"));
  EXPECT_THAT(Ids(alpha), ElementsAre("a5", "a4", "a3", "a2", "a1"));
  EXPECT_EQ(alpha.total, 5);
  EXPECT_THAT(Ids(MustPage(*store_, EveryRun(20, {kCompleted}, "beta"))), ElementsAre("b3", "b2"));
  EXPECT_THAT(Ids(MustPage(*store_, EveryRun(20, {kCompleted, kRunning}, "alpha"))),
              ElementsAre("a5", "a4", "a1"));

  EXPECT_THAT(
      AllPages(*store_, EveryRun(2, {kCompleted, kFailed})),
      ElementsAre(ElementsAre("a4", "b3"), ElementsAre("a3", "b2"), ElementsAre("b1", "a1")));
  EXPECT_THAT(AllPages(*store_, EveryRun(2, {}, "beta")),
              ElementsAre(ElementsAre("b5", "b4"), ElementsAre("b3", "b2"), ElementsAre("b1")));
  PendingQuery second = EveryRun(2, {}, "beta");
  second.before = MustPage(*store_, second).next;
  PendingPage page = MustPage(*store_, second);
  EXPECT_EQ(page.total, 5);
  EXPECT_EQ(page.more, 1);
  PendingQuery completed_second = EveryRun(2, {kCompleted});
  completed_second.before = MustPage(*store_, completed_second).next;
  PendingPage last = MustPage(*store_, completed_second);
  EXPECT_THAT(Ids(last), ElementsAre("b2", "a1"));
  EXPECT_EQ(last.total, 4);
  EXPECT_EQ(last.more, 0);
  EXPECT_FALSE(last.next.has_value());
}

TEST_P(CheckpointStoreConformanceTest, RunPagesKeepARunThatCompletesBetweenPages) {
  for (int i = 1; i <= 4; ++i) {
    clock_.Advance(seconds(1));
    Make(*store_, "r" + std::to_string(i), "a");
  }
  PendingPage first = MustPage(*store_, EveryRun(2));
  EXPECT_THAT(Ids(first), ElementsAre("r4", "r3"));
  RunUpdate done;
  done.status = kCompleted;
  MEND_ASSERT_OK(store_->UpdateUnleased("r2", done));
  PendingQuery next = EveryRun(2);
  next.before = first.next;
  PendingPage second = MustPage(*store_, next);
  EXPECT_THAT(Ids(second), ElementsAre("r2", "r1"));
  EXPECT_EQ(second.runs[0].status, kCompleted);
  EXPECT_EQ(second.total, 4);
  EXPECT_EQ(second.more, 0);
}

TEST_P(CheckpointStoreConformanceTest, PendingRejectsBadQueries) {
  EXPECT_THAT(store_->ListPending(Query(0)), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->ListPending(Query(kMaxPendingPageSize + 1)),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->ListPending(Query(20, {kFailed, kCompleted})),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->ListPending(Query(kMaxPendingPageSize)), IsOk());
  // Every run's scope takes completed, and the same limits.
  EXPECT_THAT(store_->ListPending(EveryRun(20, {kFailed, kCompleted})), IsOk());
  EXPECT_THAT(store_->ListPending(EveryRun(0)), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->ListPending(EveryRun(kMaxPendingPageSize + 1)),
              StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::store::testing
