// The CheckpointStore conformance suite, part five: the runs a recovery pass acts on
// (ListRecoveryCandidates), in pages, with the counts of those it leaves alone.

#include <chrono>
#include <optional>
#include <string>
#include <utility>
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

RunError Retryable() { return {"ABORTED", "the workspace was busy", "transient", true}; }
RunError NotRetryable() { return {"MEND_RUN_NO_PROGRESS", "stuck", "permanent", false}; }

// One run as recovery would find it.
struct Shape {
  RunStatus status = RunStatus::kRunning;
  int64_t attempts = 0;
  std::optional<Duration> next_in;  // next_attempt_at relative to the clock's now
  std::optional<RunError> error;
  std::string waiting;
};

// Creates run `id` (MakeRun of the suite) and gives it `shape`.
void Add(CheckpointStore& store, Clock& clock, const std::string& id, const Shape& shape) {
  RunRecord run;
  run.id = id;
  run.agent = "a";
  run.agent_dir = "agents/a";
  run.task = "do it";
  MEND_ASSERT_OK(store.CreateRun(run));
  RunUpdate update;
  update.status = shape.status;
  update.attempts = shape.attempts;
  if (shape.next_in.has_value()) update.next_attempt_at = clock.Now() + *shape.next_in;
  if (shape.error.has_value()) update.last_error = shape.error;
  update.waiting = shape.waiting;
  MEND_ASSERT_OK(store.UpdateUnleased(id, update));
}

RecoveryQuery Query(Clock& clock, size_t limit, int64_t max_attempts = 5) {
  RecoveryQuery query;
  query.now = clock.Now();
  query.max_attempts = max_attempts;
  query.limit = limit;
  return query;
}

RecoveryPage MustPage(CheckpointStore& store, const RecoveryQuery& query) {
  Result<RecoveryPage> page = store.ListRecoveryCandidates(query);
  EXPECT_THAT(page, IsOk());
  return page.ok() ? *std::move(page) : RecoveryPage{};
}

std::vector<std::string> Ids(const RecoveryPage& page) {
  std::vector<std::string> ids;
  for (const RunRecord& r : page.runs) ids.push_back(r.id);
  return ids;
}

// One run of every kind, one second apart in this order.
void AddOneOfEach(CheckpointStore& store, ManualClock& clock) {
  const std::vector<std::pair<std::string, Shape>> runs = {
      {"interrupted", {}},                                                     // due
      {"retry-due", {RunStatus::kFailed, 2, seconds(-10), Retryable()}},       // due
      {"backoff", {RunStatus::kFailed, 2, seconds(60), Retryable()}},          // in backoff
      {"no-progress", {RunStatus::kFailed, 1, std::nullopt, NotRetryable()}},  // not retryable
      {"approval", {RunStatus::kWaiting, 0, std::nullopt, std::nullopt, "approval"}},
      {"parked", {RunStatus::kQuarantined, 5, std::nullopt, Retryable()}},  // left alone
      {"given-up", {RunStatus::kFailed, 5, seconds(600), NotRetryable()}},  // gives up
      {"completed", {RunStatus::kCompleted}},                               // not unfinished
      {"due-now", {RunStatus::kFailed, 1, seconds(0), Retryable()}},        // due, exactly now
      {"running-with-error", {RunStatus::kRunning, 0, std::nullopt, NotRetryable()}},  // due
  };
  for (const auto& [id, shape] : runs) {
    clock.Advance(seconds(1));
    Add(store, clock, id, shape);
  }
}

TEST_P(CheckpointStoreConformanceTest, TheRecoveryPositionIsKeptUntilCleared) {
  EXPECT_THAT(store_->RecoveryCursor(), ::mend::testing::IsOkAndHolds(std::nullopt));
  const RunCursor cursor{clock_.Now(), "run 7/ü"};
  ASSERT_THAT(store_->SetRecoveryCursor(cursor), IsOk());
  EXPECT_THAT(store_->RecoveryCursor(), ::mend::testing::IsOkAndHolds(std::optional(cursor)));
  const RunCursor later{clock_.Now() + seconds(5), "run-8"};
  ASSERT_THAT(store_->SetRecoveryCursor(later), IsOk());
  EXPECT_THAT(store_->RecoveryCursor(), ::mend::testing::IsOkAndHolds(std::optional(later)));
  ASSERT_THAT(store_->SetRecoveryCursor(std::nullopt), IsOk());
  EXPECT_THAT(store_->RecoveryCursor(), ::mend::testing::IsOkAndHolds(std::nullopt));
}

