// What only the SQLite store shows of ListRecoveryCandidates: the query plans of its statements (a
// page walks runs_recovery from the cursor; every count is a range of runs_recovery_class and reads
// no row), the migration that added those indexes, and corrupt rows.

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/store/sqlite_store.h"
#include "store/sqlite_recovery_sql.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::IsOk;
using std::chrono::seconds;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// The rows of `sql` on a connection of its own, each row's columns joined by '|'.
std::vector<std::string> RawQuery(const std::string& path, const std::string& sql) {
  std::vector<std::string> rows;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db) << " in " << sql;
  while (stmt != nullptr && sqlite3_step(stmt) == SQLITE_ROW) {
    std::string row;
    for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
      const unsigned char* text = sqlite3_column_text(stmt, c);
      row += (c > 0 ? "|" : "") +
             std::string(text == nullptr ? "" : reinterpret_cast<const char*>(text));
    }
    rows.push_back(row);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

// The lines of the query plan of `sql`, without their ids.
std::vector<std::string> PlanLines(const std::string& path, const std::string& sql) {
  std::vector<std::string> lines;
  for (const std::string& row : RawQuery(path, "EXPLAIN QUERY PLAN " + sql)) {
    lines.push_back(row.substr(row.rfind('|') + 1));
  }
  return lines;
}

class SqliteRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_recovery_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    options_.path = dir_ + "/mend.db";
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<CheckpointStore> Open() {
    Result<std::unique_ptr<CheckpointStore>> store = OpenSqliteStore(options_, clock_);
    EXPECT_THAT(store, IsOk());
    return store.ok() ? std::move(store).value() : nullptr;
  }

  void Make(const std::string& id, RunStatus status) {
    clock_.Advance(seconds(1));
    RunRecord run;
    run.id = id;
    run.agent = "alpha";
    MEND_ASSERT_OK(store_->CreateRun(run));
    RunUpdate update;
    update.status = status;
    MEND_ASSERT_OK(store_->UpdateUnleased(id, update));
  }

  RecoveryPage MustPage() {
    RecoveryQuery query;
    query.now = clock_.Now();
    query.counting = RecoveryCounting::kInclude;
    Result<RecoveryPage> page = store_->ListRecoveryCandidates(query);
    EXPECT_THAT(page, IsOk());
    return page.ok() ? *std::move(page) : RecoveryPage{};
  }

  static std::vector<std::string> Ids(const RecoveryPage& page) {
    std::vector<std::string> ids;
    for (const RunRecord& r : page.runs) ids.push_back(r.id);
    return ids;
  }

  ManualClock clock_;
  std::string dir_;
  SqliteStoreOptions options_;
  std::unique_ptr<CheckpointStore> store_;
};

TEST_F(SqliteRecoveryTest, APageWalksTheCandidateIndexFromTheCursorWithoutSorting) {
  std::vector<std::string> plan = PlanLines(options_.path, internal::recovery_sql::kPage);
  EXPECT_THAT(plan, ElementsAre("SEARCH runs USING INDEX runs_recovery ((created_at,id)>(?,?))"));
}

TEST_F(SqliteRecoveryTest, EveryCountIsARangeOfTheClassIndex) {
  std::vector<std::string> plan = PlanLines(options_.path, internal::recovery_sql::kCounts);
  size_t counts = 0;
  for (const std::string& line : plan) {
    if (line.rfind("SCALAR SUBQUERY", 0) == 0 || line == "SCAN CONSTANT ROW") continue;
    ++counts;
    // Only the count of every unfinished run scans, and it too reads the index alone.
    EXPECT_THAT(line, AllOf(HasSubstr("USING COVERING INDEX runs_recovery_class"),
                            Not(HasSubstr("TEMP B-TREE"))));
    if (line.rfind("SCAN", 0) == 0) {
      EXPECT_EQ(line, "SCAN runs USING COVERING INDEX runs_recovery_class");
    } else {
      EXPECT_THAT(line, HasSubstr("(status=?"));
    }
  }
  EXPECT_EQ(counts, 9u);
  EXPECT_EQ(
      std::count(plan.begin(), plan.end(), "SCAN runs USING COVERING INDEX runs_recovery_class"),
      1);
}

TEST_F(SqliteRecoveryTest, AVersion3DatabaseGetsTheRecoveryIndexes) {
  Make("r1", RunStatus::kRunning);
  Make("r2", RunStatus::kWaiting);
  store_.reset();
  for (const char* sql : {"DROP INDEX runs_recovery", "DROP INDEX runs_recovery_class",
                          "UPDATE meta SET value = '3' WHERE key = 'store.schema_version'"}) {
    RawQuery(options_.path, sql);
  }
  const std::string indexes =
      "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'runs_recovery%' "
      "ORDER BY name";
  ASSERT_THAT(RawQuery(options_.path, indexes), IsEmpty());

  for (int open = 0; open < 2; ++open) {  // the second open finds nothing to do
    store_ = Open();
    ASSERT_NE(store_, nullptr);
    EXPECT_THAT(
        RawQuery(options_.path, "SELECT value FROM meta WHERE key = 'store.schema_version'"),
        ElementsAre("4"));
    EXPECT_THAT(RawQuery(options_.path, indexes),
                ElementsAre("runs_recovery", "runs_recovery_class"));
    RecoveryPage page = MustPage();
    EXPECT_THAT(Ids(page), ElementsAre("r1"));
    EXPECT_EQ(page.counts->waiting, 1);
    store_.reset();
  }
}

TEST_F(SqliteRecoveryTest, CorruptRowsAreCountedAndListedAsListRunsShowsThem) {
  Make("good", RunStatus::kRunning);
  Make("bogus", RunStatus::kRunning);
  Make("typed", RunStatus::kRunning);
  RawQuery(options_.path, "UPDATE runs SET status = 'bogus' WHERE id = 'bogus'");
  RawQuery(options_.path, "UPDATE runs SET step = 'two' WHERE id = 'typed'");
  RecoveryPage page = MustPage();
  // A status nobody knows: ListRuns shows a failed run that is not retryable, and so do the
  // counts. A bad column the rules do not read: the row is a candidate, listed as ListRuns lists
  // it, so the pass that reads it sees a failed run that is not retryable.
  EXPECT_THAT(Ids(page), ElementsAre("good", "typed"));
  EXPECT_EQ(page.counts->non_retryable, 1);
  EXPECT_EQ(page.counts->candidates, 2);
  ASSERT_EQ(page.runs.size(), 2u);
  EXPECT_EQ(page.runs[1].status, RunStatus::kFailed);
  ASSERT_TRUE(page.runs[1].last_error.has_value());
  EXPECT_EQ(page.runs[1].last_error->code, "DATA_LOSS");
  EXPECT_FALSE(page.runs[1].last_error->retryable);
}

}  // namespace
}  // namespace mend::store
