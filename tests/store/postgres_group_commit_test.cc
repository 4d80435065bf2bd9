// Group commit in the PostgreSQL store: batches built by hand (deterministic), a batch held up by
// a row lock while others queue behind it, and real threads.
//
// Needs a server named by MEND_TEST_POSTGRES_URL (scripts/with_postgres); skipped without one.

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/base/time_format.h"
#include "mend/store/postgres_store.h"
#include "store/pg_store_impl.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::hours;
using std::chrono::seconds;
using ::testing::ElementsAre;

std::string ServerUrl() {
  const char* url = std::getenv("MEND_TEST_POSTGRES_URL");
  return url == nullptr ? "" : url;
}

// A connection of its own, as another program would have.
class RawConn {
 public:
  RawConn() : conn_(PQconnectdb(ServerUrl().c_str())) {
    EXPECT_EQ(PQstatus(conn_), CONNECTION_OK) << PQerrorMessage(conn_);
  }
  ~RawConn() { PQfinish(conn_); }
  RawConn(const RawConn&) = delete;
  RawConn& operator=(const RawConn&) = delete;

  // Runs `sql` and returns the first column of its first row ("" when there is none).
  std::string Exec(const std::string& sql) {
    PGresult* res = PQexec(conn_, sql.c_str());
    ExecStatusType status = PQresultStatus(res);
    EXPECT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) << PQerrorMessage(conn_);
    std::string value =
        status == PGRES_TUPLES_OK && PQntuples(res) > 0 ? PQgetvalue(res, 0, 0) : "";
    PQclear(res);
    return value;
  }

 private:
  PGconn* conn_;
};

// Returns once a connection named `application_name` waits for a row lock on the server: a batch
// held up by a lock the test's own transaction took.
void AwaitSaveWaitingForLock(RawConn& raw, const std::string& application_name) {
  while (raw.Exec("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" +
                  application_name + "' AND wait_event_type = 'Lock'") != "1") {
    std::this_thread::yield();
  }
}

Checkpoint Cp(int64_t step, std::string message) {
  Checkpoint cp;
  cp.step = step;
  cp.new_messages = {std::move(message)};
  cp.state = "state" + std::to_string(step);
  return cp;
}

RunUpdate Waiting(std::string what) {
  RunUpdate update;
  update.waiting = std::move(what);
  return update;
}

class PostgresGroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (ServerUrl().empty()) {
      GTEST_SKIP() << "MEND_TEST_POSTGRES_URL is not set (see scripts/with_postgres)";
    }
    static std::atomic<int> next{0};
    schema_ = "mend_group_" + std::to_string(getpid()) + "_" + std::to_string(next++);
    raw_ = std::make_unique<RawConn>();
    raw_->Exec("SET client_min_messages TO warning; DROP SCHEMA IF EXISTS \"" + schema_ +
               "\" CASCADE");
    // The store's connections carry a name of their own, so a test can find them on the server.
    const std::string url = ServerUrl();
    const char* glue = !url.starts_with("postgres") ? " " : url.find('?') == url.npos ? "?" : "&";
    options_.url = url + glue + "application_name=" + schema_;
    options_.schema = schema_;
    options_.local = LeaseHolder{"me", "host-a", "boot-1", static_cast<int64_t>(getpid())};
    Open();
  }
  void TearDown() override {
    store_.reset();
    if (raw_ != nullptr) {
      raw_->Exec("SET client_min_messages TO warning; DROP SCHEMA IF EXISTS \"" + schema_ +
                 "\" CASCADE");
    }
  }

  void Open() {
    store_.reset();
    Result<std::unique_ptr<CheckpointStore>> store = OpenPostgresStore(options_, clock_);
    ASSERT_THAT(store, IsOk());
    store_ = std::move(store).value();
    impl_ = dynamic_cast<internal::PgStore*>(store_.get());
    ASSERT_NE(impl_, nullptr);
  }

  // Runs `sql` with this test's schema as the search path.
  void SchemaExec(const std::string& sql) {
    raw_->Exec("SET search_path TO \"" + schema_ + "\"; " + sql);
  }

  Lease MakeClaimedRun(const std::string& id, Duration ttl = hours(1)) {
    RunRecord run;
    run.id = id;
    EXPECT_THAT(store_->CreateRun(run), IsOk());
    Result<Lease> lease = store_->Claim(id, options_.local, ttl);
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
    std::vector<std::unique_ptr<internal::PgSaveWork>> works;
    for (const SaveArgs& s : saves) {
      bodies.push_back(impl_->SaveBody(s.lease, s.checkpoint, s.update));
      works.push_back(std::make_unique<internal::PgSaveWork>(s.lease, s.checkpoint, s.update));
    }
    std::vector<internal::PendingWrite> writes(saves.size());
    std::vector<internal::PendingWrite*> batch;
    for (size_t i = 0; i < saves.size(); ++i) {
      writes[i].body = &bodies[i];
      writes[i].work = works[i].get();
      batch.push_back(&writes[i]);
    }
    impl_->RunBatch(batch);
    std::vector<Status> results;
    for (const internal::PendingWrite& w : writes) results.push_back(w.result);
    return results;
  }

  // What Save says alone, in a store of its own, for a save that fails: the message the batch
  // must reproduce.
  Status SaveAlone(const Lease& lease, const Checkpoint& checkpoint) {
    PostgresStoreOptions options = options_;
    options.max_write_batch = 1;
    Result<std::unique_ptr<CheckpointStore>> other = OpenPostgresStore(options, clock_);
    EXPECT_THAT(other, IsOk());
    return other.ok() ? (*other)->Save(lease, checkpoint, {}) : other.status();
  }

  std::unique_ptr<RawConn> raw_;  // set once a server is known to be there
  std::string schema_;
  ManualClock clock_;
  PostgresStoreOptions options_;
  std::unique_ptr<CheckpointStore> store_;
  internal::PgStore* impl_ = nullptr;
};

