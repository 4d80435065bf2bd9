#include "mend/store/sqlite_vfs.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "mend/base/fault_injection_file_system.h"
#include "mend/base/memory_file_system.h"
#include "mend/store/sqlite_store.h"
#include "tests/store/checkpoint_store_conformance.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::store::testing::CheckpointStoreConformanceTest;
using ::mend::store::testing::StoreFactoryParam;
using ::mend::store::testing::StoreTestEnv;
using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;

std::string UniqueVfsName() {
  static std::atomic<int> next{0};
  return "mend-test-vfs-" + std::to_string(next++);
}

// A connection through a VFS, closed at the end of the scope.
class Connection {
 public:
  Connection(const std::string& path, const std::string& vfs) {
    rc_ = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                          vfs.c_str());
  }
  ~Connection() { sqlite3_close_v2(db_); }
  bool ok() const { return rc_ == SQLITE_OK; }

  // Runs `sql`; returns "" on success, else SQLite's message.
  std::string Exec(const std::string& sql) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    std::string message = rc == SQLITE_OK ? "" : (error == nullptr ? "error" : error);
    sqlite3_free(error);
    return message;
  }

  // The first column of the first row of `sql`, or "<error>".
  std::string Query(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) return "<error>";
    std::string out = "<none>";
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      out = text == nullptr ? "" : text;
    } else if (rc != SQLITE_DONE) {
      out = "<error>";
    }
    sqlite3_finalize(stmt);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

class SqliteVfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MEND_ASSERT_OK(memory_.CreateDirs("/d"));
    auto vfs = SqliteVfs::Register(UniqueVfsName(), &fs_);
    MEND_ASSERT_OK(vfs);
    vfs_ = std::move(vfs).value();
  }

  MemoryFileSystem memory_;
  FaultInjectionFileSystem fs_{&memory_};
  std::unique_ptr<SqliteVfs> vfs_;
};

TEST_F(SqliteVfsTest, ANameCanBeRegisteredOnce) {
  EXPECT_THAT(SqliteVfs::Register(vfs_->name(), &fs_), StatusIs(StatusCode::kAlreadyExists));
  // It is not the default VFS.
  EXPECT_NE(sqlite3_vfs_find(nullptr), sqlite3_vfs_find(vfs_->name().c_str()));
}

TEST_F(SqliteVfsTest, TheDatabaseLivesInTheFileSystem) {
  {
    Connection db("/d/x.db", vfs_->name());
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(db.Exec("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('hello')"), "");
    EXPECT_EQ(db.Query("SELECT v FROM t"), "hello");
  }
  auto info = memory_.Stat("/d/x.db");
  MEND_ASSERT_OK(info);
  EXPECT_GT(info->size, 0u);
  EXPECT_GT(fs_.Count(FsOp::kWrite), 0);
  EXPECT_GT(fs_.Count(FsOp::kSync), 0);
}

TEST_F(SqliteVfsTest, WalModeWorksWithTwoConnections) {
  Connection a("/d/x.db", vfs_->name());
  Connection b("/d/x.db", vfs_->name());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.Query("PRAGMA journal_mode = WAL"), "wal");
  EXPECT_EQ(a.Exec("CREATE TABLE t(v INTEGER); INSERT INTO t VALUES (1)"), "");
  EXPECT_EQ(b.Query("SELECT count(*) FROM t"), "1");
  // A reader's open transaction does not block the writer, and keeps its snapshot.
  EXPECT_EQ(b.Exec("BEGIN"), "");
  EXPECT_EQ(b.Query("SELECT count(*) FROM t"), "1");
  EXPECT_EQ(a.Exec("INSERT INTO t VALUES (2)"), "");
  EXPECT_EQ(b.Query("SELECT count(*) FROM t"), "1");
  EXPECT_EQ(b.Exec("COMMIT"), "");
  EXPECT_EQ(b.Query("SELECT count(*) FROM t"), "2");
  EXPECT_TRUE(memory_.Exists("/d/x.db-wal"));
}

TEST_F(SqliteVfsTest, TheFileLockKeepsASecondWriterOut) {
  Connection a("/d/x.db", vfs_->name());
  Connection b("/d/x.db", vfs_->name());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.Exec("PRAGMA journal_mode = DELETE; CREATE TABLE t(v INTEGER)"), "");
  EXPECT_EQ(a.Exec("BEGIN IMMEDIATE"), "");
  EXPECT_NE(b.Exec("BEGIN IMMEDIATE"), "");  // database is locked
  EXPECT_EQ(a.Exec("COMMIT"), "");
  EXPECT_EQ(b.Exec("BEGIN IMMEDIATE; COMMIT"), "");
}

