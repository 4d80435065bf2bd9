// `mend migrate` with the runs and long-term memory on PostgreSQL (store.url): a database the
// previous release wrote (runs schema 3, memory not on PostgreSQL yet) is brought to this build's
// versions once and keeps its run; a newer schema is refused before anything changes.
//
// Needs a server: MEND_TEST_POSTGRES_URL (scripts/with_postgres); skipped without one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/memory/postgres_fact_store.h"
#include "mend/store/postgres_store.h"
#include "tests/e2e/postgres_e2e_test.h"

namespace mend::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::chrono::seconds kBound(30);
constexpr char kRunsVersion[] = "SELECT value FROM meta WHERE key = 'store.schema_version'";
constexpr char kMemoryVersion[] = "SELECT value FROM meta WHERE key = 'memory.schema_version'";
constexpr char kHasFacts[] = "SELECT to_regclass('facts') IS NOT NULL";
constexpr char kRecoveryIndexes[] =
    "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname IN "
    "('runs_recovery', 'runs_recovery_class')";

// The first column of every row of `sql`; a failed query fails the test.
std::vector<std::string> QueryPostgres(const std::string& url, const std::string& sql) {
  std::vector<std::string> rows;
  PGconn* conn = PQconnectdb(url.c_str());
  EXPECT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PGresult* res = PQexec(conn, sql.c_str());
  EXPECT_EQ(PQresultStatus(res), PGRES_TUPLES_OK) << sql << ": " << PQerrorMessage(conn);
  for (int row = 0; row < PQntuples(res); ++row) rows.emplace_back(PQgetvalue(res, row, 0));
  PQclear(res);
  PQfinish(conn);
  return rows;
}

class PostgresMigrateTest : public PostgresE2eTest {
 protected:
  PostgresMigrateTest() : PostgresE2eTest("mend_migrate") {}

  void SetUpWithDatabase() override {
    env_.insert(env_.end(), {"MEND_STORE=" + db_.url(), "MEND_OBSERVE_ENABLED=false"});
  }

  // The runs store as the previous release left it: one run, schema version 3 (without the
  // recovery indexes of version 4), and no memory tables.
  void MakePreviousReleaseDatabase() {
    store::PostgresStoreOptions options;
    options.url = db_.url();
    auto runs = store::OpenPostgresStore(options, clock_);
    MEND_ASSERT_OK(runs);
    store::RunRecord run;
    run.id = "r-1";
    run.agent = "ops";
    run.task = "check the deploy";
    MEND_ASSERT_OK((*runs)->CreateRun(run));
    runs->reset();
    MEND_ASSERT_OK(ExecPostgres(db_.url(),
                                "DROP INDEX runs_recovery; DROP INDEX runs_recovery_class; "
                                "UPDATE meta SET value = '3' WHERE key = 'store.schema_version'"));
  }

  // `mend --home H --json migrate ARGS` with the store on PostgreSQL and tracing off (observe.db is
  // SQLite, covered by tests/cli/migrate_command_test.cc). Expects exit code `expect_code`.
  nlohmann::json Migrate(std::vector<std::string> args, int expect_code = 0,
                         std::vector<std::string> extra_env = {}) {
    args.insert(args.begin(), {"--json", "migrate"});
    const ChildOutput result =
        E2eTest::Mend(std::move(args), {.extra_env = extra_env, .timeout = kBound});
    EXPECT_TRUE(result.status.exited && result.status.code == expect_code) << result.err;
    err_ = result.err;
    return nlohmann::json::parse(result.out, nullptr, false);
  }

  // "store backend from to migrated" of each store in `json`.
  static std::vector<std::string> Stores(const nlohmann::json& json) {
    std::vector<std::string> stores;
    if (!json.is_object() || !json.contains("stores")) return stores;
    for (const nlohmann::json& s : json.at("stores")) {
      stores.push_back(s.at("store").get<std::string>() + " " + s.at("backend").get<std::string>() +
                       " " + s.at("from").dump() + " " + s.at("to").dump() + " " +
                       s.at("migrated").dump());
    }
    return stores;
  }

  ManualClock clock_;
  std::string err_;
};