TEST_F(PostgresGroupCommitTest, FencedSavesFailAloneAndTheRestOfTheBatchCommits) {
  Lease r1 = MakeClaimedRun("r1");
  Lease stale = MakeClaimedRun("r2");
  MEND_ASSERT_OK(store_->Release(stale));
  Lease r2 = store_->Claim("r2", options_.local, hours(1)).value();  // epoch 2: `stale` is 1
  Lease r3 = MakeClaimedRun("r3");
  Lease expiring = MakeClaimedRun("r4", seconds(10));
  clock_.Advance(seconds(20));
  internal::PgStore::WriteStats before = impl_->write_stats();

  std::vector<Status> results = RunSaveBatch({
      {r1, Cp(1, "r1-a"), {}},
      {stale, Cp(1, "r2-stale"), {}},
      {r3, Cp(1, "r3-a"), {}},
      {expiring, Cp(1, "r4-late"), {}},
      {r1, Cp(2, "r1-b"), {}},
      {r3, Cp(5, "r3-skip"), {}},  // not r3's next step
      {r2, Cp(1, "r2-a"), {}},
  });
  ASSERT_EQ(results.size(), 7u);
  EXPECT_THAT(results[0], IsOk());
  EXPECT_THAT(results[1], StatusIs(StatusCode::kAborted));
  EXPECT_EQ(results[1].message(), "lease on run \"r2\" is stale (epoch 1, current 2)");
  EXPECT_THAT(results[2], IsOk());
  EXPECT_THAT(results[3], StatusIs(StatusCode::kAborted));
  EXPECT_EQ(results[3].message(),
            "lease on run \"r4\" expired at " + FormatRfc3339(expiring.expires_at));
  EXPECT_THAT(results[4], IsOk());
  EXPECT_THAT(results[5], StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_EQ(results[5].message(), "run \"r3\" is at step 1; cannot save step 5");
  EXPECT_THAT(results[6], IsOk());
  // The batch's messages are those of a save alone.
  EXPECT_EQ(SaveAlone(stale, Cp(2, "again")).message(),
            "lease on run \"r2\" is stale (epoch 1, current 2)");
  EXPECT_EQ(SaveAlone(expiring, Cp(1, "again")).message(), results[3].message());

  internal::PgStore::WriteStats after = impl_->write_stats();
  EXPECT_EQ(after.writes - before.writes, 7);
  EXPECT_EQ(after.transactions - before.transactions, 1);  // r1, r2 (stale), r3 and r4 in one
  EXPECT_EQ(after.rollbacks - before.rollbacks, 0);
  // Alone: the two fenced saves, and the later saves of r1, r2 and r3.
  EXPECT_EQ(after.fallbacks - before.fallbacks, 5);

  Result<RunSnapshot> s1 = store_->Load("r1");
  MEND_ASSERT_OK(s1);
  EXPECT_EQ(s1->step, 2);
  EXPECT_THAT(s1->messages, ElementsAre("r1-a", "r1-b"));
  EXPECT_EQ(s1->state, "state2");
  EXPECT_THAT(store_->Load("r2")->messages, ElementsAre("r2-a"));
  EXPECT_THAT(store_->Load("r3")->messages, ElementsAre("r3-a"));
  EXPECT_EQ(store_->GetRun("r4")->step, 0);
  EXPECT_EQ(store_->History("r3")->size(), 1u);
}

TEST_F(PostgresGroupCommitTest, AStatementThatFailsRollsTheBatchBackAndEverySaveRunsAlone) {
  Lease r1 = MakeClaimedRun("r1");
  Lease blocked = MakeClaimedRun("blocked");
  Lease r3 = MakeClaimedRun("r3");
  // A row in the way: the one-statement save of "blocked" fails on its checkpoint, which aborts
  // the batch's transaction.
  SchemaExec(
      "INSERT INTO checkpoints (run_id, step, message_count, state, crc, created_at) "
      "VALUES ('blocked', 1, 0, 'x', 0, 0)");
  internal::PgStore::WriteStats before = impl_->write_stats();
  std::vector<Status> results = RunSaveBatch({
      {r1, Cp(1, "r1-a"), {}},
      {blocked, Cp(1, "lost"), {}},
      {r3, Cp(1, "r3-a"), {}},
      {r1, Cp(2, "r1-b"), {}},
  });
  EXPECT_THAT(results, ElementsAre(IsOk(), StatusIs(StatusCode::kAlreadyExists), IsOk(), IsOk()));
  internal::PgStore::WriteStats after = impl_->write_stats();
  EXPECT_EQ(after.transactions - before.transactions, 1);
  EXPECT_EQ(after.rollbacks - before.rollbacks, 1);
  EXPECT_EQ(after.fallbacks - before.fallbacks, 4);

  EXPECT_THAT(store_->Load("r1")->messages, ElementsAre("r1-a", "r1-b"));
  EXPECT_THAT(store_->Load("r3")->messages, ElementsAre("r3-a"));
  EXPECT_EQ(store_->GetRun("blocked")->step, 0);
  // The connection the failed transaction ran on is rolled back and serves the next batch.
  SchemaExec("DELETE FROM checkpoints WHERE run_id = 'blocked'");
  EXPECT_THAT(RunSaveBatch({{blocked, Cp(1, "m1"), {}}, {r3, Cp(2, "r3-b"), {}}}),
              ElementsAre(IsOk(), IsOk()));
  EXPECT_THAT(store_->Load("blocked")->messages, ElementsAre("m1"));
  EXPECT_EQ(impl_->write_stats().rollbacks, after.rollbacks);
}

TEST_F(PostgresGroupCommitTest, SavesOfOneRunKeepTheirOrderAroundAFailedOne) {
  Lease r1 = MakeClaimedRun("r1");
  std::vector<Status> results = RunSaveBatch({
      {r1, Cp(1, "m1"), {}},
      {r1, Cp(3, "too-early"), {}},
      {r1, Cp(2, "m2"), {}},
      {r1, Cp(3, "m3"), {}},
  });
  EXPECT_THAT(results,
              ElementsAre(IsOk(), StatusIs(StatusCode::kFailedPrecondition), IsOk(), IsOk()));
  EXPECT_EQ(results[1].message(), "run \"r1\" is at step 1; cannot save step 3");
  Result<RunSnapshot> snap = store_->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->step, 3);
  EXPECT_THAT(snap->messages, ElementsAre("m1", "m2", "m3"));
  EXPECT_EQ(store_->Load("r1", 2)->messages.size(), 2u);

  // A save that fails first, then the save of the step it named: the failure reports the run as
  // it was before the batch, not after the save behind it.
  results = RunSaveBatch({{r1, Cp(3, "again"), {}}, {r1, Cp(4, "m4"), {}}});
  EXPECT_THAT(results, ElementsAre(StatusIs(StatusCode::kFailedPrecondition), IsOk()));
  EXPECT_EQ(results[0].message(), "run \"r1\" is at step 3; cannot save step 3");
}

