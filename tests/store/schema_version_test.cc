// Reading the runs store's schema version without changing the file (mend migrate).
#include "mend/store/schema_version.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "mend/base/manual_clock.h"
#include "mend/store/sqlite_store.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

class SqliteSchemaVersionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_schema_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/mend.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Exec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(db);
  }

  std::string dir_;
  std::string path_;
};

TEST_F(SqliteSchemaVersionTest, AMissingFileIsVersionZeroAndIsNotCreated) {
  EXPECT_THAT(ReadSqliteStoreSchemaVersion(path_), IsOkAndHolds(0));
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(SqliteSchemaVersionTest, AFileWithoutTheStoreIsVersionZero) {
  Exec("CREATE TABLE other (x INTEGER)");
  EXPECT_THAT(ReadSqliteStoreSchemaVersion(path_), IsOkAndHolds(0));
  // Another module's key in meta is not the store's version.
  Exec(
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); "
      "INSERT INTO meta VALUES ('memory.schema_version', '3')");
  EXPECT_THAT(ReadSqliteStoreSchemaVersion(path_), IsOkAndHolds(0));
}

TEST_F(SqliteSchemaVersionTest, ReadsTheVersionAnOpenWroteAndWhatAnOlderOneLeft) {
  ManualClock clock;
  SqliteStoreOptions options;
  options.path = path_;
  MEND_ASSERT_OK(OpenSqliteStore(options, clock));
  EXPECT_THAT(ReadSqliteStoreSchemaVersion(path_), IsOkAndHolds(kSqliteStoreSchemaVersion));
  Exec("UPDATE meta SET value = '2' WHERE key = 'store.schema_version'");
  EXPECT_THAT(ReadSqliteStoreSchemaVersion(path_), IsOkAndHolds(2));
  // A newer version is read as it is: refusing it is the caller's decision.
  Exec("UPDATE meta SET value = '40' WHERE key = 'store.schema_version'");
  EXPECT_THAT(ReadSqliteStoreSchemaVersion(path_), IsOkAndHolds(40));
  // Reading leaves no -wal or -shm file behind.
  EXPECT_FALSE(std::filesystem::exists(path_ + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path_ + "-shm"));
}

TEST_F(SqliteSchemaVersionTest, AnUnreadableVersionOrAForeignFileIsDataLoss) {
  Exec(
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); "
      "INSERT INTO meta VALUES ('store.schema_version', 'four')");
  EXPECT_THAT(ReadSqliteStoreSchemaVersion(path_),
              StatusIs(StatusCode::kDataLoss, HasSubstr("store.schema_version 'four'")));
  std::filesystem::remove(path_);
  std::ofstream(path_) << std::string(4096, 'z');
  EXPECT_THAT(ReadSqliteStoreSchemaVersion(path_), StatusIs(StatusCode::kDataLoss));
}

}  // namespace
}  // namespace mend::store
