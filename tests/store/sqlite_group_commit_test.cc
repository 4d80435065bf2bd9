// Group commit in the SQLite store: batches built by hand (deterministic) and by real threads.

#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/store/sqlite_store.h"
#include "store/sqlite_store_impl.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::hours;
using ::testing::ElementsAre;

void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  std::string message = error == nullptr ? "" : error;
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

Checkpoint Cp(int64_t step, std::string message) {
  Checkpoint cp;
  cp.step = step;
  cp.new_messages = {std::move(message)};
  cp.state = "state" + std::to_string(step);
  return cp;
}

class SqliteGroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_group_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    options_.path = dir_ + "/mend.db";
    options_.local = LeaseHolder{"me", "host-a", "boot-1", static_cast<int64_t>(getpid())};
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Closes the store and opens the file again: what is read afterwards was on disk.
  void Reopen() {
    store_.reset();
    Result<std::unique_ptr<CheckpointStore>> store = OpenSqliteStore(options_, clock_);
    ASSERT_THAT(store, IsOk());
    store_ = std::move(store).value();
    impl_ = dynamic_cast<internal::SqliteStore*>(store_.get());
    ASSERT_NE(impl_, nullptr);
  }

  Lease MakeClaimedRun(const std::string& id) {
    RunRecord run;
    run.id = id;
    EXPECT_THAT(store_->CreateRun(run), IsOk());
    Result<Lease> lease = store_->Claim(id, options_.local, hours(1));
    EXPECT_THAT(lease, IsOk());
    return lease.ok() ? *lease : Lease{};
  }

  // Runs the given saves as one batch, exactly as the group commit would, and returns their
  // results in order.
  struct SaveArgs {
    Lease lease;
    Checkpoint checkpoint;
    RunUpdate update;
  };
  std::vector<Status> RunSaveBatch(const std::vector<SaveArgs>& saves) {
    std::vector<std::function<Status()>> bodies;
    for (const SaveArgs& s : saves)
      bodies.push_back(impl_->SaveBody(s.lease, s.checkpoint, s.update));
    std::vector<internal::PendingWrite> writes(bodies.size());
    std::vector<internal::PendingWrite*> batch;
    for (size_t i = 0; i < bodies.size(); ++i) {
      writes[i].body = &bodies[i];
      batch.push_back(&writes[i]);
    }
    impl_->RunBatch(batch);
    std::vector<Status> results;
    for (const internal::PendingWrite& w : writes) results.push_back(w.result);
    return results;
  }

  std::string dir_;
  ManualClock clock_;
  SqliteStoreOptions options_;
  std::unique_ptr<CheckpointStore> store_;
  internal::SqliteStore* impl_ = nullptr;
};

TEST_F(SqliteGroupCommitTest, FencedSaveFailsAloneAndTheRestOfTheBatchCommits) {
  Lease r1 = MakeClaimedRun("r1");
  Lease stale = MakeClaimedRun("r2");
  MEND_ASSERT_OK(store_->Release(stale));
  Lease r2 = store_->Claim("r2", options_.local, hours(1)).value();  // epoch 2: `stale` is 1
  Lease r3 = MakeClaimedRun("r3");
  int64_t transactions = impl_->write_stats().transactions;

  std::vector<Status> results = RunSaveBatch({
      {r1, Cp(1, "r1-a"), {}},
      {stale, Cp(1, "r2-stale"), {}},
      {r3, Cp(1, "r3-a"), {}},
      {r1, Cp(2, "r1-b"), {}},
      {r3, Cp(5, "r3-skip"), {}},  // not r3's next step
      {r2, Cp(1, "r2-a"), {}},
  });
  ASSERT_EQ(results.size(), 6u);
  EXPECT_THAT(results[0], IsOk());
  EXPECT_THAT(results[1], StatusIs(StatusCode::kAborted));
  EXPECT_THAT(results[2], IsOk());
  EXPECT_THAT(results[3], IsOk());
  EXPECT_THAT(results[4], StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(results[5], IsOk());
  EXPECT_EQ(impl_->write_stats().transactions, transactions + 1);  // one COMMIT for all six

  Reopen();
  Result<RunSnapshot> s1 = store_->Load("r1");
  MEND_ASSERT_OK(s1);
  EXPECT_EQ(s1->step, 2);
  EXPECT_THAT(s1->messages, ElementsAre("r1-a", "r1-b"));
  EXPECT_EQ(s1->state, "state2");
  EXPECT_THAT(store_->Load("r2")->messages, ElementsAre("r2-a"));
  EXPECT_THAT(store_->Load("r3")->messages, ElementsAre("r3-a"));
  EXPECT_EQ(store_->History("r3")->size(), 1u);
}

TEST_F(SqliteGroupCommitTest, AWriteAloneInItsBatchFailsWithoutASavepointAndLeavesNothing) {
  Lease r1 = MakeClaimedRun("r1");
  MEND_ASSERT_OK(store_->Save(r1, Cp(1, "r1-a"), {}));
  // Alone in a batch, a save runs without a savepoint; its failure rolls the transaction back.
  EXPECT_THAT(RunSaveBatch({{r1, Cp(5, "r1-skip"), {}}})[0],
              StatusIs(StatusCode::kFailedPrecondition));
  RunUpdate update;
  update.status = RunStatus::kFailed;
  EXPECT_THAT(RunSaveBatch({{r1, Cp(3, "r1-skip-too"), update}})[0],
              StatusIs(StatusCode::kFailedPrecondition));
  // No transaction was left open: the next write commits.
  EXPECT_THAT(RunSaveBatch({{r1, Cp(2, "r1-b"), {}}})[0], IsOk());

  Reopen();
  Result<RunSnapshot> s1 = store_->Load("r1");
  MEND_ASSERT_OK(s1);
  EXPECT_EQ(s1->step, 2);
  EXPECT_THAT(s1->messages, ElementsAre("r1-a", "r1-b"));
  EXPECT_EQ(store_->GetRun("r1")->status, RunStatus::kRunning);
}

TEST_F(SqliteGroupCommitTest, SavesOfOneRunKeepTheirOrderAroundAFailedOne) {
  Lease r1 = MakeClaimedRun("r1");
  std::vector<Status> results = RunSaveBatch({
      {r1, Cp(1, "m1"), {}},
      {r1, Cp(3, "too-early"), {}},
      {r1, Cp(2, "m2"), {}},
      {r1, Cp(3, "m3"), {}},
  });
  EXPECT_THAT(results,
              ElementsAre(IsOk(), StatusIs(StatusCode::kFailedPrecondition), IsOk(), IsOk()));
  Reopen();
  Result<RunSnapshot> snap = store_->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->step, 3);
  EXPECT_THAT(snap->messages, ElementsAre("m1", "m2", "m3"));
  EXPECT_EQ(store_->Load("r1", 2)->messages.size(), 2u);
}

