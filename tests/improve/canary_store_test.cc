// The SQLite canary store: the conformance suite on a file of a temporary home, plus what only
// SQLite has (a private file shared with the run store, processes of one home, damaged rows); and
// the state names and outcome sums every store shares.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "mend/store/checkpoint_store.h"
#include "mend/store/sqlite_store.h"
#include "tests/improve/canary_store_conformance.h"
#include "tests/support/status_matchers.h"

namespace mend::improve::testing {
namespace {

// A temporary home whose mend.db every store of the harness opens.
class SqliteHarness : public CanaryStoreHarness {
 public:
  SqliteHarness() {
    std::string pattern = ::testing::TempDir() + "mend_canary_XXXXXX";
    EXPECT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  ~SqliteHarness() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  Result<std::unique_ptr<CanaryStore>> Open(Clock& clock) override {
    return OpenSqliteCanaryStore(path(), clock);
  }
  std::string path() const { return dir_ + "/mend.db"; }

 private:
  std::string dir_;
};

// Runs `sql` on a connection of its own, as another program would.
void RawSqliteExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error == nullptr ? "" : error);
  sqlite3_free(error);
  sqlite3_close(db);
}

class SqliteCanaryStoreTest : public CanaryStoreConformanceTest {
 protected:
  const std::string& path() {
    path_ = static_cast<SqliteHarness*>(harness_.get())->path();
    return path_;
  }
  std::string path_;
};

TEST_P(SqliteCanaryStoreTest, TheDatabaseIsPrivateToItsUser) {
  struct stat st {};
  ASSERT_EQ(stat(path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_P(SqliteCanaryStoreTest, TheRunStoreOpensTheSameFileAndLeavesTheCanariesAlone) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  store_.reset();
  store::SqliteStoreOptions options;
  options.path = path();
  Result<std::unique_ptr<store::CheckpointStore>> runs = store::OpenSqliteStore(options, clock_);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  store_ = OpenStore();
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(store_->Get(kProposal)->agent_dir, kAgent);
  // Opened with the run store's database already open: nothing to create, nothing refused.
  std::unique_ptr<CanaryStore> again = OpenStore();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->List()->size(), 1u);
}

TEST_P(SqliteCanaryStoreTest, AnUnknownStateIsDataLossNamingTheCanary) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  RawSqliteExec(path(),
                "PRAGMA ignore_check_constraints = ON; UPDATE canaries SET state = 'paused'");
  // (Running looks for the state 'running' only, so it finds none.)
  for (const Status& s : {store_->Get(kProposal).status(), store_->List().status(),
                          store_->Decide(kProposal, Promote).status()}) {
    EXPECT_THAT(s, StatusIs(StatusCode::kDataLoss, HasSubstr(kProposal)));
    EXPECT_THAT(s.message(), HasSubstr("unknown canary state \"paused\""));
  }
}

TEST_P(SqliteCanaryStoreTest, AnUnknownRunStatusIsDataLossNamingTheRun) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  MEND_ASSERT_OK(store_->RecordOutcome(
      MakeOutcome(kProposal, "run-1", kBaselineArm, store::RunStatus::kCompleted)));
  RawSqliteExec(path(), "UPDATE canary_runs SET status = 'exploded'");
  Status s = store_->Outcomes(kProposal).status();
  EXPECT_THAT(s, StatusIs(StatusCode::kDataLoss, HasSubstr("run-1")));
  bool called = false;
  EXPECT_THAT(store_
                  ->Decide(kProposal,
                           [&](Canary& c, const auto& outcomes) {
                             called = true;
                             return Promote(c, outcomes);
                           })
                  .status(),
              StatusIs(StatusCode::kDataLoss));
  EXPECT_FALSE(called);
  EXPECT_EQ(store_->Get(kProposal)->state, CanaryState::kRunning);
}

