#pragma once

// The PostgreSQL server tests run against: MEND_TEST_POSTGRES_URL names a database the tests may
// create schemas in (scripts/with_postgres starts a throwaway one). Tests that need it skip
// without it.

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace mend::testing {

inline constexpr char kNoPostgresServer[] =
    "MEND_TEST_POSTGRES_URL is not set (see scripts/with_postgres)";

inline std::string PostgresTestUrl() {
  const char* url = std::getenv("MEND_TEST_POSTGRES_URL");
  return url == nullptr ? "" : url;
}

// Runs `sql` on a connection of its own, as another program (or an operator) would.
inline void RawPostgresExec(const std::string& sql) {
  PGconn* conn = PQconnectdb(PostgresTestUrl().c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);  // "drop cascades to ..." is expected
  PGresult* res = PQexec(conn, sql.c_str());
  ExecStatusType status = PQresultStatus(res);
  EXPECT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) << PQerrorMessage(conn);
  PQclear(res);
  PQfinish(conn);
}

// A schema name no other test uses (`prefix`, this process's pid, a counter). A leftover of an
// earlier process with the same pid is dropped.
inline std::string FreshPostgresSchema(const std::string& prefix) {
  static std::atomic<int> next{0};
  std::string name = prefix + "_" + std::to_string(getpid()) + "_" + std::to_string(next++);
  RawPostgresExec("DROP SCHEMA IF EXISTS \"" + name + "\" CASCADE");
  return name;
}

}  // namespace mend::testing