// journal_mode=DELETE: the rollback journal is created, synced (with its directory) and deleted
// through the VFS. The power-cut model is strict enough to show SQLite's documented caveat: with
// synchronous=FULL the journal's unlink is not synced, so a cut right after COMMIT brings the
// journal back and the transaction is rolled back; synchronous=EXTRA syncs the directory and keeps
// it. (The store runs in WAL mode, where FULL is durable.)
TEST_F(SqliteVfsTest, InRollbackModeACommitSurvivesAPowerCutWithSynchronousExtraOnly) {
  for (const std::string sync : {"FULL", "EXTRA"}) {
    SCOPED_TRACE(sync);
    const std::string path = "/d/" + sync + ".db";
    {
      Connection db(path, vfs_->name());
      ASSERT_TRUE(db.ok());
      EXPECT_EQ(db.Query("PRAGMA journal_mode = DELETE"), "delete");
      EXPECT_EQ(db.Exec("PRAGMA synchronous = " + sync + "; CREATE TABLE t(v TEXT)"), "");
      EXPECT_EQ(db.Exec("INSERT INTO t VALUES ('kept')"), "");
      MEND_ASSERT_OK(fs_.CutPower());
    }
    Connection db(path, vfs_->name());
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(db.Query("SELECT v FROM t"), sync == "EXTRA" ? "kept" : "<none>");
    EXPECT_EQ(db.Query("PRAGMA integrity_check"), "ok");
    EXPECT_FALSE(memory_.Exists(path + "-journal"));
  }
}

// A hot journal left by a crash in the middle of a transaction is rolled back at the next open.
TEST_F(SqliteVfsTest, AHotJournalIsRolledBackAfterACrash) {
  {
    Connection db("/d/x.db", vfs_->name());
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(db.Query("PRAGMA journal_mode = DELETE"), "delete");
    EXPECT_EQ(db.Exec("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('old')"), "");
    // Many pages change so that some reach the database file before the COMMIT, which then
    // fails at its first sync (the journal's): the process "dies" with a hot journal.
    EXPECT_EQ(
        db.Exec("PRAGMA cache_size = 1; BEGIN; UPDATE t SET v = 'new';"
                "CREATE TABLE big(b BLOB);"
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50) "
                "INSERT INTO big SELECT zeroblob(3000) FROM n"),
        "");
    fs_.CrashAfter(0, EIO);
    EXPECT_NE(db.Exec("COMMIT"), "");
    MEND_ASSERT_OK(fs_.CutPower());
  }
  fs_.ClearFaults();
  Connection db("/d/x.db", vfs_->name());
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(db.Query("SELECT v FROM t"), "old");
  EXPECT_EQ(db.Query("PRAGMA integrity_check"), "ok");
}

TEST_F(SqliteVfsTest, IoErrorsReachTheCaller) {
  Connection db("/d/x.db", vfs_->name());
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(db.Exec("PRAGMA journal_mode = WAL; CREATE TABLE t(v TEXT)"), "");
  fs_.FailNext(FsOp::kSync, EIO);
  EXPECT_NE(db.Exec("INSERT INTO t VALUES ('x')"), "");
  fs_.FailNext(FsOp::kWrite, ENOSPC);
  EXPECT_NE(db.Exec("INSERT INTO t VALUES ('x')"), "");
  EXPECT_EQ(db.Exec("INSERT INTO t VALUES ('y')"), "");
  EXPECT_EQ(db.Query("SELECT group_concat(v) FROM t"), "y");
}

// The whole checkpoint-store conformance suite, with the database in a MemoryFileSystem.
std::unique_ptr<CheckpointStore> MakeStoreOverMemory(const StoreTestEnv& env) {
  static MemoryFileSystem* const fs = new MemoryFileSystem();
  static SqliteVfs* const vfs = [] {
    auto registered = SqliteVfs::Register("mend-conformance-memory", fs);
    return registered.ok() ? std::move(registered).value().release() : nullptr;
  }();
  static std::atomic<int> next{0};
  if (vfs == nullptr) return nullptr;
  SqliteStoreOptions options;
  options.path = "/store" + std::to_string(next++) + ".db";
  options.vfs = vfs->name();
  options.local = env.local;
  options.process_alive = env.process_alive;
  Result<std::unique_ptr<CheckpointStore>> store = OpenSqliteStore(options, env.clock);
  EXPECT_THAT(store, IsOk());
  return store.ok() ? std::move(store).value() : nullptr;
}

INSTANTIATE_TEST_SUITE_P(SqliteVfs, CheckpointStoreConformanceTest,
                         ::testing::Values(StoreFactoryParam{"SqliteOverMemory",
                                                             MakeStoreOverMemory}),
                         testing::StoreParamName);

}  // namespace
}  // namespace mend::store