TEST_F(PostgresGroupCommitTest, ASaveWithAnUpdateKeepsItsPlaceInTheBatch) {
  Lease r1 = MakeClaimedRun("r1");
  Lease r2 = MakeClaimedRun("r2");
  Lease r3 = MakeClaimedRun("r3");
  RunUpdate completed;
  completed.status = RunStatus::kCompleted;
  internal::PgStore::WriteStats before = impl_->write_stats();
  std::vector<Status> results = RunSaveBatch({
      {r1, Cp(1, "r1-a"), {}},
      {r2, Cp(1, "r2-a"), Waiting("approval")},
      // Behind a save with an update of its run: applied after it, so it finds step 1.
      {r2, Cp(2, "r2-b"), {}},
      {r3, Cp(1, "r3-a"), completed},
      // The run is completed by the save before it.
      {r3, Cp(2, "r3-late"), {}},
      {r1, Cp(2, "r1-b"), Waiting("input")},
  });
  EXPECT_THAT(results, ElementsAre(IsOk(), IsOk(), IsOk(), IsOk(),
                                   StatusIs(StatusCode::kFailedPrecondition), IsOk()));
  EXPECT_EQ(results[4].message(), "run \"r3\" is completed");
  internal::PgStore::WriteStats after = impl_->write_stats();
  EXPECT_EQ(after.transactions - before.transactions, 1);  // r1's first save
  EXPECT_EQ(after.fallbacks - before.fallbacks, 5);

  Result<RunSnapshot> s2 = store_->Load("r2");
  MEND_ASSERT_OK(s2);
  EXPECT_EQ(s2->step, 2);
  EXPECT_THAT(s2->messages, ElementsAre("r2-a", "r2-b"));
  EXPECT_EQ(s2->run.waiting, "approval");
  EXPECT_EQ(store_->GetRun("r3")->status, RunStatus::kCompleted);
  EXPECT_EQ(store_->GetRun("r3")->step, 1);
  EXPECT_EQ(store_->GetRun("r1")->waiting, "input");
  EXPECT_THAT(store_->Load("r1")->messages, ElementsAre("r1-a", "r1-b"));
}

