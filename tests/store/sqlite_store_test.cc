#include "mend/store/sqlite_store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "mend/base/clock.h"
#include "mend/base/manual_clock.h"
#include "tests/store/checkpoint_store_conformance.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::store::testing::CheckpointStoreConformanceTest;
using ::mend::store::testing::StoreFactoryParam;
using ::mend::store::testing::StoreTestEnv;
using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::seconds;
using ::testing::HasSubstr;

// One directory per test binary, removed at exit; every store gets a fresh file in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "mend_store_XXXXXX";
    char* made = mkdtemp(pattern.data());
    path_ = made == nullptr ? ::testing::TempDir() : std::string(made);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string NewDbPath() { return path_ + "/store" + std::to_string(next_++) + ".db"; }

 private:
  std::string path_;
  std::atomic<int> next_{0};
};

std::string NewDbPath() {
  static TempDir dir;
  return dir.NewDbPath();
}

std::unique_ptr<CheckpointStore> MakeSqliteStore(const StoreTestEnv& env) {
  SqliteStoreOptions options;
  options.path = NewDbPath();
  options.local = env.local;
  options.process_alive = env.process_alive;
  Result<std::unique_ptr<CheckpointStore>> store = OpenSqliteStore(options, env.clock);
  EXPECT_THAT(store, IsOk());
  return store.ok() ? std::move(store).value() : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Sqlite, CheckpointStoreConformanceTest,
                         ::testing::Values(StoreFactoryParam{"Sqlite", MakeSqliteStore}),
                         testing::StoreParamName);

// Runs one SQL statement on its own connection, as another program (or a disk fault) would.
void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  std::string message = error == nullptr ? "" : error;
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.path = NewDbPath();
    options_.local = LeaseHolder{"me", "host-a", "boot-1", 100};
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<CheckpointStore> Open() {
    Result<std::unique_ptr<CheckpointStore>> store = OpenSqliteStore(options_, clock_);
    EXPECT_THAT(store, IsOk());
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // Creates `id` and saves two steps with two messages each.
  void MakeRunWithTwoSteps(const std::string& id) {
    RunRecord run;
    run.id = id;
    MEND_ASSERT_OK(store_->CreateRun(run));
    Result<Lease> lease = store_->Claim(id, options_.local, seconds(30));
    MEND_ASSERT_OK(lease);
    for (int step = 1; step <= 2; ++step) {
      Checkpoint cp;
      cp.step = step;
      cp.new_messages = {"q" + std::to_string(step), "a" + std::to_string(step)};
      cp.state = "state" + std::to_string(step);
      MEND_ASSERT_OK(store_->Save(*lease, cp, {}));
    }
    MEND_ASSERT_OK(store_->Release(*lease));
  }

  ManualClock clock_;
  SqliteStoreOptions options_;
  std::unique_ptr<CheckpointStore> store_;
};

