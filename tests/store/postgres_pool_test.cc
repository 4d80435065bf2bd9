// The PostgreSQL connection layer's pools and budget (include/mend/db/pg_conn.h): callers served
// in the order they asked, one budget of connections across pools, connections handed between
// pools with their sessions reset, and statements prepared again after a pooler lost them.
//
// Needs a server: MEND_TEST_POSTGRES_URL (scripts/with_postgres); skipped without one. Waiting
// is observed through the pools' and budget's counts (no sleeps): a test that needs a caller to
// be waiting spins until the count says so.

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mend/db/pg_conn.h"
#include "tests/support/status_matchers.h"

namespace mend::db {
namespace {

using ::mend::testing::IsOk;
using std::chrono::seconds;

constexpr char kSkipReason[] = "MEND_TEST_POSTGRES_URL is not set (see scripts/with_postgres)";

std::string ServerUrl() {
  const char* url = std::getenv("MEND_TEST_POSTGRES_URL");
  return url == nullptr ? "" : url;
}

// A setup that names the pool's connections, so a test can tell which pool set one up.
std::function<Status(PgConn&)> NameSessions(const std::string& name) {
  return [name](PgConn& conn) {
    return conn.Exec("SELECT set_config('application_name', $1, false)", {PgParam::Text(name)})
        .status();
  };
}

std::string Show(PgConn& conn, const char* sql) {
  Result<PgResult> res = conn.Exec(sql);
  if (!res.ok() || res->rows() != 1) return "<error>";
  return res->Text(0, 0);
}

// Until `done` holds (another thread got where the test needs it).
template <typename F>
void SpinUntil(F done) {
  while (!done()) std::this_thread::yield();
}

class PostgresPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (ServerUrl().empty()) GTEST_SKIP() << kSkipReason;
  }
};

TEST_F(PostgresPoolTest, ABudgetCapsTheConnectionsOfEveryPool) {
  auto budget = std::make_shared<PgBudget>(2);
  PgPool a(ServerUrl(), seconds(5), 4, NameSessions("pool_a"), budget);
  PgPool b(ServerUrl(), seconds(5), 4, NameSessions("pool_b"), budget);
  std::optional<PgPool::Handle> first, second;
  {
    Result<PgPool::Handle> h = a.Acquire();
    ASSERT_THAT(h.status(), IsOk());
    first.emplace(std::move(h).value());
  }
  {
    Result<PgPool::Handle> h = a.Acquire();
    ASSERT_THAT(h.status(), IsOk());
    second.emplace(std::move(h).value());
  }
  EXPECT_EQ(budget->held(), 2);

  std::atomic<bool> got{false};
  std::string name;
  std::thread waiter([&] {
    Result<PgPool::Handle> h = b.Acquire();
    ASSERT_THAT(h.status(), IsOk());
    name = Show(**h, "SHOW application_name");
    got = true;
  });
  SpinUntil([&] { return budget->waiting() == 1; });
  EXPECT_FALSE(got.load());
  EXPECT_EQ(budget->held(), 2);
  // The connection A returns goes to B's caller, set up as B's.
  first.reset();
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(name, "pool_b");
  EXPECT_EQ(budget->held(), 2);
}

TEST_F(PostgresPoolTest, AnIdleConnectionOfAnotherPoolIsHandedOverWithItsSessionReset) {
  auto budget = std::make_shared<PgBudget>(1);
  PgPool a(ServerUrl(), seconds(5), 2, NameSessions("pool_a"), budget);
  PgPool b(ServerUrl(), seconds(5), 2, NameSessions("pool_b"), budget);
  std::string pid;
  {
    Result<PgPool::Handle> h = a.Acquire();
    ASSERT_THAT(h.status(), IsOk());
    pid = Show(**h, "SELECT pg_backend_pid()::text");
    // What A's user left in the session: a setting, a temporary table, a prepared statement.
    ASSERT_THAT((*h)->Run("SET statement_timeout = '123s'"), IsOk());
    ASSERT_THAT((*h)->Run("CREATE TEMPORARY TABLE left_behind (x int)"), IsOk());
    ASSERT_THAT((*h)->Exec("SELECT 1", {}, PgConn::Plan::kPrepared).status(), IsOk());
  }
  const int64_t open_before = ProcessPgActivity().connections_open;
  Result<PgPool::Handle> h = b.Acquire();
  ASSERT_THAT(h.status(), IsOk());
  // The same server session, not a new connection.
  EXPECT_EQ(Show(**h, "SELECT pg_backend_pid()::text"), pid);
  EXPECT_EQ(ProcessPgActivity().connections_open, open_before);
  EXPECT_EQ(Show(**h, "SHOW application_name"), "pool_b");
  EXPECT_NE(Show(**h, "SHOW statement_timeout"), "123s");
  EXPECT_EQ(Show(**h, "SELECT count(*)::text FROM pg_tables WHERE tablename = 'left_behind'"), "0");
  // Its prepared statements went with the session; new ones are prepared on demand.
  EXPECT_THAT((*h)->Exec("SELECT 1", {}, PgConn::Plan::kPrepared).status(), IsOk());
}