TEST_F(PostgresGroupCommitTest, AFailedCommitFailsEverySaveOfTheBatch) {
  Lease r1 = MakeClaimedRun("r1");
  Lease poison = MakeClaimedRun("poison");
  // A checkpoint of run "poison" leaves a deferred foreign-key violation, which only COMMIT
  // detects: every statement succeeds and the COMMIT fails.
  SchemaExec(
      "CREATE TABLE dangling (run_id TEXT REFERENCES runs (id) DEFERRABLE INITIALLY DEFERRED);"
      "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS "
      "$$ BEGIN INSERT INTO dangling VALUES ('no-such-run'); RETURN NEW; END $$;"
      "CREATE TRIGGER poison_commit AFTER INSERT ON checkpoints FOR EACH ROW "
      "WHEN (NEW.run_id = 'poison') EXECUTE FUNCTION poison();");
  internal::PgStore::WriteStats before = impl_->write_stats();
  std::vector<Status> results = RunSaveBatch({
      {r1, Cp(1, "m1"), {}},
      {poison, Cp(1, "p1"), {}},
      {r1, Cp(2, "m2"), {}},
  });
  // A COMMIT's failure is every save's; none is run again, not even the one that had not run.
  EXPECT_THAT(results, ElementsAre(StatusIs(StatusCode::kInternal), StatusIs(StatusCode::kInternal),
                                   StatusIs(StatusCode::kInternal)));
  EXPECT_EQ(impl_->write_stats().fallbacks, before.fallbacks);
  // Nothing of the batch was written, and the store keeps working.
  EXPECT_EQ(store_->GetRun("r1")->step, 0);
  MEND_EXPECT_OK(store_->Save(r1, Cp(1, "again"), {}));
  EXPECT_THAT(store_->Load("r1")->messages, ElementsAre("again"));
  EXPECT_EQ(store_->GetRun("poison")->step, 0);
}

TEST_F(PostgresGroupCommitTest, SavesQueuedBehindABatchShareOneTransaction) {
  constexpr int kWriters = 12;
  options_.pool_size = 1;  // one connection: one batch at a time
  Open();
  Lease held = MakeClaimedRun("held");
  std::vector<Lease> leases;
  for (int i = 0; i < kWriters; ++i) leases.push_back(MakeClaimedRun("run-" + std::to_string(i)));
  internal::PgStore::WriteStats before = impl_->write_stats();

  // Another transaction holds run "held"'s row: the first batch, its save alone, waits on the
  // server while every other save queues behind it.
  RawConn locker;
  locker.Exec("BEGIN");
  locker.Exec("SELECT 1 FROM \"" + schema_ + "\".runs WHERE id = 'held' FOR UPDATE");
  Status held_result;
  std::thread first([&] { held_result = store_->Save(held, Cp(1, "held"), {}); });
  AwaitSaveWaitingForLock(*raw_, schema_);
  std::vector<std::thread> writers;
  std::vector<Status> results(kWriters);
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([&, i] { results[i] = store_->Save(leases[i], Cp(1, "m"), {}); });
  }
  while (impl_->QueuedSaves() != kWriters) std::this_thread::yield();
  locker.Exec("COMMIT");
  first.join();
  for (std::thread& t : writers) t.join();

  MEND_EXPECT_OK(held_result);
  for (const Status& s : results) EXPECT_THAT(s, IsOk());
  internal::PgStore::WriteStats after = impl_->write_stats();
  EXPECT_EQ(after.writes - before.writes, kWriters + 1);
  EXPECT_EQ(after.transactions - before.transactions, 2);
  EXPECT_EQ(after.fallbacks - before.fallbacks, 0);
  for (int i = 0; i < kWriters; ++i) {
    EXPECT_THAT(store_->Load("run-" + std::to_string(i))->messages, ElementsAre("m"));
  }
}

