// The SQLite store's WAL checkpoints run on a thread of their own, outside every commit; the
// common save is one fenced UPDATE; leases change the lease columns alone.

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/store/sqlite_store.h"
#include "store/sqlite_store_impl.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::hours;
using std::chrono::minutes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kPageBytes = 8192;  // the store's page size (sqlite_store.cc)

// A connection of the test's own to the database file.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
  }
  ~RawDb() { sqlite3_close(db_); }
  void Exec(const std::string& sql) {
    char* error = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    std::string message = error == nullptr ? "" : error;
    sqlite3_free(error);
    ASSERT_EQ(rc, SQLITE_OK) << sql << ": " << message;
  }
  int64_t Int(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    int64_t value = -1;
    if (sqlite3_step(stmt) == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
  }

 private:
  sqlite3* db_ = nullptr;
};

Checkpoint Cp(int64_t step, size_t bytes = 4096) {
  Checkpoint cp;
  cp.step = step;
  cp.new_messages = {std::string(bytes, static_cast<char>('a' + step % 26))};
  cp.state = "state" + std::to_string(step);
  return cp;
}

int64_t FileBytes(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

class SqliteWalCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_walcp_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    options_.path = dir_ + "/mend.db";
    options_.local = LeaseHolder{"me", "host-a", "boot-1", static_cast<int64_t>(getpid())};
    options_.wal_checkpoint_pages = 16;
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void Open() {
    store_.reset();
    Result<std::unique_ptr<CheckpointStore>> store = OpenSqliteStore(options_, clock_);
    ASSERT_THAT(store, IsOk());
    store_ = std::move(store).value();
    impl_ = dynamic_cast<internal::SqliteStore*>(store_.get());
    ASSERT_NE(impl_, nullptr);
  }

  Lease MakeClaimedRun(const std::string& id) {
    RunRecord run;
    run.id = id;
    EXPECT_THAT(store_->CreateRun(run), IsOk());
    Result<Lease> lease = store_->Claim(id, options_.local, hours(1));
    EXPECT_THAT(lease, IsOk());
    return lease.ok() ? *lease : Lease{};
  }

  std::string dir_;
  ManualClock clock_;
  SqliteStoreOptions options_;
  std::unique_ptr<CheckpointStore> store_;
  internal::SqliteStore* impl_ = nullptr;
};

TEST_F(SqliteWalCheckpointTest, TheThreadCheckpointsAndTheWalStaysSmall) {
  Open();
  ASSERT_NE(impl_->checkpointer(), nullptr);
  Lease lease = MakeClaimedRun("r1");
  // 200 saves of 4 KiB write about 200 pages: without checkpoints the WAL would hold them all.
  for (int step = 1; step <= 200; ++step) {
    MEND_ASSERT_OK(store_->Save(lease, Cp(step), {}));
    impl_->checkpointer()->WaitIdle();
  }
  internal::WalCheckpointer::Stats stats = impl_->checkpointer()->stats();
  EXPECT_GT(stats.checkpoints, 0);
  EXPECT_EQ(stats.failures, 0);
  // A commit copies at most the few frames a thread's checkpoint left (the frames of the commit
  // that asked for it, which that commit's own snapshot kept from it): once per thread's pass.
  EXPECT_LE(impl_->write_stats().inline_checkpoints, stats.checkpoints);
  // The WAL file is reused from its start once a checkpoint copied it all: it never grew past
  // the threshold and one commit.
  EXPECT_LT(FileBytes(options_.path + "-wal"), 4 * 16 * kPageBytes);
  Result<RunSnapshot> snap = store_->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->step, 200);
  EXPECT_EQ(snap->messages.size(), 200u);
}

TEST_F(SqliteWalCheckpointTest, ACommitCheckpointsItselfWhenTheWalOutgrowsTheThread) {
  Open();
  Lease lease = MakeClaimedRun("r1");
  MEND_ASSERT_OK(store_->Save(lease, Cp(1), {}));
  {
    // A reader holding an old snapshot keeps every checkpoint from copying past it, so the WAL
    // grows whatever the thread does.
    RawDb reader(options_.path);
    reader.Exec("BEGIN");
    EXPECT_EQ(reader.Int("SELECT step FROM runs WHERE id = 'r1'"), 1);
    for (int step = 2; step <= 120; ++step) MEND_ASSERT_OK(store_->Save(lease, Cp(step), {}));
    EXPECT_GT(impl_->write_stats().inline_checkpoints, 0);
    EXPECT_EQ(reader.Int("SELECT step FROM runs WHERE id = 'r1'"), 1);  // still its snapshot
    reader.Exec("COMMIT");
  }
  impl_->checkpointer()->WaitIdle();
  EXPECT_EQ(store_->Load("r1")->messages.size(), 120u);
}