TEST_F(PostgresPoolTest, BudgetWaitersAreServedInTheOrderTheyAsked) {
  auto budget = std::make_shared<PgBudget>(1);
  PgPool holder(ServerUrl(), seconds(5), 1, NameSessions("holder"), budget);
  std::vector<std::unique_ptr<PgPool>> pools;
  for (int i = 0; i < 4; ++i) {
    pools.push_back(std::make_unique<PgPool>(ServerUrl(), seconds(5), 1,
                                             NameSessions("p" + std::to_string(i)), budget));
  }
  std::optional<PgPool::Handle> held;
  {
    Result<PgPool::Handle> h = holder.Acquire();
    ASSERT_THAT(h.status(), IsOk());
    held.emplace(std::move(h).value());
  }
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      Result<PgPool::Handle> h = pools[static_cast<size_t>(i)]->Acquire();
      ASSERT_THAT(h.status(), IsOk());
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
    });
    // The next one asks only once this one waits.
    SpinUntil([&] { return budget->waiting() == i + 1; });
  }
  held.reset();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_LE(budget->held(), 1);
}

TEST_F(PostgresPoolTest, PoolCallersAreServedInTheOrderTheyAsked) {
  PgPool pool(ServerUrl(), seconds(5), 1, NameSessions("fifo"));
  std::optional<PgPool::Handle> held;
  {
    Result<PgPool::Handle> h = pool.Acquire();
    ASSERT_THAT(h.status(), IsOk());
    held.emplace(std::move(h).value());
  }
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 5; ++i) {
    threads.emplace_back([&, i] {
      Result<PgPool::Handle> h = pool.Acquire();
      ASSERT_THAT(h.status(), IsOk());
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
    });
    SpinUntil([&] { return pool.waiting() == i + 1; });
  }
  const int64_t waits_before = ProcessPgActivity().waits;
  held.reset();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_GE(ProcessPgActivity().waits - waits_before, 5);
}

TEST_F(PostgresPoolTest, AConnectionThatFailsGivesItsPlaceInTheBudgetBack) {
  auto budget = std::make_shared<PgBudget>(1);
  {
    // Nothing listens on port 1.
    PgPool broken("postgresql://127.0.0.1:1/none", seconds(1), 1, NameSessions("broken"), budget);
    EXPECT_FALSE(broken.Acquire().ok());
    EXPECT_EQ(budget->held(), 0);
    PgPool refused(
        ServerUrl(), seconds(5), 1, [](PgConn&) { return InternalError("setup refused"); }, budget);
    EXPECT_FALSE(refused.Acquire().ok());
    EXPECT_EQ(budget->held(), 0);
  }
  PgPool fine(ServerUrl(), seconds(5), 1, NameSessions("fine"), budget);
  EXPECT_THAT(fine.Acquire().status(), IsOk());
}

TEST_F(PostgresPoolTest, APoolThatGoesAwayGivesItsIdleConnectionsBack) {
  auto budget = std::make_shared<PgBudget>(1);
  {
    PgPool first(ServerUrl(), seconds(5), 1, NameSessions("first"), budget);
    ASSERT_THAT(first.Acquire().status(), IsOk());
    EXPECT_EQ(budget->held(), 1);  // idle in `first`
  }
  EXPECT_EQ(budget->held(), 0);
  PgPool second(ServerUrl(), seconds(5), 1, NameSessions("second"), budget);
  Result<PgPool::Handle> h = second.Acquire();
  ASSERT_THAT(h.status(), IsOk());
  EXPECT_EQ(Show(**h, "SHOW application_name"), "second");
}

// What a pooler in transaction mode (or its DISCARD ALL between clients) does to a session's
// prepared statements, done on the session itself.
TEST_F(PostgresPoolTest, AStatementTheServerLostIsPreparedAgain) {
  Result<std::unique_ptr<PgConn>> conn = PgConn::Connect(ServerUrl(), seconds(5));
  ASSERT_THAT(conn.status(), IsOk());
  const char* sql = "SELECT $1::int + 1";
  Result<PgResult> first = (*conn)->Exec(sql, {PgParam::Int(1)}, PgConn::Plan::kPrepared);
  ASSERT_THAT(first.status(), IsOk());
  ASSERT_THAT((*conn)->Run("DEALLOCATE ALL"), IsOk());
  const int64_t before = ProcessPgActivity().statements_reprepared;
  Result<PgResult> again = (*conn)->Exec(sql, {PgParam::Int(2)}, PgConn::Plan::kPrepared);
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(again->Text(0, 0), "3");
  EXPECT_EQ(ProcessPgActivity().statements_reprepared - before, 1);
}