TEST_P(CheckpointStoreConformanceTest, CandidatesAreDueOrGivingUpOldestFirstWithCountsOfTheRest) {
  AddOneOfEach(*store_, clock_);
  RecoveryQuery query = Query(clock_, 100);
  query.counting = RecoveryCounting::kInclude;
  RecoveryPage page = MustPage(*store_, query);
  EXPECT_THAT(Ids(page),
              ElementsAre("interrupted", "retry-due", "given-up", "due-now", "running-with-error"));
  EXPECT_FALSE(page.next.has_value());
  ASSERT_TRUE(page.counts.has_value());
  EXPECT_EQ(page.counts->waiting, 1);
  EXPECT_EQ(page.counts->non_retryable, 1);
  EXPECT_EQ(page.counts->backoff, 1);
  EXPECT_EQ(page.counts->candidates, 5);
  // The page carries the whole record, as GetRun has it.
  ASSERT_EQ(page.runs.size(), 5u);
  Result<RunRecord> given_up = store_->GetRun("given-up");
  MEND_ASSERT_OK(given_up);
  EXPECT_EQ(page.runs[2].attempts, 5);
  EXPECT_EQ(page.runs[2].next_attempt_at, given_up->next_attempt_at);
  EXPECT_EQ(page.runs[2].last_error->code, "MEND_RUN_NO_PROGRESS");
  EXPECT_EQ(page.runs[2].created_at, given_up->created_at);

  // Without counting, the page is the same and carries none.
  RecoveryPage plain = MustPage(*store_, Query(clock_, 100));
  EXPECT_EQ(Ids(plain), Ids(page));
  EXPECT_FALSE(plain.counts.has_value());
}

TEST_P(CheckpointStoreConformanceTest, TheStoreAgreesWithClassifyForRecovery) {
  AddOneOfEach(*store_, clock_);
  Result<std::vector<RunRecord>> all = store_->ListRuns(ListOptions{});
  MEND_ASSERT_OK(all);
  for (int64_t max_attempts : {1, 2, 5, 6}) {
    RecoveryQuery query = Query(clock_, 100, max_attempts);
    query.counting = RecoveryCounting::kInclude;
    RecoveryPage page = MustPage(*store_, query);
    std::vector<std::string> expected;
    RecoveryCounts counts;
    for (const RunRecord& run : *all) {
      switch (ClassifyForRecovery(run, clock_.Now(), max_attempts)) {
        case RecoveryClass::kGiveUp:
        case RecoveryClass::kDue:
          expected.push_back(run.id);
          ++counts.candidates;
          break;
        case RecoveryClass::kWaiting:
          ++counts.waiting;
          break;
        case RecoveryClass::kNonRetryable:
          ++counts.non_retryable;
          break;
        case RecoveryClass::kBackoff:
          ++counts.backoff;
          break;
        case RecoveryClass::kLeftAlone:
          break;
      }
    }
    EXPECT_EQ(Ids(page), expected) << "max_attempts " << max_attempts;
    ASSERT_TRUE(page.counts.has_value());
    EXPECT_EQ(page.counts->waiting, counts.waiting) << "max_attempts " << max_attempts;
    EXPECT_EQ(page.counts->non_retryable, counts.non_retryable) << "max_attempts " << max_attempts;
    EXPECT_EQ(page.counts->backoff, counts.backoff) << "max_attempts " << max_attempts;
    EXPECT_EQ(page.counts->candidates, counts.candidates) << "max_attempts " << max_attempts;
  }
}

TEST_P(CheckpointStoreConformanceTest, AtMaxAttemptsEveryRunningOrFailedRunIsACandidate) {
  AddOneOfEach(*store_, clock_);
  // At one attempt, every running or failed run that has one gives up, whatever its error or next
  // attempt; waiting and quarantined runs are still left alone.
  RecoveryQuery query = Query(clock_, 100, /*max_attempts=*/1);
  query.counting = RecoveryCounting::kInclude;
  RecoveryPage page = MustPage(*store_, query);
  EXPECT_THAT(Ids(page), ElementsAre("interrupted", "retry-due", "backoff", "no-progress",
                                     "given-up", "due-now", "running-with-error"));
  EXPECT_EQ(page.counts->waiting, 1);
  EXPECT_EQ(page.counts->non_retryable, 0);
  EXPECT_EQ(page.counts->backoff, 0);
}

