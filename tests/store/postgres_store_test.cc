// The PostgreSQL store: the conformance suite plus what only a server-backed store has (several
// handles on one database, row-lock races, schema versions, connection errors).
//
// Needs a server: MEND_TEST_POSTGRES_URL names a database the tests may create schemas in
// (scripts/with_postgres starts a throwaway one). Without it every test that needs the server is
// skipped. Each store gets its own schema (PostgresStoreOptions::schema), so tests run in parallel.

#include "mend/store/postgres_store.h"

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mend/base/manual_clock.h"
#include "tests/store/checkpoint_store_conformance.h"
#include "tests/support/fake_checkpoint_store.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::store::testing::CheckpointStoreConformanceTest;
using ::mend::store::testing::StoreFactoryParam;
using ::mend::store::testing::StoreTestEnv;
using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSkipReason[] = "MEND_TEST_POSTGRES_URL is not set (see scripts/with_postgres)";

std::string ServerUrl() {
  const char* url = std::getenv("MEND_TEST_POSTGRES_URL");
  return url == nullptr ? "" : url;
}

// Runs `sql` on a connection of its own, as another program (or a disk fault) would.
void RawExec(const std::string& sql) {
  PGconn* conn = PQconnectdb(ServerUrl().c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PGresult* res = PQexec(conn, sql.c_str());
  ExecStatusType status = PQresultStatus(res);
  EXPECT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) << PQerrorMessage(conn);
  PQclear(res);
  PQfinish(conn);
}

// A schema no other test uses. A leftover of an earlier process with the same pid is dropped.
std::string FreshSchema() {
  static std::atomic<int> next{0};
  std::string name = "mend_test_" + std::to_string(getpid()) + "_" + std::to_string(next++);
  RawExec("DROP SCHEMA IF EXISTS \"" + name + "\" CASCADE");
  return name;
}

PostgresStoreOptions OptionsFor(const std::string& schema, const StoreTestEnv& env) {
  PostgresStoreOptions options;
  options.url = ServerUrl();
  options.schema = schema;
  options.local = env.local;
  options.process_alive = env.process_alive;
  return options;
}

void SkipWithoutServer() { GTEST_SKIP() << kSkipReason; }

std::unique_ptr<CheckpointStore> MakePostgresStore(const StoreTestEnv& env) {
  if (ServerUrl().empty()) {
    // Marks the test skipped; the fixture then never runs its body, but wants a store.
    SkipWithoutServer();
    return std::make_unique<::mend::testing::FakeCheckpointStore>(env.clock);
  }
  Result<std::unique_ptr<CheckpointStore>> store =
      OpenPostgresStore(OptionsFor(FreshSchema(), env), env.clock);
  EXPECT_THAT(store, IsOk());
  return store.ok() ? std::move(store).value() : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Postgres, CheckpointStoreConformanceTest,
                         ::testing::Values(StoreFactoryParam{"Postgres", MakePostgresStore}),
                         testing::StoreParamName);

// Stores on one schema of the test server, as several replicas of mend would open them.
class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (ServerUrl().empty()) GTEST_SKIP() << kSkipReason;
    schema_ = FreshSchema();
  }

  std::unique_ptr<CheckpointStore> Open(const LeaseHolder& local, size_t history_limit = 50,
                                        int pool_size = 4) {
    PostgresStoreOptions options = OptionsFor(schema_, {clock_, local, nullptr});
    options.history_limit = history_limit;
    options.pool_size = pool_size;
    Result<std::unique_ptr<CheckpointStore>> store = OpenPostgresStore(options, clock_);
    EXPECT_THAT(store, IsOk());
    return store.ok() ? std::move(store).value() : nullptr;
  }

  static void MakeRun(CheckpointStore& store, const std::string& id) {
    RunRecord run;
    run.id = id;
    run.agent = "a";
    run.agent_dir = "agents/a";
    run.task = "do it";
    MEND_ASSERT_OK(store.CreateRun(run));
  }

  static Checkpoint Cp(int64_t step, std::vector<std::string> messages, std::string state) {
    Checkpoint cp;
    cp.step = step;
    cp.new_messages = std::move(messages);
    cp.state = std::move(state);
    return cp;
  }

  // Runs `sql` with this test's schema as the search path.
  void SchemaExec(const std::string& sql) {
    RawExec("SET search_path TO \"" + schema_ + "\"; " + sql);
  }

  ManualClock clock_;
  std::string schema_;
  LeaseHolder replica_a_{"replica-a", "host-a", "boot-a", 11};
  LeaseHolder replica_b_{"replica-b", "host-b", "boot-b", 22};
};