TEST_F(SqliteWalCheckpointTest, ZeroLeavesTheCheckpointsToSqlite) {
  options_.wal_checkpoint_pages = 0;
  Open();
  EXPECT_EQ(impl_->checkpointer(), nullptr);
  Lease lease = MakeClaimedRun("r1");
  for (int step = 1; step <= 150; ++step) MEND_ASSERT_OK(store_->Save(lease, Cp(step), {}));
  EXPECT_EQ(store_->Load("r1")->step, 150);
}

TEST_F(SqliteWalCheckpointTest, ANegativeThresholdIsRefused) {
  options_.wal_checkpoint_pages = -1;
  EXPECT_THAT(OpenSqliteStore(options_, clock_),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("wal_checkpoint_pages")));
}

TEST_F(SqliteWalCheckpointTest, CheckpointedSavesSurviveAReopen) {
  Open();
  Lease lease = MakeClaimedRun("r1");
  for (int step = 1; step <= 60; ++step) {
    MEND_ASSERT_OK(store_->Save(lease, Cp(step), {}));
    impl_->checkpointer()->WaitIdle();
  }
  store_.reset();
  // The store was the file's last connection: the WAL is gone and the database holds everything.
  EXPECT_FALSE(std::filesystem::exists(options_.path + "-wal"));
  Open();
  Result<RunSnapshot> snap = store_->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->step, 60);
  EXPECT_EQ(snap->messages.size(), 60u);
}

TEST_F(SqliteWalCheckpointTest, TheCommonSaveTakesTheOneStatementPath) {
  Open();
  Lease lease = MakeClaimedRun("r1");
  for (int step = 1; step <= 60; ++step) MEND_ASSERT_OK(store_->Save(lease, Cp(step, 10), {}));
  EXPECT_EQ(impl_->write_stats().slow_saves, 0);
  // The history keeps the newest 50 checkpoints (the default), trimmed as before.
  Result<std::vector<CheckpointInfo>> history = store_->History("r1");
  MEND_ASSERT_OK(history);
  ASSERT_EQ(history->size(), 50u);
  EXPECT_EQ(history->front().step, 11);
  EXPECT_EQ(history->back().step, 60);
  EXPECT_EQ(history->back().message_count, 60);
}

TEST_F(SqliteWalCheckpointTest, AFailedFenceWritesNothingAndSaysWhy) {
  Open();
  Lease lease = MakeClaimedRun("r1");
  MEND_ASSERT_OK(store_->Save(lease, Cp(1, 10), {}));
  clock_.Advance(hours(2));  // past the lease
  EXPECT_THAT(store_->Save(lease, Cp(2, 10), {}),
              StatusIs(StatusCode::kAborted, HasSubstr("expired at")));
  EXPECT_EQ(impl_->write_stats().slow_saves, 1);
  Lease again = store_->Claim("r1", options_.local, hours(1)).value();
  EXPECT_THAT(store_->Save(lease, Cp(2, 10), {}),
              StatusIs(StatusCode::kAborted, HasSubstr("stale")));
  EXPECT_THAT(store_->Save(again, Cp(3, 10), {}),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("cannot save step 3")));
  Result<RunSnapshot> snap = store_->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->step, 1);
  EXPECT_EQ(snap->messages.size(), 1u);
  EXPECT_EQ(store_->History("r1")->size(), 1u);
  MEND_ASSERT_OK(store_->Save(again, Cp(2, 10), {}));
  EXPECT_EQ(store_->Load("r1")->messages.size(), 2u);
}

TEST_F(SqliteWalCheckpointTest, LeasesAndSavesRewriteNoColumnButTheirOwn) {
  Open();
  RawDb raw(options_.path);
  // A trigger that fires only when an UPDATE names one of the columns a lease must not touch.
  raw.Exec(
      "CREATE TABLE touched (what TEXT);"
      "CREATE TRIGGER runs_touched AFTER UPDATE OF status, task, agent, agent_dir, metadata, "
      "attempts, waiting, error_code, next_attempt_at, parent_id, created_at ON runs "
      "BEGIN INSERT INTO touched VALUES (NEW.id); END;");
  Lease lease = MakeClaimedRun("r1");
  MEND_ASSERT_OK(store_->Save(lease, Cp(1, 10), {}));
  Result<Lease> renewed = store_->Renew(lease, hours(1));
  MEND_ASSERT_OK(renewed);
  MEND_ASSERT_OK(store_->Release(*renewed));
  Result<Lease> again = store_->Claim("r1", options_.local, minutes(5));
  MEND_ASSERT_OK(again);
  EXPECT_EQ(again->epoch, lease.epoch + 1);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM touched"), 0);
  // An update of the status still writes the row as before.
  RunUpdate update;
  update.status = RunStatus::kCompleted;
  MEND_ASSERT_OK(store_->Update(*again, update));
  EXPECT_EQ(raw.Int("SELECT count(*) FROM touched"), 1);
  Result<RunRecord> run = store_->GetRun("r1");
  MEND_ASSERT_OK(run);
  EXPECT_EQ(run->status, RunStatus::kCompleted);
  EXPECT_EQ(run->step, 1);
  EXPECT_EQ(run->epoch, again->epoch);
}

}  // namespace
}  // namespace mend::store
