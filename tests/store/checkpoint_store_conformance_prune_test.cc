// The CheckpointStore conformance suite, part four: retention (Prune).

#include <chrono>
#include <string>
#include <vector>

#include "tests/store/checkpoint_store_conformance.h"
#include "tests/support/status_matchers.h"

namespace mend::store::testing {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::hours;
using std::chrono::seconds;
using ::testing::ElementsAre;

constexpr auto kThirtyDays = hours(24 * 30);

std::vector<int64_t> Steps(const std::vector<CheckpointInfo>& history) {
  std::vector<int64_t> steps;
  for (const CheckpointInfo& c : history) steps.push_back(c.step);
  return steps;
}

// Creates run `id` and saves `steps` checkpoints of one message and a 5-byte state each; the last
// one moves the run to `status` (running leaves it as it is). The lease is released.
void MakeRunWith(CheckpointStore& store, const LeaseHolder& holder, const std::string& id,
                 int64_t steps, RunStatus status) {
  RunRecord run;
  run.id = id;
  run.agent = "a";
  run.agent_dir = "agents/a";
  run.task = "do it";
  MEND_ASSERT_OK(store.CreateRun(run));
  Result<Lease> lease = store.Claim(id, holder, seconds(30));
  MEND_ASSERT_OK(lease);
  for (int64_t step = 1; step <= steps; ++step) {
    RunUpdate update;
    if (step == steps && status != RunStatus::kRunning) update.status = status;
    Checkpoint cp;
    cp.step = step;
    cp.new_messages = {"m" + std::to_string(step)};
    cp.state = "state";
    MEND_ASSERT_OK(store.Save(*lease, cp, update));
  }
  MEND_ASSERT_OK(store.Release(*lease));
}

PruneReport MustPrune(CheckpointStore& store, Clock& clock, PruneScope scope = PruneScope::kHistory,
                      PruneMode mode = PruneMode::kApply) {
  Result<PruneReport> report = store.Prune({clock.Now() - kThirtyDays, scope, mode});
  EXPECT_THAT(report, IsOk());
  return report.ok() ? *report : PruneReport{};
}

std::vector<int64_t> HistoryOf(CheckpointStore& store, const std::string& id) {
  Result<std::vector<CheckpointInfo>> history = store.History(id);
  EXPECT_THAT(history, IsOk());
  return history.ok() ? Steps(*history) : std::vector<int64_t>{};
}

TEST_P(CheckpointStoreConformanceTest, PruneOldFinishedRunsKeepOnlyTheirFinalCheckpoint) {
  MakeRunWith(*store_, local_, "done", 3, RunStatus::kCompleted);
  MakeRunWith(*store_, local_, "broke", 2, RunStatus::kFailed);
  Result<RunSnapshot> before = store_->Load("done");
  MEND_ASSERT_OK(before);
  clock_.Advance(kThirtyDays + seconds(1));

  PruneReport report = MustPrune(*store_, clock_);
  EXPECT_EQ(report.runs, 2);
  EXPECT_EQ(report.runs_deleted, 0);
  EXPECT_EQ(report.checkpoints, 3);  // steps 1 and 2 of "done", step 1 of "broke"
  EXPECT_EQ(report.messages, 0);
  EXPECT_EQ(report.bytes, 3 * 5);
  EXPECT_THAT(HistoryOf(*store_, "done"), ElementsAre(3));
  EXPECT_THAT(HistoryOf(*store_, "broke"), ElementsAre(2));

  // The final state, the whole conversation and the record (updated_at included) are unchanged.
  Result<RunSnapshot> after = store_->Load("done");
  MEND_ASSERT_OK(after);
  EXPECT_EQ(after->step, 3);
  EXPECT_EQ(after->messages, before->messages);
  EXPECT_THAT(after->messages, ElementsAre("m1", "m2", "m3"));
  EXPECT_EQ(after->state, before->state);
  EXPECT_EQ(after->run.updated_at, before->run.updated_at);
  EXPECT_EQ(after->run.status, RunStatus::kCompleted);
  EXPECT_THAT(store_->Load("done", 2), StatusIs(StatusCode::kNotFound));

  // Nothing is left to prune.
  PruneReport again = MustPrune(*store_, clock_);
  EXPECT_EQ(again.runs, 0);
  EXPECT_EQ(again.checkpoints, 0);
}

TEST_P(CheckpointStoreConformanceTest, PruneUnfinishedRunsAreNeverTouched) {
  MakeRunWith(*store_, local_, "running", 3, RunStatus::kRunning);
  MakeRunWith(*store_, local_, "waiting", 3, RunStatus::kWaiting);
  MakeRunWith(*store_, local_, "quarantined", 3, RunStatus::kRunning);
  RunUpdate quarantine;
  quarantine.status = RunStatus::kQuarantined;
  MEND_ASSERT_OK(store_->UpdateUnleased("quarantined", quarantine));
  clock_.Advance(kThirtyDays * 2);

  for (PruneScope scope : {PruneScope::kHistory, PruneScope::kWholeRuns}) {
    PruneReport report = MustPrune(*store_, clock_, scope);
    EXPECT_EQ(report.runs, 0);
    EXPECT_EQ(report.checkpoints, 0);
  }
  for (const char* id : {"running", "waiting", "quarantined"}) {
    EXPECT_THAT(HistoryOf(*store_, id), ElementsAre(1, 2, 3)) << id;
  }
}

TEST_P(CheckpointStoreConformanceTest, PruneARunHeldByALiveLeaseIsLeftAlone) {
  MakeRun("held");
  Result<Lease> lease = store_->Claim("held", local_, kThirtyDays * 3);
  MEND_ASSERT_OK(lease);
  MEND_ASSERT_OK(store_->Save(*lease, Cp(1, {"a"}, "s1"), {}));
  RunUpdate fail;
  fail.status = RunStatus::kFailed;
  MEND_ASSERT_OK(store_->Save(*lease, Cp(2, {"b"}, "s2"), fail));
  clock_.Advance(kThirtyDays * 2);  // old, but the lease has a month to go

  for (PruneScope scope : {PruneScope::kHistory, PruneScope::kWholeRuns}) {
    EXPECT_EQ(MustPrune(*store_, clock_, scope).runs, 0);
  }
  EXPECT_THAT(HistoryOf(*store_, "held"), ElementsAre(1, 2));

  MarkDead(local_.pid);  // the holder's process is gone: the run is free, and old
  EXPECT_EQ(MustPrune(*store_, clock_).runs, 1);
  EXPECT_THAT(HistoryOf(*store_, "held"), ElementsAre(2));
}

TEST_P(CheckpointStoreConformanceTest, PruneRecentRunsAreKept) {
  MakeRunWith(*store_, local_, "old", 2, RunStatus::kCompleted);
  clock_.Advance(kThirtyDays - seconds(1));
  MakeRunWith(*store_, local_, "new", 2, RunStatus::kCompleted);
  clock_.Advance(seconds(2));  // "old" is 30 days and 1 s old, "new" 2 s

  PruneReport report = MustPrune(*store_, clock_);
  EXPECT_EQ(report.runs, 1);
  EXPECT_THAT(HistoryOf(*store_, "old"), ElementsAre(2));
  EXPECT_THAT(HistoryOf(*store_, "new"), ElementsAre(1, 2));
}

TEST_P(CheckpointStoreConformanceTest, PruneWholeRunsAreDeletedWithTheirMessages) {
  MakeRunWith(*store_, local_, "done", 3, RunStatus::kCompleted);
  MakeRunWith(*store_, local_, "single", 1, RunStatus::kFailed);
  MakeRunWith(*store_, local_, "live", 2, RunStatus::kRunning);
  clock_.Advance(kThirtyDays + seconds(1));

  PruneReport report = MustPrune(*store_, clock_, PruneScope::kWholeRuns);
  EXPECT_EQ(report.runs, 2);
  EXPECT_EQ(report.runs_deleted, 2);
  EXPECT_EQ(report.checkpoints, 4);
  EXPECT_EQ(report.messages, 4);
  EXPECT_EQ(report.bytes, 4 * 5 + 4 * 2);
  EXPECT_THAT(store_->GetRun("done"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->GetRun("single"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(HistoryOf(*store_, "live"), ElementsAre(1, 2));
  Result<std::vector<RunRecord>> all = store_->ListRuns({.unfinished_only = false});
  MEND_ASSERT_OK(all);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].id, "live");
}

TEST_P(CheckpointStoreConformanceTest, PruneDryRunReportsTheSameAndChangesNothing) {
  MakeRunWith(*store_, local_, "done", 3, RunStatus::kCompleted);
  MakeRunWith(*store_, local_, "broke", 2, RunStatus::kFailed);
  clock_.Advance(kThirtyDays + seconds(1));

  for (PruneScope scope : {PruneScope::kHistory, PruneScope::kWholeRuns}) {
    PruneReport dry = MustPrune(*store_, clock_, scope, PruneMode::kDryRun);
    EXPECT_THAT(HistoryOf(*store_, "done"), ElementsAre(1, 2, 3));
    EXPECT_THAT(HistoryOf(*store_, "broke"), ElementsAre(1, 2));
    EXPECT_EQ(dry.runs, 2);
    EXPECT_EQ(dry.runs_deleted, scope == PruneScope::kWholeRuns ? 2 : 0);
    EXPECT_EQ(dry.checkpoints, scope == PruneScope::kWholeRuns ? 5 : 3);
  }
  PruneReport dry = MustPrune(*store_, clock_, PruneScope::kHistory, PruneMode::kDryRun);
  PruneReport real = MustPrune(*store_, clock_, PruneScope::kHistory);
  EXPECT_EQ(real.runs, dry.runs);
  EXPECT_EQ(real.checkpoints, dry.checkpoints);
  EXPECT_EQ(real.bytes, dry.bytes);
}

TEST_P(CheckpointStoreConformanceTest, PruneAFinishedRunWithoutHistoryIsNotCounted) {
  MakeRunWith(*store_, local_, "one", 1, RunStatus::kCompleted);
  MakeRun("none");
  RunUpdate fail;
  fail.status = RunStatus::kFailed;
  MEND_ASSERT_OK(store_->UpdateUnleased("none", fail));
  clock_.Advance(kThirtyDays + seconds(1));

  EXPECT_EQ(MustPrune(*store_, clock_).runs, 0);
  EXPECT_THAT(HistoryOf(*store_, "one"), ElementsAre(1));
  PruneReport whole = MustPrune(*store_, clock_, PruneScope::kWholeRuns);
  EXPECT_EQ(whole.runs_deleted, 2);
  EXPECT_EQ(whole.checkpoints, 1);
}

}  // namespace
}  // namespace mend::store::testing