TEST_F(PostgresStoreTest, FencingHoldsAcrossTwoReplicas) {
  std::unique_ptr<CheckpointStore> a = Open(replica_a_);
  std::unique_ptr<CheckpointStore> b = Open(replica_b_);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  MakeRun(*a, "r1");
  Result<Lease> lease_a = a->Claim("r1", replica_a_, seconds(30));
  MEND_ASSERT_OK(lease_a);
  MEND_ASSERT_OK(a->Save(*lease_a, Cp(1, {"m1"}, "s1"), {}));
  // Replica b sees a's live lease through its own handle.
  EXPECT_THAT(b->Claim("r1", replica_b_, seconds(30)), StatusIs(StatusCode::kUnavailable));

  // a pauses past its TTL; b takes over and moves the run on.
  clock_.Advance(seconds(31));
  Result<Lease> lease_b = b->Claim("r1", replica_b_, seconds(30));
  MEND_ASSERT_OK(lease_b);
  EXPECT_EQ(lease_b->epoch, lease_a->epoch + 1);
  MEND_ASSERT_OK(b->Save(*lease_b, Cp(2, {"m2"}, "s2"), {}));

  // Everything a does with its stale lease is refused, and nothing of it lands.
  EXPECT_THAT(a->Save(*lease_a, Cp(3, {"stale"}, "stale"), {}), StatusIs(StatusCode::kAborted));
  RunUpdate fail;
  fail.status = RunStatus::kFailed;
  EXPECT_THAT(a->Update(*lease_a, fail), StatusIs(StatusCode::kAborted));
  EXPECT_THAT(a->Renew(*lease_a, seconds(30)), StatusIs(StatusCode::kAborted));
  EXPECT_THAT(a->Release(*lease_a), StatusIs(StatusCode::kAborted));

  Result<RunSnapshot> snap = a->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->step, 2);
  EXPECT_EQ(snap->messages, (std::vector<std::string>{"m1", "m2"}));
  EXPECT_EQ(snap->state, "s2");
  EXPECT_EQ(snap->run.status, RunStatus::kRunning);
  ASSERT_TRUE(snap->run.lease_holder.has_value());
  EXPECT_EQ(snap->run.lease_holder->id, "replica-b");
}

TEST_F(PostgresStoreTest, ConcurrentClaimsHaveExactlyOneWinnerPerEpoch) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 5;
  // Two handles, four threads each: claims race inside one process and between "replicas".
  std::unique_ptr<CheckpointStore> a = Open(replica_a_, 50, kThreads);
  std::unique_ptr<CheckpointStore> b = Open(replica_b_, 50, kThreads);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  MakeRun(*a, "r1");
  for (int round = 1; round <= kRounds; ++round) {
    std::vector<Result<Lease>> results(kThreads, Result<Lease>(InternalError("not run")));
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        LeaseHolder holder{"claimant-" + std::to_string(i), "host-c", "boot-c", 1000 + i};
        results[i] = (i % 2 == 0 ? a : b)->Claim("r1", holder, seconds(30));
      });
    }
    for (std::thread& t : threads) t.join();
    int winners = 0;
    for (const Result<Lease>& r : results) {
      if (r.ok()) {
        ++winners;
        EXPECT_EQ(r->epoch, round);
      } else {
        EXPECT_THAT(r, StatusIs(StatusCode::kUnavailable));
      }
    }
    EXPECT_EQ(winners, 1) << "round " << round;
    Result<RunRecord> run = a->GetRun("r1");
    MEND_ASSERT_OK(run);
    EXPECT_EQ(run->epoch, round);
    clock_.Advance(seconds(31));  // the winner's lease expires; the next round races again
  }
}