TEST_F(SqliteGroupCommitTest, FailedCommitFailsEveryWriteOfTheBatch) {
  Lease r1 = MakeClaimedRun("r1");
  Lease poison = MakeClaimedRun("poison");
  // A checkpoint of run "poison" leaves a deferred foreign-key violation, which only COMMIT
  // detects: every savepoint succeeds and the COMMIT fails.
  RawExec(options_.path,
          "CREATE TABLE dangling (run_id TEXT REFERENCES runs (id) DEFERRABLE INITIALLY "
          "DEFERRED);"
          "CREATE TRIGGER poison_commit AFTER INSERT ON checkpoints WHEN NEW.run_id = 'poison' "
          "BEGIN INSERT INTO dangling VALUES ('no-such-run'); END;");
  std::vector<Status> results = RunSaveBatch({
      {r1, Cp(1, "m1"), {}},
      {poison, Cp(1, "p1"), {}},
      {r1, Cp(3, "wrong-step"), {}},
  });
  EXPECT_THAT(results, ElementsAre(StatusIs(StatusCode::kInternal), StatusIs(StatusCode::kInternal),
                                   StatusIs(StatusCode::kFailedPrecondition)));
  // Nothing of the batch was written, and the store keeps working.
  EXPECT_EQ(store_->GetRun("r1")->step, 0);
  MEND_EXPECT_OK(store_->Save(r1, Cp(1, "again"), {}));
  Reopen();
  EXPECT_THAT(store_->Load("r1")->messages, ElementsAre("again"));
  EXPECT_EQ(store_->GetRun("poison")->step, 0);
}

TEST_F(SqliteGroupCommitTest, ConcurrentSavesOnManyRunsAreAllDurable) {
  constexpr int kRuns = 32;
  constexpr int kSteps = 20;
  std::vector<Lease> leases;
  for (int r = 0; r < kRuns; ++r) leases.push_back(MakeClaimedRun("run-" + std::to_string(r)));
  std::vector<std::thread> threads;
  std::vector<std::vector<Status>> results(kRuns);
  for (int r = 0; r < kRuns; ++r) {
    threads.emplace_back([&, r] {
      for (int step = 1; step <= kSteps; ++step) {
        std::string message = "run-" + std::to_string(r) + "/" + std::to_string(step);
        results[r].push_back(store_->Save(leases[r], Cp(step, message), {}));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  internal::SqliteStore::WriteStats stats = impl_->write_stats();
  EXPECT_LE(stats.transactions, stats.writes);
  Reopen();
  for (int r = 0; r < kRuns; ++r) {
    for (const Status& s : results[r]) EXPECT_THAT(s, IsOk());
    Result<RunSnapshot> snap = store_->Load("run-" + std::to_string(r));
    MEND_ASSERT_OK(snap);
    EXPECT_EQ(snap->step, kSteps);
    ASSERT_EQ(snap->messages.size(), static_cast<size_t>(kSteps));
    for (int step = 1; step <= kSteps; ++step) {
      EXPECT_EQ(snap->messages[step - 1], "run-" + std::to_string(r) + "/" + std::to_string(step));
    }
    EXPECT_EQ(snap->state, "state" + std::to_string(kSteps));
  }
}

TEST_F(SqliteGroupCommitTest, ConcurrentSavesWithAFencedWriterFailOnlyItsSaves) {
  Lease stale = MakeClaimedRun("taken");
  clock_.Advance(hours(2));  // the lease expires and someone else claims the run
  Lease good = MakeClaimedRun("good");
  MEND_ASSERT_OK(store_->Claim("taken", LeaseHolder{"other", "host-b", "", 7}, hours(1)));
  std::vector<Status> good_results;
  std::vector<Status> stale_results;
  std::thread a([&] {
    for (int step = 1; step <= 30; ++step)
      good_results.push_back(store_->Save(good, Cp(step, "g"), {}));
  });
  std::thread b([&] {
    for (int step = 1; step <= 30; ++step)
      stale_results.push_back(store_->Save(stale, Cp(step, "s"), {}));
  });
  a.join();
  b.join();
  for (const Status& s : good_results) EXPECT_THAT(s, IsOk());
  for (const Status& s : stale_results) EXPECT_THAT(s, StatusIs(StatusCode::kAborted));
  Reopen();
  EXPECT_EQ(store_->GetRun("good")->step, 30);
  EXPECT_EQ(store_->GetRun("taken")->step, 0);
}

TEST_F(SqliteGroupCommitTest, MaxWriteBatchMustBePositive) {
  options_.max_write_batch = 0;
  EXPECT_THAT(OpenSqliteStore(options_, clock_), StatusIs(StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace mend::store
