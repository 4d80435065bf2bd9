// What only the SQLite store shows of ListPending: the query plans of its statements (every page
// and count walks an index, never the table), the schema migration that added those indexes, and
// corrupt rows.

#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/store/sqlite_store.h"
#include "store/sqlite_pending_sql.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::seconds;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
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

std::string Plan(const std::string& path, const std::string& sql) {
  std::string plan;
  for (const std::string& row : RawQuery(path, "EXPLAIN QUERY PLAN " + sql)) plan += row + "\n";
  return plan;
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class SqlitePendingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_pending_XXXXXX";
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

  void Make(const std::string& id, const std::string& agent, RunStatus status) {
    clock_.Advance(seconds(1));
    RunRecord run;
    run.id = id;
    run.agent = agent;
    MEND_ASSERT_OK(store_->CreateRun(run));
    RunUpdate update;
    update.status = status;
    MEND_ASSERT_OK(store_->UpdateUnleased(id, update));
  }

  static std::vector<std::string> Ids(const Result<PendingPage>& page) {
    std::vector<std::string> ids;
    if (!page.ok()) return ids;
    for (const RunRecord& r : page->runs) ids.push_back(r.id);
    return ids;
  }

  ManualClock clock_;
  std::string dir_;
  SqliteStoreOptions options_;
  std::unique_ptr<CheckpointStore> store_;
};

TEST_F(SqlitePendingTest, PagesWalkAnIndexBackwardsAndNeverSortTheTable) {
  using namespace internal::pending_sql;  // NOLINT(google-build-using-namespace)
  const std::string page_all = Plan(options_.path, kPageAll);
  EXPECT_THAT(page_all, AllOf(HasSubstr("USING INDEX runs_unfinished ((created_at,id)<(?,?))"),
                              Not(HasSubstr("TEMP B-TREE"))));
  // Each of the four branches seeks its own status (and agent); only the merge of at most
  // 4 x limit rows is sorted.
  const std::string by_status = Plan(options_.path, kPageByStatus);
  EXPECT_EQ(Occurrences(by_status,
                        "USING INDEX runs_pending_status (status=? AND "
                        "(created_at,id)<(?,?))"),
            4u)
      << by_status;
  EXPECT_THAT(by_status, Not(HasSubstr("SCAN runs")));
  const std::string by_agent = Plan(options_.path, kPageByAgent);
  EXPECT_EQ(Occurrences(by_agent,
                        "USING INDEX runs_pending_agent (agent=? AND status=? AND "
                        "(created_at,id)<(?,?))"),
            4u)
      << by_agent;
  EXPECT_THAT(by_agent, Not(HasSubstr("SCAN runs")));
}

TEST_F(SqlitePendingTest, CountsReadOnlyIndexes) {
  using namespace internal::pending_sql;  // NOLINT(google-build-using-namespace)
  EXPECT_THAT(Plan(options_.path, kCountAll), HasSubstr("COVERING INDEX runs_pending_status"));
  EXPECT_THAT(Plan(options_.path, kCountAllFrom),
              HasSubstr("USING INDEX runs_unfinished ((created_at,id)>(?,?))"));
  EXPECT_THAT(Plan(options_.path, kCountByStatus),
              HasSubstr("SEARCH runs USING COVERING INDEX runs_pending_status (status=? AND "
                        "(created_at,id)>(?,?))"));
  EXPECT_THAT(Plan(options_.path, kCountByAgent),
              HasSubstr("SEARCH runs USING COVERING INDEX runs_pending_agent (agent=? AND "
                        "status=? AND (created_at,id)>(?,?))"));
}

TEST_F(SqlitePendingTest, PagesOfEveryRunWalkIndexesToo) {
  using namespace internal::pending_sql;  // NOLINT(google-build-using-namespace)
  EXPECT_THAT(Plan(options_.path, kRunsPage),
              AllOf(HasSubstr("USING INDEX runs_created ((created_at,id)<(?,?))"),
                    Not(HasSubstr("TEMP B-TREE"))));
  // Four unfinished branches as for pending runs, and one over the completed runs' index.
  const std::string by_status = Plan(options_.path, kRunsPageByStatus);
  EXPECT_EQ(Occurrences(by_status,
                        "USING INDEX runs_pending_status (status=? AND "
                        "(created_at,id)<(?,?))"),
            4u)
      << by_status;
  EXPECT_EQ(Occurrences(by_status,
                        "USING INDEX runs_completed_status (status=? AND "
                        "(created_at,id)<(?,?))"),
            1u)
      << by_status;
  EXPECT_THAT(by_status, Not(HasSubstr("SCAN runs")));
  const std::string by_agent = Plan(options_.path, kRunsPageByAgent);
  EXPECT_EQ(Occurrences(by_agent,
                        "USING INDEX runs_pending_agent (agent=? AND status=? AND "
                        "(created_at,id)<(?,?))"),
            4u)
      << by_agent;
  EXPECT_EQ(Occurrences(by_agent,
                        "USING INDEX runs_completed_agent (agent=? AND status=? AND "
                        "(created_at,id)<(?,?))"),
            1u)
      << by_agent;
  EXPECT_THAT(by_agent, Not(HasSubstr("SCAN runs")));

  EXPECT_THAT(Plan(options_.path, kRunsCount), HasSubstr("COVERING INDEX"));
  EXPECT_THAT(Plan(options_.path, kRunsCountFrom),
              HasSubstr("USING COVERING INDEX runs_created ((created_at,id)>(?,?))"));
  EXPECT_THAT(Plan(options_.path, kRunsCountByStatus),
              AllOf(HasSubstr("COVERING INDEX runs_pending_status (status=? AND "
                              "(created_at,id)>(?,?))"),
                    HasSubstr("COVERING INDEX runs_completed_status (status=? AND "
                              "(created_at,id)>(?,?))")));
  EXPECT_THAT(Plan(options_.path, kRunsCountByAgent),
              AllOf(HasSubstr("COVERING INDEX runs_pending_agent (agent=? AND status=? AND "
                              "(created_at,id)>(?,?))"),
                    HasSubstr("COVERING INDEX runs_completed_agent (agent=? AND status=? AND "
                              "(created_at,id)>(?,?))")));
}

