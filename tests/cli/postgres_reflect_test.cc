// `mend reflect ...` on the PostgreSQL lesson queue (reflexion.queue.backend = postgres, store.url
// a postgres:// URL), and `reflect migrate` from the WAL queue. Needs a server named by
// MEND_TEST_POSTGRES_URL and skips without one; each test gets a schema of its own through the
// URL's search_path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "tests/cli/cli_home_test.h"

namespace mend::cli {
namespace {

using ::testing::HasSubstr;

std::string ServerUrl() {
  const char* url = std::getenv("MEND_TEST_POSTGRES_URL");
  return url == nullptr ? "" : url;
}

void RawExec(const std::string& sql) {
  PGconn* conn = PQconnectdb(ServerUrl().c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  PGresult* res = PQexec(conn, sql.c_str());
  EXPECT_EQ(PQresultStatus(res), PGRES_COMMAND_OK) << PQerrorMessage(conn);
  PQclear(res);
  PQfinish(conn);
}

class PostgresReflectTest : public CliHomeTest {
 protected:
  void SetUp() override {
    if (ServerUrl().empty()) GTEST_SKIP() << "MEND_TEST_POSTGRES_URL is not set";
    CliHomeTest::SetUp();
    static std::atomic<int> next{0};
    const std::string schema =
        "mend_cli_" + std::to_string(getpid()) + "_" + std::to_string(next++);
    RawExec("DROP SCHEMA IF EXISTS " + schema + " CASCADE; CREATE SCHEMA " + schema);
    const std::string url = ServerUrl();
    store_url_ = url + (url.find('?') == std::string::npos ? "?" : "&") +
                 "options=-csearch_path%3D" + schema;
  }

  void UsePostgres() {
    env_["MEND_STORE"] = store_url_;
    env_["MEND_QUALITY_REFLEXION_QUEUE_BACKEND"] = "postgres";
  }

  int Enqueue(const std::string& task) {
    return Mend({"reflect", "enqueue", "--task", task, "--trigger", "error", "--json"});
  }

  std::string store_url_;
};

TEST_F(PostgresReflectTest, EnqueueListAndStatusUseThePostgresQueue) {
  UsePostgres();
  ASSERT_EQ(Enqueue("Edit main.go"), 0) << err();
  EXPECT_EQ(Json()["created"], true);
  ASSERT_EQ(Enqueue("Edit main.go"), 0) << err();
  EXPECT_EQ(Json()["created"], false);
  ASSERT_EQ(Mend({"reflect", "list", "--json"}), 0) << err();
  ASSERT_EQ(Json()["pending"].size(), 1u);
  EXPECT_EQ(Json()["pending"][0]["task"], "Edit main.go");
  ASSERT_EQ(Mend({"reflect"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("1 pending in PostgreSQL, 0 in the dead letter queue"));
  // The WAL directory was not used.
  EXPECT_FALSE(fs_.Exists(home_ + "/reflexion/wal"));
}

TEST_F(PostgresReflectTest, MigrateMovesTheWalJobsAndIsHarmlessTwice) {
  ASSERT_EQ(Enqueue("first task"), 0) << err();  // the WAL queue, the default
  ASSERT_EQ(Enqueue("second task"), 0) << err();
  UsePostgres();
  ASSERT_EQ(Mend({"reflect", "migrate", "--json"}), 0) << err();
  const nlohmann::json report = Json();
  EXPECT_EQ(JsonKeys(report),
            (std::set<std::string>{"moved", "already_present", "dead_letters", "corrupt"}));
  EXPECT_EQ(report["moved"], 2);
  EXPECT_EQ(report["dead_letters"], 0);
  ASSERT_EQ(Mend({"reflect", "list", "--json"}), 0) << err();
  EXPECT_EQ(Json()["pending"].size(), 2u);
  ASSERT_EQ(Mend({"reflect", "migrate"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("moved 0 pending lesson jobs and 0 dead letters"));
}

}  // namespace
}  // namespace mend::cli