TEST_F(PostgresStoreTest, ConcurrentSavesThroughASingleConnection) {
  std::unique_ptr<CheckpointStore> store = Open(replica_a_, 50, /*pool_size=*/1);
  ASSERT_NE(store, nullptr);
  constexpr int kRuns = 4;
  constexpr int kSteps = 10;
  std::vector<Lease> leases;
  for (int i = 0; i < kRuns; ++i) {
    MakeRun(*store, "r" + std::to_string(i));
    Result<Lease> lease = store->Claim("r" + std::to_string(i), replica_a_, seconds(30));
    MEND_ASSERT_OK(lease);
    leases.push_back(*lease);
  }
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < kRuns; ++i) {
    threads.emplace_back([&, i] {
      for (int step = 1; step <= kSteps; ++step) {
        if (!store->Save(leases[i], Cp(step, {"m" + std::to_string(step)}, "s"), {}).ok()) {
          failures++;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  for (int i = 0; i < kRuns; ++i) {
    Result<RunSnapshot> snap = store->Load("r" + std::to_string(i));
    MEND_ASSERT_OK(snap);
    EXPECT_EQ(snap->step, kSteps);
    EXPECT_EQ(snap->messages.size(), static_cast<size_t>(kSteps));
  }
}

// The save path prepares its statements once per connection. A save that fails after preparing
// them is rolled back; the statements stay prepared, and the next save on that connection reuses
// them.
TEST_F(PostgresStoreTest, ASaveAfterARolledBackSaveReusesTheConnection) {
  std::unique_ptr<CheckpointStore> setup = Open(replica_a_);
  ASSERT_NE(setup, nullptr);
  MakeRun(*setup, "r1");
  Result<Lease> lease = setup->Claim("r1", replica_a_, seconds(30));
  MEND_ASSERT_OK(lease);
  // A row in the way: the save inserts its message, then fails on its checkpoint.
  SchemaExec(
      "INSERT INTO checkpoints (run_id, step, message_count, state, crc, created_at) "
      "VALUES ('r1', 1, 0, 'x', 0, 0)");
  std::unique_ptr<CheckpointStore> store = Open(replica_a_, 50, /*pool_size=*/1);
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->Save(*lease, Cp(1, {"lost"}, "s1"), {}), StatusIs(StatusCode::kAlreadyExists));
  SchemaExec("DELETE FROM checkpoints WHERE run_id = 'r1'");
  MEND_ASSERT_OK(store->Save(*lease, Cp(1, {"m1"}, "s1"), {}));
  MEND_ASSERT_OK(store->Save(*lease, Cp(2, {"m2"}, "s2"), {}));
  Result<RunSnapshot> snap = store->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->step, 2);
  EXPECT_EQ(snap->messages, (std::vector<std::string>{"m1", "m2"}));
}

TEST_F(PostgresStoreTest, HistoryLimitIsHonoured) {
  std::unique_ptr<CheckpointStore> store = Open(replica_a_, /*history_limit=*/3);
  ASSERT_NE(store, nullptr);
  MakeRun(*store, "r1");
  Result<Lease> lease = store->Claim("r1", replica_a_, seconds(30));
  MEND_ASSERT_OK(lease);
  for (int step = 1; step <= 5; ++step) {
    MEND_ASSERT_OK(store->Save(*lease, Cp(step, {"m" + std::to_string(step)}, "s"), {}));
  }
  Result<std::vector<CheckpointInfo>> history = store->History("r1");
  MEND_ASSERT_OK(history);
  ASSERT_EQ(history->size(), 3u);
  EXPECT_EQ(history->front().step, 3);
  EXPECT_THAT(store->Load("r1", 2), StatusIs(StatusCode::kNotFound));
  Result<RunSnapshot> snap = store->Load("r1", 3);
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->messages, (std::vector<std::string>{"m1", "m2", "m3"}));
}

TEST_F(PostgresStoreTest, SchemasKeepStoresApart) {
  std::unique_ptr<CheckpointStore> a = Open(replica_a_);
  ASSERT_NE(a, nullptr);
  MakeRun(*a, "r1");
  schema_ = FreshSchema();
  std::unique_ptr<CheckpointStore> other = Open(replica_a_);
  ASSERT_NE(other, nullptr);
  EXPECT_THAT(other->GetRun("r1"), StatusIs(StatusCode::kNotFound));
  MEND_EXPECT_OK(a->GetRun("r1").status());
}

TEST_F(PostgresStoreTest, ANewerSchemaVersionIsRefused) {
  ASSERT_NE(Open(replica_a_), nullptr);
  SchemaExec("UPDATE meta SET value = '5' WHERE key = 'store.schema_version'");
  PostgresStoreOptions options = OptionsFor(schema_, {clock_, replica_a_, nullptr});
  Result<std::unique_ptr<CheckpointStore>> store = OpenPostgresStore(options, clock_);
  EXPECT_THAT(store,
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("newer mend (schema 5 > 4)")));

  SchemaExec("UPDATE meta SET value = 'garbage' WHERE key = 'store.schema_version'");
  EXPECT_THAT(OpenPostgresStore(options, clock_), StatusIs(StatusCode::kDataLoss));
}

