#pragma once

// The E2eTest of the tests whose `mend` processes share a PostgreSQL store, as replicas on several
// hosts would: a database of the test's own on the server MEND_TEST_POSTGRES_URL names, or the
// test skipped without one.

#include <gtest/gtest.h>

#include <string>

#include "tests/e2e/scratch_database.h"
#include "tests/support/e2e_harness.h"

namespace mend::testing {

class PostgresE2eTest : public E2eTest {
 protected:
  // The database is named `prefix`_<pid>_<n>.
  explicit PostgresE2eTest(std::string prefix, E2eSetup setup = {})
      : E2eTest(std::move(setup)), prefix_(std::move(prefix)) {}

  // E2eTest::SetUp, then skips the test without a server, or creates db_ and calls
  // SetUpWithDatabase.
  void SetUp() final {
    ASSERT_NO_FATAL_FAILURE(E2eTest::SetUp());
    if (PostgresServerUrl().empty()) {
      GTEST_SKIP() << "MEND_TEST_POSTGRES_URL is not set (see scripts/with_postgres)";
    }
    auto db = ScratchDatabase::Create(PostgresServerUrl(), prefix_);
    MEND_ASSERT_OK(db);
    db_ = std::move(*db);
    SetUpWithDatabase();
  }
  // What a test needs besides the database; not called when the test is skipped.
  virtual void SetUpWithDatabase() {}

  // Kills (SIGKILL) and reaps the replicas still running, then E2eTest::TearDown.
  void TearDown() override {
    for (auto& replica : replicas_) replica.reset();
    E2eTest::TearDown();
  }

  // The file replica k's stdout and stderr go to.
  std::string ReplicaLog(int k) const { return dir_->File("r" + std::to_string(k) + ".log"); }
  // Every replica's log, each under a "--- r<k>" line.
  std::string ReplicaLogs() const {
    std::string all;
    for (size_t k = 0; k < replicas_.size(); ++k) {
      all += "--- r" + std::to_string(k) + "\n" +
             ReadWholeFile(ReplicaLog(static_cast<int>(k))).value_or("") + "\n";
    }
    return all;
  }
  // `mend --home <dir>/home-r<k> args...` with `env` as replicas_[k] (which must exist), its output
  // appended to ReplicaLog(k) (a file, so a long-lived replica never blocks on a full pipe).
  void SpawnReplica(int k, const std::vector<std::string>& args,
                    const std::vector<std::string>& env) {
    auto child = ChildProcess::Spawn(
        OutputToFile(ReplicaLog(k), MendCommand(args, dir_->File("home-r" + std::to_string(k)))),
        env);
    MEND_ASSERT_OK(child);
    replicas_.at(k) = std::move(*child);
  }

  ScratchDatabase db_;
  std::vector<std::unique_ptr<ChildProcess>> replicas_;  // sized by the test

 private:
  std::string prefix_;
};

}  // namespace mend::testing
