// Leases held by real processes: a holder killed without releasing frees the run at once.

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "mend/base/clock.h"
#include "mend/store/sqlite_store.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::hours;

class SqliteStoreProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_store_proc_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    store_ = Open("parent");
    ASSERT_NE(store_, nullptr);
    RunRecord run;
    run.id = "r1";
    MEND_ASSERT_OK(store_->CreateRun(run));
    // The parent must not carry an open SQLite connection across fork().
    store_.reset();
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::unique_ptr<CheckpointStore> Open(const std::string& who) {
    SqliteStoreOptions options;
    options.path = dir_ + "/mend.db";
    options.local = LocalLeaseHolder(who);
    Result<std::unique_ptr<CheckpointStore>> store =
        OpenSqliteStore(options, *SystemClock::Default());
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // In a child process: claims r1 for an hour, writes one byte to `ready`, then waits until
  // `hold` reaches end of file (or returns at once when hold is -1). Never returns.
  [[noreturn]] void ChildClaims(int ready, int hold) {
    std::unique_ptr<CheckpointStore> store = Open("child");
    bool ok = store != nullptr && store->Claim("r1", LocalLeaseHolder("child"), hours(1)).ok();
    char byte = ok ? 'y' : 'n';
    if (write(ready, &byte, 1) != 1) _exit(3);
    if (hold >= 0) {
      while (read(hold, &byte, 1) > 0) {
      }
    }
    _exit(0);  // no Release: the lease stays in the database
  }

  std::string dir_;
  std::unique_ptr<CheckpointStore> store_;
};

TEST_F(SqliteStoreProcessTest, LeaseOfAnExitedChildIsFreeAtOnce) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ChildClaims(ready[1], -1);
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  EXPECT_EQ(byte, 'y');
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);  // reaped: no zombie left to look alive
  store_ = Open("parent");
  ASSERT_NE(store_, nullptr);
  Result<RunRecord> run = store_->GetRun("r1");
  MEND_ASSERT_OK(run);
  ASSERT_TRUE(run->lease_holder.has_value());
  EXPECT_EQ(run->lease_holder->pid, pid);
  Result<Lease> lease = store_->Claim("r1", LocalLeaseHolder("parent"), hours(1));
  MEND_ASSERT_OK(lease);
  EXPECT_EQ(lease->epoch, 2);
}

TEST_F(SqliteStoreProcessTest, LeaseOfALiveChildIsUnavailable) {
  int ready[2];
  int hold[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(hold), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(hold[1]);
    ChildClaims(ready[1], hold[0]);
  }
  close(ready[1]);
  close(hold[0]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  EXPECT_EQ(byte, 'y');
  store_ = Open("parent");
  ASSERT_NE(store_, nullptr);
  EXPECT_THAT(store_->Claim("r1", LocalLeaseHolder("parent"), hours(1)),
              StatusIs(StatusCode::kUnavailable));
  close(hold[1]);  // lets the child exit
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
  MEND_EXPECT_OK(store_->Claim("r1", LocalLeaseHolder("parent"), hours(1)));
}

TEST(LocalLeaseHolderTest, DescribesThisProcess) {
  LeaseHolder me = LocalLeaseHolder("worker");
  EXPECT_EQ(me.pid, static_cast<int64_t>(getpid()));
  EXPECT_FALSE(me.host.empty());
  EXPECT_EQ(me.id, "worker-" + std::to_string(getpid()) + "@" + me.host);
  EXPECT_TRUE(ProcessAlive(me.pid));
}

}  // namespace
}  // namespace mend::store