TEST_F(SqlitePendingTest, AVersion1DatabaseGetsTheIndexesAndKeepsItsRuns) {
  Make("r1", "alpha", RunStatus::kFailed);
  Make("r2", "beta", RunStatus::kRunning);
  Make("r3", "alpha", RunStatus::kCompleted);
  store_.reset();
  // What version 1 wrote: the same tables without the four indexes of versions 2 and 3.
  for (const char* sql : {"DROP INDEX runs_pending_status", "DROP INDEX runs_pending_agent",
                          "DROP INDEX runs_completed_status", "DROP INDEX runs_completed_agent",
                          "UPDATE meta SET value = '1' WHERE key = 'store.schema_version'"}) {
    RawQuery(options_.path, sql);
  }
  const std::string indexes =
      "SELECT name FROM sqlite_master WHERE type = 'index' AND (name LIKE 'runs_pending%' OR "
      "name LIKE 'runs_completed%') ORDER BY name";
  ASSERT_TRUE(RawQuery(options_.path, indexes).empty());

  store_ = Open();
  ASSERT_NE(store_, nullptr);
  const std::string version = "SELECT value FROM meta WHERE key = 'store.schema_version'";
  EXPECT_THAT(RawQuery(options_.path, version), ElementsAre("4"));
  EXPECT_THAT(RawQuery(options_.path, indexes),
              ElementsAre("runs_completed_agent", "runs_completed_status", "runs_pending_agent",
                          "runs_pending_status"));
  PendingQuery alpha;
  alpha.agent = "alpha";
  EXPECT_THAT(Ids(store_->ListPending(alpha)), ElementsAre("r1"));
  EXPECT_THAT(Ids(store_->ListPending(PendingQuery{})), ElementsAre("r2", "r1"));
  alpha.scope = RunScope::kAll;
  EXPECT_THAT(Ids(store_->ListPending(alpha)), ElementsAre("r3", "r1"));

  // Opening again changes nothing.
  store_.reset();
  store_ = Open();
  ASSERT_NE(store_, nullptr);
  EXPECT_THAT(RawQuery(options_.path, version), ElementsAre("4"));
  EXPECT_THAT(Ids(store_->ListPending(PendingQuery{})), ElementsAre("r2", "r1"));
}

TEST_F(SqlitePendingTest, AVersion2DatabaseGetsTheIndexesOfEveryRunsPages) {
  Make("r1", "alpha", RunStatus::kCompleted);
  Make("r2", "alpha", RunStatus::kRunning);
  store_.reset();
  for (const char* sql : {"DROP INDEX runs_completed_status", "DROP INDEX runs_completed_agent",
                          "UPDATE meta SET value = '2' WHERE key = 'store.schema_version'"}) {
    RawQuery(options_.path, sql);
  }
  store_ = Open();
  ASSERT_NE(store_, nullptr);
  EXPECT_THAT(RawQuery(options_.path, "SELECT value FROM meta WHERE key = 'store.schema_version'"),
              ElementsAre("4"));
  EXPECT_THAT(RawQuery(options_.path,
                       "SELECT name FROM sqlite_master WHERE name LIKE 'runs_completed%' "
                       "ORDER BY name"),
              ElementsAre("runs_completed_agent", "runs_completed_status"));
  PendingQuery completed;
  completed.scope = RunScope::kAll;
  completed.statuses = {RunStatus::kCompleted};
  EXPECT_THAT(Ids(store_->ListPending(completed)), ElementsAre("r1"));
}

TEST_F(SqlitePendingTest, ACorruptRowIsListedAsFailedWithoutAFilter) {
  Make("good", "alpha", RunStatus::kFailed);
  Make("bogus", "alpha", RunStatus::kRunning);
  Make("typed", "alpha", RunStatus::kRunning);
  RawQuery(options_.path, "UPDATE runs SET status = 'bogus' WHERE id = 'bogus'");
  RawQuery(options_.path, "UPDATE runs SET step = 'two' WHERE id = 'typed'");
  Result<PendingPage> page = store_->ListPending(PendingQuery{});
  MEND_ASSERT_OK(page);
  EXPECT_THAT(Ids(page), ElementsAre("typed", "bogus", "good"));
  EXPECT_EQ(page->total, 3);
  for (int i : {0, 1}) {
    EXPECT_EQ(page->runs[i].status, RunStatus::kFailed);
    ASSERT_TRUE(page->runs[i].last_error.has_value());
    EXPECT_EQ(page->runs[i].last_error->code, "DATA_LOSS");
  }
  // Filters match the stored columns: the row with an unknown status matches no status filter.
  PendingQuery alpha;
  alpha.agent = "alpha";
  EXPECT_THAT(Ids(store_->ListPending(alpha)), ElementsAre("typed", "good"));
  PendingQuery failed;
  failed.statuses = {RunStatus::kFailed};
  EXPECT_THAT(Ids(store_->ListPending(failed)), ElementsAre("good"));
  // Pages of every run list it the same way.
  PendingQuery every;
  every.scope = RunScope::kAll;
  EXPECT_THAT(Ids(store_->ListPending(every)), ElementsAre("typed", "bogus", "good"));
}

}  // namespace
}  // namespace mend::store
