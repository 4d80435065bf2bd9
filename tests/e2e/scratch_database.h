#pragma once

// A PostgreSQL database of a test's own on the server MEND_TEST_POSTGRES_URL names
// (scripts/with_postgres starts a throwaway one), for end-to-end tests whose `mend` processes
// share a store as replicas on several hosts would.

#include <libpq-fe.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "mend/base/result.h"

namespace mend::testing {

inline std::string PostgresServerUrl() {
  const char* url = std::getenv("MEND_TEST_POSTGRES_URL");
  return url == nullptr ? "" : url;
}

// Runs one statement on a connection of its own (rows it returns are dropped).
inline Status ExecPostgres(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);  // "does not exist, skipping"
  Status result = OkStatus();
  if (PQstatus(conn) != CONNECTION_OK) {
    result = UnavailableError(PQerrorMessage(conn));
  } else {
    PGresult* res = PQexec(conn, sql.c_str());
    const ExecStatusType status = PQresultStatus(res);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      result = InternalError(PQerrorMessage(conn));
    }
    PQclear(res);
  }
  PQfinish(conn);
  return result;
}

// `url` (a postgres:// URI) naming database `name` instead of its own; parameters are kept.
inline Result<std::string> WithDatabase(const std::string& url, const std::string& name) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) {
    return InvalidArgumentError("MEND_TEST_POSTGRES_URL must be a postgres:// URI");
  }
  const size_t query = url.find('?', scheme);
  std::string base = url.substr(0, query);
  const std::string params = query == std::string::npos ? "" : url.substr(query);
  const size_t path = base.find('/', scheme + 3);
  if (path != std::string::npos) base.resize(path);
  return base + "/" + name + params;
}

// A fresh database named `prefix`_<pid>_<n>, dropped (with its connections) on destruction.
class ScratchDatabase {
 public:
  static Result<ScratchDatabase> Create(const std::string& server_url, const std::string& prefix) {
    static int next = 0;
    ScratchDatabase db;
    db.server_url_ = server_url;
    db.name_ = prefix + "_" + std::to_string(getpid()) + "_" + std::to_string(next++);
    MEND_RETURN_IF_ERROR(
        ExecPostgres(server_url, "DROP DATABASE IF EXISTS " + db.name_ + " WITH (FORCE)"));
    MEND_RETURN_IF_ERROR(ExecPostgres(server_url, "CREATE DATABASE " + db.name_));
    MEND_ASSIGN_OR_RETURN(db.url_, WithDatabase(server_url, db.name_));
    return db;
  }
  ScratchDatabase() = default;
  ScratchDatabase(ScratchDatabase&& other) noexcept { *this = std::move(other); }
  ScratchDatabase& operator=(ScratchDatabase&& other) noexcept {
    std::swap(server_url_, other.server_url_);
    std::swap(name_, other.name_);
    std::swap(url_, other.url_);
    return *this;
  }
  ~ScratchDatabase() { Drop().IgnoreError(); }
  // Drops the database now (with its connections); nothing to do when there is none.
  Status Drop() {
    if (name_.empty()) return OkStatus();
    const std::string name = std::move(name_);
    name_.clear();
    return ExecPostgres(server_url_, "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
  }
  const std::string& url() const { return url_; }

 private:
  std::string server_url_;
  std::string name_;
  std::string url_;
};

}  // namespace mend::testing