TEST_F(SqliteStoreTest, UsesWalMode) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(options_.path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// The database and its -wal file are private to their user, also when another program left the
// database readable by others.
TEST_F(SqliteStoreTest, TheDatabaseAndItsWalArePrivate) {
  MakeRunWithTwoSteps("r1");
  const auto mode = [](const std::string& path) {
    return std::filesystem::status(path).permissions() & std::filesystem::perms::all;
  };
  const auto kPrivate = std::filesystem::perms::owner_read | std::filesystem::perms::owner_write;
  EXPECT_EQ(mode(options_.path), kPrivate);
  EXPECT_EQ(mode(options_.path + "-wal"), kPrivate);
  store_.reset();
  std::filesystem::permissions(
      options_.path, std::filesystem::perms::group_read | std::filesystem::perms::others_read,
      std::filesystem::perm_options::add);
  store_ = Open();
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(mode(options_.path), kPrivate);
}

TEST_F(SqliteStoreTest, CorruptMessageIsDataLossForThatRunOnly) {
  MakeRunWithTwoSteps("bad");
  MakeRunWithTwoSteps("good");
  // Flip the first byte of one message, keeping its stored checksum.
  RawExec(options_.path,
          "UPDATE messages SET body = CAST('x1' AS BLOB) "
          "WHERE run_id = 'bad' AND seq = 2");
  EXPECT_THAT(store_->Load("bad"), StatusIs(StatusCode::kDataLoss, HasSubstr("\"bad\"")));
  EXPECT_THAT(store_->Load("bad", 1), IsOk());  // step 1 does not include message 2
  EXPECT_THAT(store_->Fork("bad", 2, "copy"), StatusIs(StatusCode::kDataLoss));
  Result<RunSnapshot> good = store_->Load("good");
  MEND_ASSERT_OK(good);
  EXPECT_EQ(good->messages.size(), 4u);
  EXPECT_THAT(store_->ListRuns(ListOptions{}),
              ::testing::ResultOf([](const auto& r) { return r->size(); }, 2u));
}

TEST_F(SqliteStoreTest, CorruptOrMissingCheckpointRowsAreDataLoss) {
  MakeRunWithTwoSteps("bad");
  MakeRunWithTwoSteps("gap");
  RawExec(options_.path, "UPDATE checkpoints SET crc = crc + 1 WHERE run_id = 'bad' AND step = 2");
  RawExec(options_.path, "DELETE FROM messages WHERE run_id = 'gap' AND seq = 0");
  EXPECT_THAT(store_->Load("bad"), StatusIs(StatusCode::kDataLoss, HasSubstr("step 2")));
  EXPECT_THAT(store_->Load("gap"), StatusIs(StatusCode::kDataLoss, HasSubstr("missing")));
}

TEST_F(SqliteStoreTest, ACorruptNewestStateIsDataLossForThatRunOnlyInLatestStates) {
  MakeRunWithTwoSteps("bad");
  MakeRunWithTwoSteps("good");
  RawExec(options_.path, "UPDATE checkpoints SET crc = crc + 1 WHERE run_id = 'bad' AND step = 2");
  Result<std::vector<CheckpointState>> states = store_->LatestStates({"bad", "good"});
  MEND_ASSERT_OK(states);
  ASSERT_EQ(states->size(), 2u);
  EXPECT_EQ((*states)[0].run_id, "bad");
  EXPECT_THAT((*states)[0].status, StatusIs(StatusCode::kDataLoss, HasSubstr("\"bad\"")));
  EXPECT_EQ((*states)[0].state, "");
  EXPECT_EQ((*states)[1].run_id, "good");
  MEND_EXPECT_OK((*states)[1].status);
  EXPECT_EQ((*states)[1].state, store_->Load("good")->state);
}

TEST_F(SqliteStoreTest, CorruptRunsRowIsListedAsFailedWithDataLoss) {
  MakeRunWithTwoSteps("bad");
  MakeRunWithTwoSteps("typed");
  MakeRunWithTwoSteps("good");
  RawExec(options_.path, "UPDATE runs SET status = 'bogus' WHERE id = 'bad'");
  RawExec(options_.path, "UPDATE runs SET step = 'two' WHERE id = 'typed'");
  EXPECT_THAT(store_->GetRun("bad"), StatusIs(StatusCode::kDataLoss, HasSubstr("status")));
  EXPECT_THAT(store_->GetRun("typed"), StatusIs(StatusCode::kDataLoss, HasSubstr("step")));
  EXPECT_THAT(store_->Claim("bad", options_.local, seconds(30)), StatusIs(StatusCode::kDataLoss));
  MEND_EXPECT_OK(store_->GetRun("good"));
  Result<std::vector<RunRecord>> runs = store_->ListRuns(ListOptions{});
  MEND_ASSERT_OK(runs);
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].id, "bad");
  EXPECT_EQ((*runs)[0].status, RunStatus::kFailed);
  ASSERT_TRUE((*runs)[0].last_error.has_value());
  EXPECT_EQ((*runs)[0].last_error->code, "DATA_LOSS");
  EXPECT_FALSE((*runs)[0].last_error->retryable);
  EXPECT_EQ((*runs)[1].id, "good");  // same created_at: ordered by id
  EXPECT_EQ((*runs)[1].step, 2);
  EXPECT_EQ((*runs)[2].id, "typed");
  EXPECT_EQ((*runs)[2].last_error->code, "DATA_LOSS");
  MEND_EXPECT_OK(store_->DeleteRun("bad"));  // a corrupt run can still be removed
  EXPECT_THAT(store_->GetRun("bad"), StatusIs(StatusCode::kNotFound));
}

TEST_F(SqliteStoreTest, NewerSchemaIsRefused) {
  store_.reset();
  RawExec(options_.path, "UPDATE meta SET value = '5' WHERE key = 'store.schema_version'");
  EXPECT_THAT(OpenSqliteStore(options_, clock_),
              StatusIs(StatusCode::kFailedPrecondition,
                       HasSubstr("written by a newer mend (schema 5 > 4)")));
  RawExec(options_.path, "UPDATE meta SET value = 'two' WHERE key = 'store.schema_version'");
  EXPECT_THAT(OpenSqliteStore(options_, clock_), StatusIs(StatusCode::kDataLoss));
}

TEST_F(SqliteStoreTest, DataSurvivesCloseAndReopen) {
  MakeRunWithTwoSteps("r1");
  store_.reset();
  store_ = Open();
  ASSERT_NE(store_, nullptr);
  Result<RunSnapshot> snap = store_->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->step, 2);
  EXPECT_EQ(snap->state, "state2");
  EXPECT_THAT(snap->messages, ::testing::ElementsAre("q1", "a1", "q2", "a2"));
  EXPECT_EQ(snap->run.epoch, 1);
}

TEST_F(SqliteStoreTest, HistoryLimitIsConfigurable) {
  options_.history_limit = 0;
  EXPECT_THAT(OpenSqliteStore(options_, clock_), StatusIs(StatusCode::kFailedPrecondition));
  options_.history_limit = 1;
  store_ = Open();
  MakeRunWithTwoSteps("r1");
  EXPECT_EQ(store_->History("r1")->size(), 1u);
  EXPECT_THAT(store_->Load("r1", 1), StatusIs(StatusCode::kNotFound));
}

TEST_F(SqliteStoreTest, PendingWalksThePartialIndex) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(options_.path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  const char* sql =
      "EXPLAIN QUERY PLAN SELECT id FROM runs WHERE status <> 'completed' "
      "ORDER BY created_at, id LIMIT -1";
  ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK);
  std::string plan;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    plan += reinterpret_cast<const char*>(sqlite3_column_text(stmt, 3));
    plan += "\n";
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  EXPECT_THAT(plan, HasSubstr("runs_unfinished"));
  EXPECT_THAT(plan, ::testing::Not(HasSubstr("TEMP B-TREE")));
}

}  // namespace
}  // namespace mend::store