TEST_F(PostgresMigrateTest, APreviousReleaseDatabaseIsMigratedOnceAndKeepsItsRun) {
  MakePreviousReleaseDatabase();

  nlohmann::json dry = Migrate({"--dry-run"});
  EXPECT_THAT(Stores(dry), ElementsAre("runs postgres 3 4 true", "memory postgres 0 2 true",
                                       "improve postgres 0 1 true"));
  EXPECT_THAT(QueryPostgres(db_.url(), kRunsVersion), ElementsAre("3"));
  EXPECT_THAT(QueryPostgres(db_.url(), kHasFacts), ElementsAre("f"));

  nlohmann::json done = Migrate({});
  EXPECT_THAT(Stores(done), ElementsAre("runs postgres 3 4 true", "memory postgres 0 2 true",
                                        "improve postgres 0 1 true"));
  ASSERT_TRUE(done.is_object());
  EXPECT_EQ(done["stores"][0]["location"], store::MaskPostgresUrl(db_.url()));
  EXPECT_THAT(QueryPostgres(db_.url(), kRunsVersion), ElementsAre("4"));
  EXPECT_THAT(QueryPostgres(db_.url(), kMemoryVersion), ElementsAre("2"));
  EXPECT_THAT(QueryPostgres(db_.url(), kRecoveryIndexes), ElementsAre("2"));
  EXPECT_THAT(
      QueryPostgres(db_.url(), "SELECT value FROM meta WHERE key = 'improve.schema_version'"),
      ElementsAre("1"));

  store::PostgresStoreOptions options;
  options.url = db_.url();
  auto runs = store::OpenPostgresStore(options, clock_);
  MEND_ASSERT_OK(runs);
  auto run = (*runs)->GetRun("r-1");
  MEND_ASSERT_OK(run);
  EXPECT_EQ(run->task, "check the deploy");
  runs->reset();

  nlohmann::json again = Migrate({});
  EXPECT_THAT(Stores(again), ElementsAre("runs postgres 4 4 false", "memory postgres 2 2 false",
                                         "improve postgres 1 1 false"));
}

TEST_F(PostgresMigrateTest, ThePostgresLessonQueueIsOneOfTheStores) {
  const std::vector<std::string> queue = {"MEND_QUALITY_REFLEXION_QUEUE_BACKEND=postgres"};
  nlohmann::json done = Migrate({}, 0, queue);
  EXPECT_THAT(Stores(done), ElementsAre("runs postgres 0 4 true", "memory postgres 0 2 true",
                                        "lessons postgres 0 3 true", "improve postgres 0 1 true"));
  EXPECT_THAT(QueryPostgres(db_.url(),
                            "SELECT value FROM lesson_queue_meta WHERE key = "
                            "'lessonq.schema_version'"),
              ElementsAre("3"));
  nlohmann::json again = Migrate({}, 0, queue);
  EXPECT_THAT(Stores(again),
              ElementsAre("runs postgres 4 4 false", "memory postgres 2 2 false",
                          "lessons postgres 3 3 false", "improve postgres 1 1 false"));
  // The WAL backend has no tables to migrate.
  EXPECT_THAT(Stores(Migrate({})),
              ElementsAre("runs postgres 4 4 false", "memory postgres 2 2 false",
                          "improve postgres 1 1 false"));
  MEND_ASSERT_OK(ExecPostgres(
      db_.url(), "UPDATE lesson_queue_meta SET value = '7' WHERE key = 'lessonq.schema_version'"));
  nlohmann::json refused = Migrate({}, 1, queue);
  EXPECT_THAT(err_, HasSubstr("the lessons schema (version 7) was written by a newer mend"));
}

TEST_F(PostgresMigrateTest, ANewerSchemaIsRefusedAndTheFactsStay) {
  MakePreviousReleaseDatabase();
  memory::PostgresFactStoreOptions options;
  options.url = db_.url();
  auto facts = memory::OpenPostgresFactStore(options, clock_);
  MEND_ASSERT_OK(facts);
  auto added = (*facts)->Add({"deploys go through the staging cluster first"});
  MEND_ASSERT_OK(added);
  facts->reset();
  MEND_ASSERT_OK(
      ExecPostgres(db_.url(), "UPDATE meta SET value = '99' WHERE key = 'memory.schema_version'"));

  nlohmann::json refused = Migrate({}, 1);
  EXPECT_THAT(Stores(refused), ElementsAre("runs postgres 3 3 false", "memory postgres 99 99 false",
                                           "improve postgres 0 0 false"));
  EXPECT_THAT(err_, HasSubstr("the memory schema (version 99) was written by a newer mend"));
  EXPECT_THAT(err_, HasSubstr("upgrade mend"));
  EXPECT_THAT(QueryPostgres(db_.url(), kRunsVersion), ElementsAre("3"));
  EXPECT_THAT(QueryPostgres(db_.url(), kRecoveryIndexes), ElementsAre("0"));
  EXPECT_THAT(QueryPostgres(db_.url(), "SELECT content FROM facts"),
              ElementsAre("deploys go through the staging cluster first"));
}

TEST_F(PostgresMigrateTest, ANewerImproveSchemaIsRefusedBeforeAnythingIsMigrated) {
  MakePreviousReleaseDatabase();
  MEND_ASSERT_OK(ExecPostgres(db_.url(),
                              "INSERT INTO meta (key, value) VALUES ('improve.schema_version', "
                              "'5')"));
  nlohmann::json refused = Migrate({}, 1);
  EXPECT_THAT(Stores(refused), ElementsAre("runs postgres 3 3 false", "memory postgres 0 0 false",
                                           "improve postgres 5 5 false"));
  EXPECT_THAT(err_, HasSubstr("the improve schema (version 5) was written by a newer mend"));
  EXPECT_THAT(QueryPostgres(db_.url(), kRunsVersion), ElementsAre("3"));
}

}  // namespace
}  // namespace mend::testing