TEST_P(CheckpointStoreConformanceTest, RunsInBackoffAreListedWhenAsked) {
  AddOneOfEach(*store_, clock_);
  RecoveryQuery query = Query(clock_, 100);
  query.backoff = RecoveryBackoff::kInclude;
  query.counting = RecoveryCounting::kInclude;
  RecoveryPage page = MustPage(*store_, query);
  EXPECT_THAT(Ids(page), ElementsAre("interrupted", "retry-due", "backoff", "given-up", "due-now",
                                     "running-with-error"));
  // The counts do not depend on the page's filter.
  EXPECT_EQ(page.counts->backoff, 1);
  EXPECT_EQ(page.counts->candidates, 5);

  // Once its time has come, the run is due anyway.
  clock_.Advance(seconds(60));
  EXPECT_THAT(Ids(MustPage(*store_, Query(clock_, 100))),
              ElementsAre("interrupted", "retry-due", "backoff", "given-up", "due-now",
                          "running-with-error"));
}

TEST_P(CheckpointStoreConformanceTest, AWaitingKindKeepsARunningRunForAPerson) {
  Add(*store_, clock_, "asked", {RunStatus::kRunning, 0, std::nullopt, std::nullopt, "question"});
  clock_.Advance(seconds(1));
  Add(*store_, clock_, "plain", {});
  RecoveryQuery query = Query(clock_, 100);
  query.counting = RecoveryCounting::kInclude;
  RecoveryPage page = MustPage(*store_, query);
  EXPECT_THAT(Ids(page), ElementsAre("plain"));
  EXPECT_EQ(page.counts->waiting, 1);
}

TEST_P(CheckpointStoreConformanceTest, PagesFollowTheCursorAndListEveryCandidateOnce) {
  // r1..r7, of which r3 and r6 are in backoff; r4 and r5 share an instant (ordered by id).
  for (int i = 1; i <= 7; ++i) {
    if (i != 5) clock_.Advance(seconds(1));
    Shape shape;
    if (i == 3 || i == 6) shape = {RunStatus::kFailed, 1, seconds(300), Retryable()};
    Add(*store_, clock_, "r" + std::to_string(i), shape);
  }
  RecoveryQuery query = Query(clock_, 2);
  query.counting = RecoveryCounting::kInclude;
  RecoveryPage first = MustPage(*store_, query);
  EXPECT_THAT(Ids(first), ElementsAre("r1", "r2"));
  ASSERT_TRUE(first.next.has_value());
  EXPECT_EQ(first.next->id, "r2");
  EXPECT_EQ(first.next->created_at, first.runs.back().created_at);
  EXPECT_EQ(first.counts->candidates, 5);

  query.after = first.next;
  query.counting = RecoveryCounting::kOmit;
  RecoveryPage second = MustPage(*store_, query);
  EXPECT_THAT(Ids(second), ElementsAre("r4", "r5"));
  ASSERT_TRUE(second.next.has_value());

  // A run that finishes meanwhile, and one created meanwhile, shift nothing: the next page starts
  // after r5 and ends with the new run.
  RunUpdate done;
  done.status = RunStatus::kCompleted;
  MEND_ASSERT_OK(store_->UpdateUnleased("r1", done));
  clock_.Advance(seconds(1));
  Add(*store_, clock_, "r8", {});
  query.after = second.next;
  RecoveryPage third = MustPage(*store_, query);
  EXPECT_THAT(Ids(third), ElementsAre("r7", "r8"));
  // A page exactly as large as what is left says nothing more follows.
  EXPECT_FALSE(third.next.has_value());

  query.after = third.next;
  EXPECT_THAT(Ids(MustPage(*store_, query)), ElementsAre("r2", "r4"));  // from the oldest again
}

TEST_P(CheckpointStoreConformanceTest, AnEmptyStoreHasNoCandidatesAndZeroCounts) {
  RecoveryQuery query = Query(clock_, kMaxRecoveryPageSize);
  query.counting = RecoveryCounting::kInclude;
  RecoveryPage page = MustPage(*store_, query);
  EXPECT_THAT(page.runs, IsEmpty());
  EXPECT_FALSE(page.next.has_value());
  ASSERT_TRUE(page.counts.has_value());
  EXPECT_EQ(page.counts->waiting + page.counts->non_retryable + page.counts->backoff +
                page.counts->candidates,
            0);
}

TEST_P(CheckpointStoreConformanceTest, InvalidQueriesAreRefused) {
  EXPECT_THAT(store_->ListRecoveryCandidates(Query(clock_, 0)),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->ListRecoveryCandidates(Query(clock_, kMaxRecoveryPageSize + 1)),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->ListRecoveryCandidates(Query(clock_, 10, /*max_attempts=*/0)),
              StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::store::testing