TEST_F(PostgresPoolTest, ATransactionThatMetALostStatementRunsAgain) {
  PgPool pool(ServerUrl(), seconds(5), 1, NameSessions("tx"));
  const char* sql = "SELECT $1::int * 2";
  {
    Result<PgPool::Handle> h = pool.Acquire();
    ASSERT_THAT(h.status(), IsOk());
    ASSERT_THAT((*h)->Exec(sql, {PgParam::Int(1)}, PgConn::Plan::kPrepared).status(), IsOk());
    ASSERT_THAT((*h)->Run("DEALLOCATE ALL"), IsOk());
  }
  int calls = 0;
  std::string answer;
  Status s = PgTransact(pool, "BEGIN", [&](PgConn& conn) -> Status {
    ++calls;
    MEND_ASSIGN_OR_RETURN(PgResult res,
                          conn.Exec(sql, {PgParam::Int(21)}, PgConn::Plan::kPrepared));
    answer = res.Text(0, 0);
    return OkStatus();
  });
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(answer, "42");
}

TEST_F(PostgresPoolTest, APipelineThatMetALostStatementWorksOnceMore) {
  Result<std::unique_ptr<PgConn>> conn = PgConn::Connect(ServerUrl(), seconds(5));
  ASSERT_THAT(conn.status(), IsOk());
  PgConn& c = **conn;
  const char* sql = "SELECT $1::int - 1";
  ASSERT_THAT(c.Prepare(sql, 1), IsOk());
  ASSERT_THAT(c.Run("DEALLOCATE ALL"), IsOk());
  const auto run_pipeline = [&]() -> Result<std::string> {
    MEND_RETURN_IF_ERROR(c.Prepare(sql, 1));
    MEND_RETURN_IF_ERROR(c.EnterPipeline());
    MEND_RETURN_IF_ERROR(c.Send(sql, {PgParam::Int(10)}, PgConn::Plan::kPrepared));
    MEND_RETURN_IF_ERROR(c.Sync());
    Result<PgResult> res = c.Receive(sql);
    MEND_RETURN_IF_ERROR(c.AwaitSync());
    MEND_RETURN_IF_ERROR(c.ExitPipeline());
    MEND_RETURN_IF_ERROR(res.status());
    return res->Text(0, 0);
  };
  Result<std::string> lost = run_pipeline();
  EXPECT_TRUE(IsStatementMissing(lost.status())) << lost.status();
  Result<std::string> again = run_pipeline();
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(*again, "9");
}

TEST_F(PostgresPoolTest, StatementNamesAreTheConnectionsOwn) {
  // Two connections never give a statement the same name: behind a pooler, one session may see
  // both connections' statements.
  Result<std::unique_ptr<PgConn>> one = PgConn::Connect(ServerUrl(), seconds(5));
  Result<std::unique_ptr<PgConn>> two = PgConn::Connect(ServerUrl(), seconds(5));
  ASSERT_THAT(one.status(), IsOk());
  ASSERT_THAT(two.status(), IsOk());
  ASSERT_THAT((*one)->Prepare("SELECT 1", 0), IsOk());
  ASSERT_THAT((*two)->Prepare("SELECT 1", 0), IsOk());
  EXPECT_NE(Show(**one, "SELECT string_agg(name, ',') FROM pg_prepared_statements"),
            Show(**two, "SELECT string_agg(name, ',') FROM pg_prepared_statements"));
}

TEST_F(PostgresPoolTest, RoundTripsAndErrorsAreCounted) {
  Result<std::unique_ptr<PgConn>> conn = PgConn::Connect(ServerUrl(), seconds(5));
  ASSERT_THAT(conn.status(), IsOk());
  const PgActivity before = ProcessPgActivity();
  ASSERT_THAT((*conn)->Exec("SELECT 1").status(), IsOk());
  EXPECT_FALSE((*conn)->Exec("SELECT * FROM no_such_table_here").ok());
  const PgActivity after = ProcessPgActivity();
  // Other tests of this process may run at once: at least what this one did.
  EXPECT_GE(after.round_trips - before.round_trips, 2);
  EXPECT_GE(after.errors - before.errors, 1);
}

}  // namespace
}  // namespace mend::db