TEST_F(PostgresStoreTest, ACorruptMessageIsDataLossForThatRunOnly) {
  std::unique_ptr<CheckpointStore> store = Open(replica_a_);
  ASSERT_NE(store, nullptr);
  for (const char* id : {"bad", "good"}) {
    MakeRun(*store, id);
    Result<Lease> lease = store->Claim(id, replica_a_, seconds(30));
    MEND_ASSERT_OK(lease);
    MEND_ASSERT_OK(store->Save(*lease, Cp(1, {"hello", "world"}, "state"), {}));
  }
  SchemaExec("UPDATE messages SET body = 'hellO'::bytea WHERE run_id = 'bad' AND seq = 0");
  EXPECT_THAT(store->Load("bad"), StatusIs(StatusCode::kDataLoss, HasSubstr("message 0")));
  EXPECT_THAT(store->Fork("bad", 1, "copy"), StatusIs(StatusCode::kDataLoss));
  Result<RunSnapshot> good = store->Load("good");
  MEND_ASSERT_OK(good);
  EXPECT_EQ(good->messages, (std::vector<std::string>{"hello", "world"}));

  SchemaExec("UPDATE checkpoints SET state = 'st4te'::bytea WHERE run_id = 'good'");
  EXPECT_THAT(store->Load("good"), StatusIs(StatusCode::kDataLoss, HasSubstr("checkpoint")));
  // LatestStates reads no message, so "bad" is intact there; "good"'s state is not, and only its
  // entry says so.
  Result<std::vector<CheckpointState>> states = store->LatestStates({"good", "bad"});
  MEND_ASSERT_OK(states);
  ASSERT_EQ(states->size(), 2u);
  EXPECT_EQ((*states)[0].run_id, "good");
  EXPECT_THAT((*states)[0].status, StatusIs(StatusCode::kDataLoss, HasSubstr("\"good\"")));
  EXPECT_EQ((*states)[1].run_id, "bad");
  MEND_EXPECT_OK((*states)[1].status);
  EXPECT_EQ((*states)[1].state, "state");
}

TEST_F(PostgresStoreTest, ACorruptRunRowIsListedAsFailedAndCanBeDeleted) {
  std::unique_ptr<CheckpointStore> store = Open(replica_a_);
  ASSERT_NE(store, nullptr);
  MakeRun(*store, "bad");
  MakeRun(*store, "good");
  SchemaExec("UPDATE runs SET status = 'bogus' WHERE id = 'bad'");
  EXPECT_THAT(store->GetRun("bad"), StatusIs(StatusCode::kDataLoss, HasSubstr("status")));
  EXPECT_THAT(store->Claim("bad", replica_a_, seconds(30)), StatusIs(StatusCode::kDataLoss));
  MEND_EXPECT_OK(store->GetRun("good").status());

  Result<std::vector<RunRecord>> runs = store->ListRuns({});
  MEND_ASSERT_OK(runs);
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].id, "bad");
  EXPECT_EQ((*runs)[0].status, RunStatus::kFailed);
  ASSERT_TRUE((*runs)[0].last_error.has_value());
  EXPECT_EQ((*runs)[0].last_error->code, "DATA_LOSS");
  EXPECT_FALSE((*runs)[0].last_error->retryable);
  EXPECT_EQ((*runs)[1].id, "good");

  MEND_EXPECT_OK(store->DeleteRun("bad"));
  EXPECT_THAT(store->GetRun("bad"), StatusIs(StatusCode::kNotFound));
}

