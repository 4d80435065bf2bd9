// The SQLite connection every store opens: its statement cache, the codes its errors carry, its
// busy timeout, the modes of the files it creates and the access modes that create nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "mend/db/sqlite.h"
#include "tests/support/status_matchers.h"

namespace mend::db {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

class SqliteConnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/sqlite_conn_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = dir_ + "/x.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<SqliteConn> MustOpen(const SqliteOptions& options = {}) {
    Result<std::unique_ptr<SqliteConn>> conn = SqliteConn::Open(path_, options);
    EXPECT_TRUE(conn.ok()) << conn.status();
    return conn.ok() ? std::move(*conn) : nullptr;
  }

  static unsigned ModeOf(const std::string& path) {
    struct stat st;
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 0777;
  }

  std::string dir_;
  std::string path_;
};

TEST_F(SqliteConnTest, CachedStatementsBindStepAndReset) {
  std::unique_ptr<SqliteConn> conn = MustOpen();
  ASSERT_NE(conn, nullptr);
  MEND_ASSERT_OK(conn->Exec("CREATE TABLE t (k INTEGER, v TEXT, b BLOB, d REAL)"));
  static constexpr char kInsert[] = "INSERT INTO t VALUES (?1, ?2, ?3, ?4)";
  for (int64_t k = 1; k <= 3; ++k) {
    Result<SqliteStmt> insert = conn->Prepare(kInsert);
    MEND_ASSERT_OK(insert);
    const std::string text = "v" + std::to_string(k);
    insert->Bind(1, k).BindTextRef(2, text).BindBlob(3, "").BindDouble(4, 0.5 * k);
    MEND_ASSERT_OK(insert->Run());
    EXPECT_EQ(conn->Changes(), 1);
  }
  Result<int64_t> count = conn->QueryInt("SELECT count(*) FROM t");
  MEND_ASSERT_OK(count);
  EXPECT_EQ(*count, 3);

  Result<SqliteStmt> select = conn->Prepare("SELECT v, b, d, typeof(b) FROM t WHERE k = ?1");
  MEND_ASSERT_OK(select);
  select->Bind(1, 2);
  Result<bool> row = select->Step();
  MEND_ASSERT_OK(row);
  ASSERT_TRUE(*row);
  EXPECT_EQ(select->Text(0), "v2");
  EXPECT_EQ(select->Blob(1), "");
  EXPECT_FALSE(select->IsNull(1));
  EXPECT_EQ(select->Double(2), 1.0);
  EXPECT_EQ(select->Text(3), "blob");  // an empty blob stays a BLOB, not NULL
}

TEST_F(SqliteConnTest, ErrorsCarryTheirCodeAndSqliteText) {
  std::unique_ptr<SqliteConn> conn = MustOpen();
  ASSERT_NE(conn, nullptr);
  EXPECT_THAT(conn->Exec("SELEKT 1"), StatusIs(StatusCode::kInternal, HasSubstr("SELEKT 1")));
  MEND_ASSERT_OK(conn->Exec("CREATE TABLE t (k INTEGER PRIMARY KEY)"));
  Result<SqliteStmt> bad = conn->Prepare("INSERT INTO t VALUES (?1)");
  MEND_ASSERT_OK(bad);
  bad->Bind(7, 1);  // no such parameter: reported by Run()
  EXPECT_THAT(bad->Run(), StatusIs(StatusCode::kInternal, HasSubstr("bind")));
  EXPECT_THAT(SqliteError(nullptr, SQLITE_BUSY, "x"), StatusIs(StatusCode::kUnavailable));
  EXPECT_THAT(SqliteError(nullptr, SQLITE_LOCKED, "x"), StatusIs(StatusCode::kUnavailable));
  EXPECT_THAT(SqliteError(nullptr, SQLITE_FULL, "x"), StatusIs(StatusCode::kResourceExhausted));
  EXPECT_THAT(SqliteError(nullptr, SQLITE_CORRUPT, "x"), StatusIs(StatusCode::kDataLoss));
  EXPECT_THAT(SqliteError(nullptr, SQLITE_NOTADB, "x"), StatusIs(StatusCode::kDataLoss));
  EXPECT_THAT(SqliteError(nullptr, SQLITE_IOERR_FSYNC, "x"),
              StatusIs(StatusCode::kInternal, HasSubstr("x: disk I/O error")));
}

TEST_F(SqliteConnTest, ALockHeldLongerThanTheBusyTimeoutIsUnavailable) {
  std::unique_ptr<SqliteConn> writer = MustOpen();
  ASSERT_NE(writer, nullptr);
  MEND_ASSERT_OK(writer->Exec("PRAGMA journal_mode=WAL; CREATE TABLE t (k INTEGER)"));
  SqliteOptions options;
  options.busy_timeout = std::chrono::milliseconds(10);
  std::unique_ptr<SqliteConn> other = MustOpen(options);
  ASSERT_NE(other, nullptr);
  Status held = writer->InTransaction(SqliteConn::TxKind::kWrite, [&]() -> Status {
    EXPECT_TRUE(writer->TransactionActive());
    EXPECT_THAT(other->Exec("BEGIN IMMEDIATE"),
                StatusIs(StatusCode::kUnavailable, HasSubstr("database is locked")));
    return writer->Exec("INSERT INTO t VALUES (1)");
  });
  MEND_ASSERT_OK(held);
  EXPECT_FALSE(writer->TransactionActive());
  EXPECT_THAT(writer->InTransaction(SqliteConn::TxKind::kWrite,
                                    [] { return InternalError("body failed"); }),
              StatusIs(StatusCode::kInternal, "body failed"));
  Result<int64_t> count = other->QueryInt("SELECT count(*) FROM t");
  MEND_ASSERT_OK(count);
  EXPECT_EQ(*count, 1);
}

TEST_F(SqliteConnTest, TheDatabaseAndItsWalAndShmFilesArePrivate) {
  std::unique_ptr<SqliteConn> conn = MustOpen();
  ASSERT_NE(conn, nullptr);
  MEND_ASSERT_OK(conn->Exec("PRAGMA journal_mode=WAL; CREATE TABLE t (k INTEGER)"));
  MEND_ASSERT_OK(conn->Exec("INSERT INTO t VALUES (1)"));
  for (const std::string& file : {path_, path_ + "-wal", path_ + "-shm"}) {
    EXPECT_EQ(ModeOf(file), 0600u) << file;
  }
  conn.reset();
  ASSERT_EQ(::chmod(path_.c_str(), 0644), 0);
  conn = MustOpen();
  EXPECT_EQ(ModeOf(path_), 0600u);  // an existing world-readable file is narrowed
}

TEST_F(SqliteConnTest, ReadersCreateNothing) {
  SqliteOptions options;
  for (SqliteOptions::Access access :
       {SqliteOptions::Access::kReadOnly, SqliteOptions::Access::kExisting}) {
    options.access = access;
    EXPECT_THAT(SqliteConn::Open(path_, options),
                StatusIs(StatusCode::kInternal, HasSubstr("open " + path_)));
    EXPECT_FALSE(std::filesystem::exists(path_));
  }
}

TEST_F(SqliteConnTest, AnUnknownVfsIsAnError) {
  SqliteOptions options;
  options.vfs = "no-such-vfs";
  EXPECT_THAT(SqliteConn::Open(path_, options),
              StatusIs(StatusCode::kInternal, HasSubstr("no such vfs")));
  EXPECT_FALSE(std::filesystem::exists(path_));  // a VFS of its own creates its files itself
}

}  // namespace
}  // namespace mend::db
