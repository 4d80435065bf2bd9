// The SQLite store gives the pages a prune frees back to the file system.

#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "mend/base/manual_clock.h"
#include "mend/store/sqlite_store.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::IsOk;
using std::chrono::hours;
using std::chrono::seconds;

// The first column of the first row of `sql`, read on a connection of its own.
int64_t RawInt(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK);
  int64_t value = -1;
  if (sqlite3_step(stmt) == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

class SqlitePruneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_prune_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    options_.path = dir_ + "/mend.db";
    options_.local = LeaseHolder{"me", "host-a", "boot-1", 100};
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void Open() {
    Result<std::unique_ptr<CheckpointStore>> store = OpenSqliteStore(options_, clock_);
    ASSERT_THAT(store, IsOk());
    store_ = std::move(store).value();
  }

  // `runs` completed runs of `steps` checkpoints, each with a 16 KiB state.
  void MakeCompletedRuns(int runs, int steps) {
    for (int i = 0; i < runs; ++i) {
      RunRecord run;
      run.id = "r" + std::to_string(i);
      MEND_ASSERT_OK(store_->CreateRun(run));
      Result<Lease> lease = store_->Claim(run.id, options_.local, seconds(30));
      MEND_ASSERT_OK(lease);
      for (int step = 1; step <= steps; ++step) {
        Checkpoint cp;
        cp.step = step;
        cp.new_messages = {"message " + std::to_string(step)};
        cp.state = std::string(16 * 1024, static_cast<char>('a' + step % 26));
        RunUpdate update;
        if (step == steps) update.status = RunStatus::kCompleted;
        MEND_ASSERT_OK(store_->Save(*lease, cp, update));
      }
      MEND_ASSERT_OK(store_->Release(*lease));
    }
  }

  PruneReport MustPrune(PruneMode mode) {
    Result<PruneReport> report =
        store_->Prune({clock_.Now() - hours(24 * 30), PruneScope::kHistory, mode});
    EXPECT_THAT(report, IsOk());
    return report.ok() ? *report : PruneReport{};
  }

  std::string dir_;
  ManualClock clock_;
  SqliteStoreOptions options_;
  std::unique_ptr<CheckpointStore> store_;
};

TEST_F(SqlitePruneTest, ANewDatabaseUsesIncrementalAutoVacuum) {
  Open();
  EXPECT_EQ(RawInt(options_.path, "PRAGMA auto_vacuum"), 2);
}

TEST_F(SqlitePruneTest, PruneGivesTheFreedPagesBack) {
  Open();
  MakeCompletedRuns(4, 10);
  clock_.Advance(hours(24 * 31));
  const int64_t pages_before = RawInt(options_.path, "PRAGMA page_count");

  PruneReport dry = MustPrune(PruneMode::kDryRun);
  EXPECT_EQ(dry.checkpoints, 36);
  EXPECT_EQ(RawInt(options_.path, "PRAGMA page_count"), pages_before);

  PruneReport report = MustPrune(PruneMode::kApply);
  EXPECT_EQ(report.checkpoints, 36);
  EXPECT_EQ(report.bytes, 36 * 16 * 1024);
  EXPECT_EQ(RawInt(options_.path, "PRAGMA freelist_count"), 0);
  // 36 states of 16 KiB are at least 72 pages of 8 KiB.
  EXPECT_LE(RawInt(options_.path, "PRAGMA page_count"), pages_before - 72);
}

TEST_F(SqlitePruneTest, ADatabaseWithoutAutoVacuumIsVacuumedAndConverted) {
  // A mend.db created before the store set auto_vacuum: another table came first.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(options_.path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE other (x)", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  Open();
  ASSERT_EQ(RawInt(options_.path, "PRAGMA auto_vacuum"), 0);
  MakeCompletedRuns(2, 10);
  clock_.Advance(hours(24 * 31));
  const int64_t pages_before = RawInt(options_.path, "PRAGMA page_count");

  EXPECT_EQ(MustPrune(PruneMode::kApply).checkpoints, 18);
  EXPECT_EQ(RawInt(options_.path, "PRAGMA freelist_count"), 0);
  EXPECT_EQ(RawInt(options_.path, "PRAGMA auto_vacuum"), 2);
  EXPECT_LE(RawInt(options_.path, "PRAGMA page_count"), pages_before - 36);
}

}  // namespace
}  // namespace mend::store
