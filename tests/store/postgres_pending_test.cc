// What only the PostgreSQL store shows of ListPending: the version 2 migration of an existing
// schema, and ids ordered as bytes whatever the collation of the `id` column.
//
// Needs a server named by MEND_TEST_POSTGRES_URL (scripts/with_postgres); skipped without one.

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/store/postgres_store.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::IsOk;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ServerUrl() {
  const char* url = std::getenv("MEND_TEST_POSTGRES_URL");
  return url == nullptr ? "" : url;
}

// The first column of every row `sql` returns, on a connection of its own.
std::vector<std::string> RawQuery(const std::string& sql) {
  std::vector<std::string> values;
  PGconn* conn = PQconnectdb(ServerUrl().c_str());
  EXPECT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PGresult* res = PQexec(conn, sql.c_str());
  ExecStatusType status = PQresultStatus(res);
  EXPECT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) << PQerrorMessage(conn);
  for (int row = 0; status == PGRES_TUPLES_OK && row < PQntuples(res); ++row) {
    values.emplace_back(PQgetvalue(res, row, 0));
  }
  PQclear(res);
  PQfinish(conn);
  return values;
}

class PostgresPendingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (ServerUrl().empty()) {
      GTEST_SKIP() << "MEND_TEST_POSTGRES_URL is not set (see scripts/with_postgres)";
    }
    static std::atomic<int> next{0};
    schema_ = "mend_pending_" + std::to_string(getpid()) + "_" + std::to_string(next++);
    RawQuery("SET client_min_messages TO warning; DROP SCHEMA IF EXISTS \"" + schema_ +
             "\" CASCADE");
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override {
    store_.reset();
    if (!schema_.empty())
      RawQuery("SET client_min_messages TO warning; DROP SCHEMA IF EXISTS \"" + schema_ +
               "\" CASCADE");
  }

  std::unique_ptr<CheckpointStore> Open() {
    PostgresStoreOptions options;
    options.url = ServerUrl();
    options.schema = schema_;
    Result<std::unique_ptr<CheckpointStore>> store = OpenPostgresStore(options, clock_);
    EXPECT_THAT(store, IsOk());
    return store.ok() ? std::move(store).value() : nullptr;
  }

  std::vector<std::string> SchemaQuery(const std::string& sql) {
    return RawQuery("SET search_path TO \"" + schema_ + "\"; " + sql);
  }

  void Make(const std::string& id, const std::string& agent, RunStatus status) {
    RunRecord run;
    run.id = id;
    run.agent = agent;
    MEND_ASSERT_OK(store_->CreateRun(run));
    RunUpdate update;
    update.status = status;
    MEND_ASSERT_OK(store_->UpdateUnleased(id, update));
  }

  std::vector<std::string> PageIds(const PendingQuery& query) {
    std::vector<std::string> ids;
    Result<PendingPage> page = store_->ListPending(query);
    EXPECT_THAT(page, IsOk());
    if (page.ok()) {
      for (const RunRecord& r : page->runs) ids.push_back(r.id);
    }
    return ids;
  }

  ManualClock clock_;
  std::string schema_;
  std::unique_ptr<CheckpointStore> store_;
};

TEST_F(PostgresPendingTest, AVersion1SchemaIsMigrated) {
  Make("r1", "alpha", RunStatus::kFailed);
  clock_.Advance(seconds(1));
  Make("r2", "beta", RunStatus::kRunning);
  store_.reset();
  // What version 1 created: runs_unfinished and runs_created in the database's collation, no
  // pending or completed indexes.
  SchemaQuery(
      "DROP INDEX runs_pending_status; DROP INDEX runs_pending_agent; DROP INDEX runs_unfinished; "
      "DROP INDEX runs_completed_status; DROP INDEX runs_completed_agent; "
      "DROP INDEX runs_created; CREATE INDEX runs_created ON runs (created_at, id); "
      "CREATE INDEX runs_unfinished ON runs (created_at, id) WHERE status <> 'completed'; "
      "UPDATE meta SET value = '1' WHERE key = 'store.schema_version'");

  for (int open = 0; open < 2; ++open) {  // the second open finds nothing to do
    store_ = Open();
    ASSERT_NE(store_, nullptr);
    EXPECT_THAT(SchemaQuery("SELECT value FROM meta WHERE key = 'store.schema_version'"),
                ElementsAre("4"));
    EXPECT_THAT(
        SchemaQuery("SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND "
                    "indexname IN ('runs_unfinished', 'runs_pending_status', "
                    "'runs_pending_agent', 'runs_created', 'runs_completed_status', "
                    "'runs_completed_agent') ORDER BY indexname"),
        ElementsAre(HasSubstr("(agent, status, created_at, id COLLATE \"C\")"),
                    HasSubstr("(status, created_at, id COLLATE \"C\")"),
                    HasSubstr("(created_at, id COLLATE \"C\")"),
                    HasSubstr("(agent, status, created_at, id COLLATE \"C\")"),
                    HasSubstr("(status, created_at, id COLLATE \"C\")"),
                    HasSubstr("(created_at, id COLLATE \"C\")")));
    PendingQuery alpha;
    alpha.agent = "alpha";
    EXPECT_THAT(PageIds(alpha), ElementsAre("r1"));
    EXPECT_THAT(PageIds(PendingQuery{}), ElementsAre("r2", "r1"));
    PendingQuery every;
    every.scope = RunScope::kAll;
    EXPECT_THAT(PageIds(every), ElementsAre("r2", "r1"));
    store_.reset();
  }
}

TEST_F(PostgresPendingTest, IdsOrderAsBytesWhateverTheColumnCollation) {
  if (RawQuery("SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu'").empty()) {
    GTEST_SKIP() << "the server has no ICU collation to compare with";
  }
  // In the ICU root collation a1 < b1 < B1; as bytes B1 < a1 < b1.
  SchemaQuery("ALTER TABLE runs ALTER COLUMN id TYPE TEXT COLLATE \"und-x-icu\"");
  for (const char* id : {"a1", "B1", "b1"}) Make(id, "alpha", RunStatus::kRunning);
  PendingQuery query;
  query.limit = 1;
  std::vector<std::string> paged;
  for (int page = 0; page < 3; ++page) {
    Result<PendingPage> p = store_->ListPending(query);
    MEND_ASSERT_OK(p);
    ASSERT_EQ(p->runs.size(), 1u);
    paged.push_back(p->runs[0].id);
    query.before = p->next;
  }
  EXPECT_THAT(paged, ElementsAre("b1", "a1", "B1"));
  EXPECT_FALSE(query.before.has_value());
  query.limit = 20;
  query.before.reset();
  query.agent = "alpha";
  EXPECT_THAT(PageIds(query), ElementsAre("b1", "a1", "B1"));
  // Pages of every run, filtered or not, order the same way.
  query.scope = RunScope::kAll;
  EXPECT_THAT(PageIds(query), ElementsAre("b1", "a1", "B1"));
  query.agent.clear();
  query.limit = 2;
  EXPECT_THAT(PageIds(query), ElementsAre("b1", "a1"));
  Result<std::vector<RunRecord>> listed = store_->ListRuns({});
  MEND_ASSERT_OK(listed);
  std::vector<std::string> ids;
  for (const RunRecord& r : *listed) ids.push_back(r.id);
  EXPECT_THAT(ids, ElementsAre("B1", "a1", "b1"));
}

}  // namespace
}  // namespace mend::store