// The tests below need no server.

TEST(PostgresStoreOpenTest, AnUnparsableUrlIsInvalidArgumentWithoutThePassword) {
  ManualClock clock;
  PostgresStoreOptions options;
  options.url = "postgres://mend:hunter2pw@db.example/mend?nosuchoption=1";
  Result<std::unique_ptr<CheckpointStore>> store = OpenPostgresStore(options, clock);
  EXPECT_THAT(store, StatusIs(StatusCode::kInvalidArgument, Not(HasSubstr("hunter2pw"))));

  options.url = "host=db.example password=hunter2pw bogus";
  store = OpenPostgresStore(options, clock);
  EXPECT_THAT(store, StatusIs(StatusCode::kInvalidArgument, Not(HasSubstr("hunter2pw"))));

  // libpq would only notice this port when connecting, and report it like an unreachable server.
  options.url = "postgres://mend:hunter2pw@127.0.0.1:notaport/mend";
  store = OpenPostgresStore(options, clock);
  EXPECT_THAT(store, StatusIs(StatusCode::kInvalidArgument, HasSubstr("mend:***@127.0.0.1")));

  // Not a PostgreSQL URL at all: libpq quotes it back, password included, in its message.
  options.url = "mysql://mend:pw@db/mend";
  store = OpenPostgresStore(options, clock);
  EXPECT_THAT(store, StatusIs(StatusCode::kInvalidArgument, Not(HasSubstr("mend:pw@"))));
}

TEST(PostgresStoreOpenTest, AnUnreachableServerIsUnavailableWithoutThePassword) {
  ManualClock clock;
  PostgresStoreOptions options;
  // Port 1 on loopback: nothing listens there, so the connection is refused at once.
  options.url = "postgres://mend:hunter2pw@127.0.0.1:1/mend";
  options.connect_timeout = seconds(2);
  Result<std::unique_ptr<CheckpointStore>> store = OpenPostgresStore(options, clock);
  EXPECT_THAT(store, StatusIs(StatusCode::kUnavailable, Not(HasSubstr("hunter2pw"))));
  EXPECT_THAT(store, StatusIs(StatusCode::kUnavailable, HasSubstr("mend:***@127.0.0.1:1")));
  EXPECT_THAT(store, StatusIs(StatusCode::kUnavailable, Not(HasSubstr("\n"))));
}

TEST(PostgresStoreOpenTest, InvalidOptionsAreFailedPrecondition) {
  ManualClock clock;
  PostgresStoreOptions options;
  EXPECT_THAT(OpenPostgresStore(options, clock), StatusIs(StatusCode::kFailedPrecondition));
  options.url = "postgres://127.0.0.1:1/mend";
  options.history_limit = 0;
  EXPECT_THAT(OpenPostgresStore(options, clock), StatusIs(StatusCode::kFailedPrecondition));
  options.history_limit = 50;
  options.pool_size = 0;
  EXPECT_THAT(OpenPostgresStore(options, clock), StatusIs(StatusCode::kFailedPrecondition));
}

TEST(MaskPostgresUrlTest, ReplacesThePasswordOnly) {
  EXPECT_EQ(MaskPostgresUrl("postgres://mend:s3cr%40t@db:5432/mend?sslmode=require"),
            "postgres://mend:***@db:5432/mend?sslmode=require");
  EXPECT_EQ(MaskPostgresUrl("postgresql://mend@db/mend"), "postgresql://mend@db/mend");
  EXPECT_EQ(MaskPostgresUrl("postgres://db/mend?user=u&password=pw&sslmode=disable"),
            "postgres://db/mend?user=u&password=***&sslmode=disable");
  EXPECT_EQ(MaskPostgresUrl("host=db password=pw dbname=mend"), "host=db password=*** dbname=mend");
}

}  // namespace
}  // namespace mend::store
