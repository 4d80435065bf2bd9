// What only the PostgreSQL store shows of ListRecoveryCandidates: the version 4 migration of an
// existing schema, and ids ordered as bytes whatever the collation of the `id` column.
//
// Needs a server named by MEND_TEST_POSTGRES_URL (scripts/with_postgres); skipped without one.

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
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
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

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

class PostgresRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (ServerUrl().empty()) {
      GTEST_SKIP() << "MEND_TEST_POSTGRES_URL is not set (see scripts/with_postgres)";
    }
    static std::atomic<int> next{0};
    schema_ = "mend_recovery_" + std::to_string(getpid()) + "_" + std::to_string(next++);
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

  // The ids of the candidates due now, paged `limit` at a time from the oldest.
  std::vector<std::string> CandidateIds(size_t limit) {
    std::vector<std::string> ids;
    RecoveryQuery query;
    query.now = clock_.Now();
    query.limit = limit;
    for (int page = 0; page < 10; ++page) {
      Result<RecoveryPage> p = store_->ListRecoveryCandidates(query);
      EXPECT_THAT(p, IsOk());
      if (!p.ok()) break;
      for (const RunRecord& r : p->runs) ids.push_back(r.id);
      if (!p->next.has_value()) break;
      query.after = p->next;
    }
    return ids;
  }

  ManualClock clock_;
  std::string schema_;
  std::unique_ptr<CheckpointStore> store_;
};

TEST_F(PostgresRecoveryTest, AVersion3SchemaGetsTheRecoveryIndexes) {
  Make("r1", "alpha", RunStatus::kRunning);
  Make("r2", "alpha", RunStatus::kWaiting);
  store_.reset();
  SchemaQuery(
      "DROP INDEX runs_recovery; DROP INDEX runs_recovery_class; "
      "UPDATE meta SET value = '3' WHERE key = 'store.schema_version'");
  const std::string indexes =
      "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname IN "
      "('runs_recovery', 'runs_recovery_class') ORDER BY indexname";
  ASSERT_THAT(SchemaQuery(indexes), IsEmpty());

  for (int open = 0; open < 2; ++open) {  // the second open finds nothing to do
    store_ = Open();
    ASSERT_NE(store_, nullptr);
    EXPECT_THAT(SchemaQuery("SELECT value FROM meta WHERE key = 'store.schema_version'"),
                ElementsAre("4"));
    EXPECT_THAT(SchemaQuery(indexes),
                ElementsAre(HasSubstr("(created_at, id COLLATE \"C\", status, attempts, "
                                      "next_attempt_at, error_retryable)"),
                            HasSubstr("(status, waiting, error_retryable, next_attempt_at, "
                                      "attempts)")));
    RecoveryQuery query;
    query.now = clock_.Now();
    query.counting = RecoveryCounting::kInclude;
    Result<RecoveryPage> page = store_->ListRecoveryCandidates(query);
    MEND_ASSERT_OK(page);
    ASSERT_EQ(page->runs.size(), 1u);
    EXPECT_EQ(page->runs[0].id, "r1");
    EXPECT_EQ(page->counts->waiting, 1);
    store_.reset();
  }
}

TEST_F(PostgresRecoveryTest, IdsOrderAsBytesWhateverTheColumnCollation) {
  if (RawQuery("SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu'").empty()) {
    GTEST_SKIP() << "the server has no ICU collation to compare with";
  }
  // In the ICU root collation a1 < b1 < B1; as bytes B1 < a1 < b1.
  SchemaQuery("ALTER TABLE runs ALTER COLUMN id TYPE TEXT COLLATE \"und-x-icu\"");
  for (const char* id : {"a1", "B1", "b1"}) Make(id, "alpha", RunStatus::kRunning);
  EXPECT_THAT(CandidateIds(1), ElementsAre("B1", "a1", "b1"));
  EXPECT_THAT(CandidateIds(20), ElementsAre("B1", "a1", "b1"));
}

}  // namespace
}  // namespace mend::store
