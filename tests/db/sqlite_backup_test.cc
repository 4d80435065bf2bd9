// The online backup of one SQLite database: the copy is one committed state while another
// connection holds a write transaction open or keeps committing, it is private, and it refuses a
// missing source and an existing destination.
#include "mend/db/sqlite_backup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "mend/db/sqlite.h"
#include "tests/support/status_matchers.h"

namespace mend::db {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

class SqliteBackupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/sqlite_backup_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    source_ = dir_ + "/live.db";
    dest_ = dir_ + "/copy.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A connection to the source in WAL mode, as the stores keep it, with `rows` rows in table t.
  std::unique_ptr<SqliteConn> OpenSource(int rows) {
    Result<std::unique_ptr<SqliteConn>> conn = SqliteConn::Open(source_, {});
    EXPECT_TRUE(conn.ok()) << conn.status();
    if (!conn.ok()) return nullptr;
    EXPECT_TRUE((*conn)->Exec("PRAGMA journal_mode = WAL").ok());
    EXPECT_TRUE((*conn)->Exec("CREATE TABLE t (n INTEGER)").ok());
    for (int i = 0; i < rows; ++i) EXPECT_TRUE((*conn)->Exec("INSERT INTO t VALUES (1)").ok());
    return std::move(*conn);
  }

  static int64_t Count(const std::string& path, const char* sql) {
    SqliteOptions options;
    options.access = SqliteOptions::Access::kExisting;
    Result<std::unique_ptr<SqliteConn>> conn = SqliteConn::Open(path, options);
    EXPECT_TRUE(conn.ok()) << conn.status();
    if (!conn.ok()) return -1;
    Result<int64_t> n = (*conn)->QueryInt(sql);
    EXPECT_TRUE(n.ok()) << n.status();
    return n.ok() ? *n : -1;
  }

  std::string dir_, source_, dest_;
};

TEST_F(SqliteBackupTest, AnOpenWriteTransactionIsNotInTheCopy) {
  std::unique_ptr<SqliteConn> writer = OpenSource(3);
  ASSERT_NE(writer, nullptr);
  MEND_ASSERT_OK(writer->Exec("BEGIN IMMEDIATE"));
  MEND_ASSERT_OK(writer->Exec("INSERT INTO t VALUES (2)"));
  MEND_ASSERT_OK(writer->Exec("CREATE TABLE pending (n INTEGER)"));

  MEND_ASSERT_OK(BackupSqliteDatabase(source_, dest_));

  MEND_ASSERT_OK(writer->Exec("COMMIT"));
  EXPECT_EQ(Count(dest_, "SELECT count(*) FROM t"), 3);
  EXPECT_EQ(Count(dest_, "SELECT count(*) FROM sqlite_master WHERE name = 'pending'"), 0);
  EXPECT_EQ(Count(source_, "SELECT count(*) FROM t"), 4);
  // The copy keeps the source's journal mode.
  EXPECT_EQ(Count(dest_, "SELECT journal_mode = 'wal' FROM pragma_journal_mode"), 1);
}

TEST_F(SqliteBackupTest, AWriterThatKeepsCommittingNeitherTearsNorStopsTheCopy) {
  ASSERT_NE(OpenSource(1), nullptr);
  std::atomic<bool> stop{false};
  std::promise<void> first_commit;
  std::thread writer([&] {
    Result<std::unique_ptr<SqliteConn>> conn = SqliteConn::Open(source_, {});
    if (!conn.ok()) {
      first_commit.set_value();
      return;
    }
    bool signalled = false;
    while (!stop.load()) {
      // Each commit adds one row to t and one to u, so a torn copy would show the counts apart.
      Status s = (*conn)->Exec(
          "BEGIN IMMEDIATE; INSERT INTO t VALUES (3); CREATE TABLE IF NOT EXISTS u (n INTEGER); "
          "INSERT INTO u VALUES (3); COMMIT");
      if (!s.ok()) (void)(*conn)->Exec("ROLLBACK");
      if (!signalled && s.ok()) {
        signalled = true;
        first_commit.set_value();
      }
    }
    if (!signalled) first_commit.set_value();
  });
  first_commit.get_future().wait();
  const Status copied = BackupSqliteDatabase(source_, dest_);
  stop.store(true);
  writer.join();
  MEND_ASSERT_OK(copied);

  const int64_t t = Count(dest_, "SELECT count(*) FROM t");
  const int64_t u = Count(dest_, "SELECT count(*) FROM u");
  EXPECT_GE(u, 1);
  EXPECT_EQ(t, u + 1);
  EXPECT_EQ(
      Count(dest_, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), 1);
}

TEST_F(SqliteBackupTest, TheCopyIsPrivate) {
  ASSERT_NE(OpenSource(1), nullptr);
  MEND_ASSERT_OK(BackupSqliteDatabase(source_, dest_));
  struct stat st;
  ASSERT_EQ(::stat(dest_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(SqliteBackupTest, RefusesAMissingSourceAndAnExistingDestination) {
  EXPECT_THAT(BackupSqliteDatabase(source_, dest_), StatusIs(StatusCode::kNotFound));
  EXPECT_FALSE(std::filesystem::exists(dest_));

  ASSERT_NE(OpenSource(1), nullptr);
  MEND_ASSERT_OK(BackupSqliteDatabase(source_, dest_));
  const Status again = BackupSqliteDatabase(source_, dest_);
  EXPECT_THAT(again, StatusIs(StatusCode::kAlreadyExists));
  EXPECT_THAT(std::string(again.message()), HasSubstr(dest_));
  EXPECT_EQ(Count(dest_, "SELECT count(*) FROM t"), 1);
}

TEST_F(SqliteBackupTest, ASourceThatIsNotADatabaseIsDataLossAndLeavesNoCopy) {
  {
    std::FILE* f = std::fopen(source_.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("this is not a database, only some text long enough to have a header\n", f);
    std::fclose(f);
  }
  EXPECT_THAT(BackupSqliteDatabase(source_, dest_), StatusIs(StatusCode::kDataLoss));
  EXPECT_FALSE(std::filesystem::exists(dest_));
}

}  // namespace
}  // namespace mend::db