TEST_F(PostgresGroupCommitTest, ASecondBatchCommitsWhileTheFirstWaits) {
  Lease held = MakeClaimedRun("held");
  Lease r1 = MakeClaimedRun("r1");
  RawConn locker;
  locker.Exec("BEGIN");
  locker.Exec("SELECT 1 FROM \"" + schema_ + "\".runs WHERE id = 'held' FOR UPDATE");
  Status held_result;
  std::thread first([&] { held_result = store_->Save(held, Cp(1, "held"), {}); });
  AwaitSaveWaitingForLock(*raw_, schema_);
  // The pool has a connection for a second batch: this save does not wait for the first.
  MEND_EXPECT_OK(store_->Save(r1, Cp(1, "r1-a"), {}));
  EXPECT_EQ(store_->GetRun("held")->step, 0);
  locker.Exec("COMMIT");
  first.join();
  MEND_EXPECT_OK(held_result);
  EXPECT_EQ(impl_->write_stats().transactions, 2);
  EXPECT_THAT(store_->Load("held")->messages, ElementsAre("held"));
}

TEST_F(PostgresGroupCommitTest, ConcurrentSavesOnManyRunsAreAllDurable) {
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
  internal::PgStore::WriteStats stats = impl_->write_stats();
  EXPECT_EQ(stats.writes, kRuns * kSteps);
  EXPECT_EQ(stats.fallbacks, 0);
  EXPECT_LE(stats.transactions, stats.writes);
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

TEST_F(PostgresGroupCommitTest, MessagesOfEverySizeAndCountRoundTrip) {
  Lease r1 = MakeClaimedRun("r1");
  Checkpoint none;
  none.step = 1;
  none.state = "";
  std::string binary;
  for (int i = 0; i < 256; ++i) binary.push_back(static_cast<char>(i));
  Checkpoint many;
  many.step = 2;
  many.new_messages = {"", binary, std::string(100000, 'x'), "{\"a\":\"b,c\"}", "\\\""};
  many.state = binary;
  MEND_ASSERT_OK(store_->Save(r1, none, {}));
  MEND_ASSERT_OK(store_->Save(r1, many, {}));
  EXPECT_EQ(impl_->write_stats().fallbacks, 0);
  Result<RunSnapshot> snap = store_->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->messages, many.new_messages);
  EXPECT_EQ(snap->state, binary);
  EXPECT_EQ(store_->Load("r1", 1)->state, "");
}

TEST_F(PostgresGroupCommitTest, AConnectionTheServerEndedWhileIdleIsReplacedBeforeSending) {
  options_.pool_size = 1;
  Open();
  Lease r1 = MakeClaimedRun("r1");
  MEND_ASSERT_OK(store_->Save(r1, Cp(1, "m1"), {}));
  // The server ends the store's one connection (as a restart would) and its backend exits.
  raw_->Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" +
             schema_ + "'");
  while (raw_->Exec("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + schema_ +
                    "'") != "0") {
    std::this_thread::yield();
  }
  internal::PgStore::WriteStats before = impl_->write_stats();
  MEND_EXPECT_OK(store_->Save(r1, Cp(2, "m2"), {}));
  internal::PgStore::WriteStats after = impl_->write_stats();
  EXPECT_EQ(after.transactions - before.transactions, 1);
  EXPECT_EQ(after.fallbacks - before.fallbacks, 0);  // sent once, on a new connection
  EXPECT_THAT(store_->Load("r1")->messages, ElementsAre("m1", "m2"));
}

TEST(PostgresGroupCommitOptionsTest, MaxWriteBatchMustBePositive) {
  ManualClock clock;
  PostgresStoreOptions options;
  options.url = "postgres://127.0.0.1:1/mend";
  options.max_write_batch = 0;
  EXPECT_THAT(OpenPostgresStore(options, clock), StatusIs(StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace mend::store