// The canaries keep their version under their own key of mend.db's meta table: written once,
// read by `mend version --verbose`, and a newer one (or one that is not a number) refuses to open.
TEST_P(SqliteCanaryStoreTest, ItsSchemaVersionIsKeptAndANewerOneIsRefused) {
  EXPECT_EQ(*ReadSqliteCanaryStoreSchemaVersion(path()), CanaryStoreSchemaVersion());
  store_.reset();
  RawSqliteExec(path(), "UPDATE meta SET value = '2' WHERE key = 'canary.schema_version'");
  ManualClock clock;
  EXPECT_THAT(OpenSqliteCanaryStore(path(), clock).status(),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("newer mend")));
  RawSqliteExec(path(), "UPDATE meta SET value = 'x' WHERE key = 'canary.schema_version'");
  EXPECT_THAT(OpenSqliteCanaryStore(path(), clock).status(),
              StatusIs(StatusCode::kDataLoss, HasSubstr("canary schema version")));
  RawSqliteExec(path(), "UPDATE meta SET value = '1' WHERE key = 'canary.schema_version'");
  store_ = OpenStore();
  ASSERT_NE(store_, nullptr);
}

TEST(SqliteCanaryStoreOpenTest, AFileThatIsNotADatabaseIsRefused) {
  std::string pattern = ::testing::TempDir() + "mend_canary_XXXXXX";
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const std::string path = pattern + "/mend.db";
  {
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs("this is not a SQLite database, only text long enough to fill a header page", f);
    fclose(f);
  }
  ManualClock clock;
  EXPECT_THAT(OpenSqliteCanaryStore(path, clock).status(), StatusIs(StatusCode::kDataLoss));
  std::error_code ignored;
  std::filesystem::remove_all(pattern, ignored);
}

TEST(CanaryStateTest, NamesParseBack) {
  for (CanaryState s : {CanaryState::kRunning, CanaryState::kPromoted, CanaryState::kRolledBack}) {
    EXPECT_THAT(ParseCanaryState(CanaryStateName(s)), ::mend::testing::IsOkAndHolds(s));
  }
  EXPECT_EQ(CanaryStateName(CanaryState::kRolledBack), "rolled_back");
  for (const char* bad : {"", "Running", "rolled back", "decided"}) {
    EXPECT_THAT(ParseCanaryState(bad).status(), StatusIs(StatusCode::kInvalidArgument));
  }
}

TEST(SumOutcomesTest, StartsFromZeroAndCountsEachArmApart) {
  ArmOutcomes baseline;
  baseline.runs = 7;  // whatever the arms held before is replaced
  ArmOutcomes proposal;
  proposal.failed = 3;
  CanaryRunOutcome failed;
  failed.arm = "imp-x";
  failed.run.status = store::RunStatus::kFailed;
  failed.run.cost_usd = 0.5;
  CanaryRunOutcome done;
  done.arm = std::string(kBaselineArm);
  done.run.status = store::RunStatus::kCompleted;
  CanaryRunOutcome waiting = done;
  waiting.run.status = store::RunStatus::kWaiting;
  SumOutcomes({failed, done, waiting, done}, baseline, proposal);
  EXPECT_EQ(baseline.runs, 2);
  EXPECT_EQ(baseline.successes, 2);
  EXPECT_EQ(proposal.runs, 1);
  EXPECT_EQ(proposal.failed, 1);
  EXPECT_EQ(proposal.successes, 0);
  EXPECT_DOUBLE_EQ(proposal.cost_usd, 0.5);

  SumOutcomes({}, baseline, proposal);
  EXPECT_EQ(baseline.runs, 0);
  EXPECT_EQ(proposal.runs, 0);
}

const std::vector<CanaryStoreParam>& Params() {
  static const std::vector<CanaryStoreParam> params = {
      {"Sqlite", [] { return std::make_unique<SqliteHarness>(); }}};
  return params;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Sqlite, CanaryStoreConformanceTest, ::testing::ValuesIn(Params()),
                         CanaryStoreParamName);
INSTANTIATE_TEST_SUITE_P(Sqlite, SqliteCanaryStoreTest, ::testing::ValuesIn(Params()),
                         CanaryStoreParamName);

}  // namespace mend::improve::testing
