// Power cuts under the SQLite checkpoint store's own files: the database, its WAL and its
// journals live in a MemoryFileSystem behind a FaultInjectionFileSystem (through SqliteVfs), and
// the power goes out at every operation that changes them. After each cut the store must open,
// the database must pass PRAGMA integrity_check, and every save that returned OK must be there.
//
// The store runs as in production: WAL mode, synchronous=FULL. Everything is deterministic: the
// clock is manual and the fault points are counted operations.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "mend/base/fault_injection_file_system.h"
#include "mend/base/manual_clock.h"
#include "mend/base/memory_file_system.h"
#include "mend/store/prune.h"
#include "mend/store/sqlite_store.h"
#include "mend/store/sqlite_vfs.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::seconds;

constexpr char kDir[] = "/home";
constexpr char kPath[] = "/home/store.db";
constexpr int kRuns = 3;
constexpr int kSteps = 5;

std::string RunId(int run) { return "run-" + std::to_string(run); }

// The two messages step `step` of run `run` adds; the second is large enough to need overflow
// pages, so a save writes several pages.
std::vector<std::string> StepMessages(int run, int64_t step) {
  const std::string tag = std::to_string(run) + "." + std::to_string(step);
  return {"user " + tag,
          "assistant " + tag + " " + std::string(9000, static_cast<char>('a' + run))};
}

std::string StepState(int run, int64_t step) {
  return "state " + std::to_string(run) + "." + std::to_string(step);
}

// What the workload was told about one run.
struct RunModel {
  bool create_attempted = false;
  bool created = false;   // CreateRun returned OK
  int64_t acked = 0;      // the last step whose Save returned OK
  int64_t attempted = 0;  // the last step a Save was started for
};

enum class Mode {
  kStopAtFirstError,  // a crash: the workload ends with the first failed operation
  kRetryOnce,         // a transient fault: a failed save is retried once, then the run goes on
};

std::array<FsOp, 13> AllOps() {
  return {FsOp::kOpen,       FsOp::kRead,   FsOp::kWrite,   FsOp::kSync,   FsOp::kTruncate,
          FsOp::kClose,      FsOp::kRename, FsOp::kSyncDir, FsOp::kUnlink, FsOp::kList,
          FsOp::kCreateDirs, FsOp::kStat,   FsOp::kLock};
}

int ChangingOps(const FaultInjectionFileSystem& fs) {
  int n = 0;
  for (FsOp op : {FsOp::kWrite, FsOp::kSync, FsOp::kTruncate, FsOp::kRename, FsOp::kSyncDir,
                  FsOp::kUnlink, FsOp::kCreateDirs}) {
    n += fs.Count(op);
  }
  return n;
}

// One machine: a disk, the store's process, and what the store acknowledged.
class Machine {
 public:
  Machine() {
    static std::atomic<int> next{0};
    auto vfs = SqliteVfs::Register("mend-power-cut-" + std::to_string(next++), &fs_);
    EXPECT_TRUE(vfs.ok()) << vfs.status();
    if (vfs.ok()) vfs_ = std::move(vfs).value();
    EXPECT_TRUE(memory_.CreateDirs(kDir).ok());
    options_.path = kPath;
    options_.vfs = vfs_ == nullptr ? "" : vfs_->name();
    options_.history_limit = 3;  // Saves also delete old checkpoints.
    options_.local = LeaseHolder{"me", "host-a", "boot-1", 100};
    options_.process_alive = [](int64_t) { return false; };  // The old process is dead.
  }

  ~Machine() {
    store_.reset();  // Before the VFS goes.
  }

  FaultInjectionFileSystem& fs() { return fs_; }
  const RunModel& run(int r) const { return runs_[r]; }

  // Opens the store, creates kRuns runs and saves kSteps checkpoints in each. After the first run
  // a second connection checkpoints the WAL into the database file; after the second the store
  // is closed (which checkpoints and deletes the WAL) and opened again. Returns the first error.
  Status Workload(Mode mode) {
    MEND_RETURN_IF_ERROR(Open());
    for (int r = 0; r < kRuns; ++r) {
      RunRecord record;
      record.id = RunId(r);
      record.agent = "a";
      record.agent_dir = "agents/a";
      record.task = "task " + std::to_string(r);
      runs_[r].create_attempted = true;
      MEND_RETURN_IF_ERROR(Retry(mode, [&] { return store_->CreateRun(record); }));
      runs_[r].created = true;
      Result<Lease> lease = store_->Claim(record.id, options_.local, seconds(30));
      if (!lease.ok() && mode == Mode::kRetryOnce) {
        lease = store_->Claim(record.id, options_.local, seconds(30));
      }
      MEND_RETURN_IF_ERROR(lease.status());
      for (int64_t step = 1; step <= kSteps; ++step) {
        Checkpoint cp;
        cp.step = step;
        cp.new_messages = StepMessages(r, step);
        cp.state = StepState(r, step);
        runs_[r].attempted = step;
        Status saved = store_->Save(*lease, cp, {});
        if (!saved.ok() && mode == Mode::kRetryOnce) saved = SaveAgainIfLost(RunId(r), *lease, cp);
        MEND_RETURN_IF_ERROR(saved);
        runs_[r].acked = step;
        clock_.Advance(seconds(1));
      }
      MEND_RETURN_IF_ERROR(Retry(mode, [&] { return store_->Release(*lease); }));
      if (r == 0) {
        MEND_RETURN_IF_ERROR(ScratchRunPruned(mode));
        MEND_RETURN_IF_ERROR(Retry(mode, [&] { return CheckpointWal(); }));
      }
      if (r == 1) {
        store_.reset();
        MEND_RETURN_IF_ERROR(Retry(mode, [&] { return Open(); }));
      }
    }
    return OkStatus();
  }

  // The process dies (nothing it does from now on reaches the disk), then the power goes out and
  // comes back.
  void Crash() {
    for (FsOp op : AllOps()) fs_.FailAlways(op, EIO);
    store_.reset();
    EXPECT_TRUE(fs_.CutPower().ok());
    fs_.ClearFaults();
  }

  // After Crash(): the store opens, the database is intact, every acknowledged save is there and
  // the store takes new saves.
  void Verify() {
    MEND_ASSERT_OK(Open());
    EXPECT_EQ(IntegrityCheck(), "ok");
    for (int r = 0; r < kRuns; ++r) {
      SCOPED_TRACE(RunId(r));
      const RunModel& m = runs_[r];
      Result<RunSnapshot> snapshot = store_->Load(RunId(r));
      if (!snapshot.ok()) {
        EXPECT_EQ(snapshot.status().code(), StatusCode::kNotFound) << snapshot.status();
        EXPECT_FALSE(m.created) << "a run whose creation returned OK is lost";
        continue;
      }
      EXPECT_TRUE(m.create_attempted);
      // Every acknowledged step is there; the step in flight at the cut may or may not be.
      EXPECT_GE(snapshot->step, m.acked) << "an acknowledged save is lost";
      EXPECT_LE(snapshot->step, m.attempted);
      std::vector<std::string> messages;
      for (int64_t step = 1; step <= snapshot->step; ++step) {
        for (std::string& message : StepMessages(r, step)) messages.push_back(std::move(message));
      }
      EXPECT_EQ(snapshot->messages, messages);
      if (snapshot->step > 0) {
        EXPECT_EQ(snapshot->state, StepState(r, snapshot->step));
      }
    }
    // A pruned run stays gone; a created one that no prune was started for is there.
    Result<RunRecord> scratch = store_->GetRun("scratch");
    if (scratch_.pruned) {
      EXPECT_THAT(scratch, StatusIs(StatusCode::kNotFound)) << "a pruned run came back";
    } else if (scratch_.created && !scratch_.prune_attempted) {
      EXPECT_THAT(scratch, IsOk()) << "a run whose creation returned OK is lost";
    }
    // Still writable: a new run takes a save.
    RunRecord record;
    record.id = "after";
    record.agent = "a";
    record.agent_dir = "agents/a";
    MEND_ASSERT_OK(store_->CreateRun(record));
    Result<Lease> lease = store_->Claim("after", options_.local, seconds(30));
    MEND_ASSERT_OK(lease);
    Checkpoint cp;
    cp.step = 1;
    cp.new_messages = {"m"};
    MEND_EXPECT_OK(store_->Save(*lease, cp, {}));
  }

 private:
  Status Open() {
    store_.reset();
    MEND_ASSIGN_OR_RETURN(store_, OpenSqliteStore(options_, clock_));
    return OkStatus();
  }

  static Status Retry(Mode mode, const std::function<Status()>& op) {
    Status s = op();
    if (!s.ok() && mode == Mode::kRetryOnce) s = op();
    return s;
  }

  // A completed run with two checkpoints, then pruned whole: deletes, a free list and an
  // incremental vacuum that shrinks the database.
  Status ScratchRunPruned(Mode mode) {
    RunRecord record;
    record.id = "scratch";
    record.agent = "a";
    record.agent_dir = "agents/a";
    scratch_.create_attempted = true;
    MEND_RETURN_IF_ERROR(Retry(mode, [&] { return store_->CreateRun(record); }));
    scratch_.created = true;
    Result<Lease> lease = store_->Claim(record.id, options_.local, seconds(30));
    if (!lease.ok() && mode == Mode::kRetryOnce) {
      lease = store_->Claim(record.id, options_.local, seconds(30));
    }
    MEND_RETURN_IF_ERROR(lease.status());
    for (int64_t step = 1; step <= 2; ++step) {
      Checkpoint cp;
      cp.step = step;
      cp.new_messages = StepMessages(9, step);
      Status saved = store_->Save(*lease, cp, {});
      if (!saved.ok() && mode == Mode::kRetryOnce) saved = SaveAgainIfLost(record.id, *lease, cp);
      MEND_RETURN_IF_ERROR(saved);
    }
    RunUpdate done;
    done.status = RunStatus::kCompleted;
    MEND_RETURN_IF_ERROR(Retry(mode, [&] { return store_->Update(*lease, done); }));
    MEND_RETURN_IF_ERROR(Retry(mode, [&] { return store_->Release(*lease); }));
    clock_.Advance(seconds(10));
    PruneRequest prune;
    prune.cutoff = clock_.Now();
    prune.scope = PruneScope::kWholeRuns;
    scratch_.prune_attempted = true;
    MEND_RETURN_IF_ERROR(Retry(mode, [&] { return store_->Prune(prune).status(); }));
    scratch_.pruned = true;
    return OkStatus();
  }

  // A failed save may still have been stored (the fault came after its COMMIT reached the WAL,
  // e.g. a failed close); it is saved again only when the run did not move.
  Status SaveAgainIfLost(const std::string& id, const Lease& lease, const Checkpoint& cp) {
    Result<RunRecord> run = store_->GetRun(id);
    if (run.ok() && run->step == cp.step) return OkStatus();
    return store_->Save(lease, cp, {});
  }

  // What another process's connection would do: move the WAL into the database file.
  Status CheckpointWal() {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(kPath, &db, SQLITE_OPEN_READWRITE, options_.vfs.c_str());
    if (rc == SQLITE_OK)
      rc = sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
    std::string message = db == nullptr ? "" : sqlite3_errmsg(db);
    sqlite3_close_v2(db);
    if (rc != SQLITE_OK) return InternalError("wal_checkpoint: " + message);
    return OkStatus();
  }

  std::string IntegrityCheck() {
    sqlite3* db = nullptr;
    std::string out = "<cannot open>";
    if (sqlite3_open_v2(kPath, &db, SQLITE_OPEN_READWRITE, options_.vfs.c_str()) == SQLITE_OK) {
      sqlite3_stmt* stmt = nullptr;
      out = "<cannot prepare>";
      if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) == SQLITE_OK) {
        out = sqlite3_step(stmt) == SQLITE_ROW
                  ? reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))
                  : "<cannot step>";
      }
      sqlite3_finalize(stmt);
    }
    sqlite3_close_v2(db);
    return out;
  }

  MemoryFileSystem memory_;
  FaultInjectionFileSystem fs_{&memory_};
  std::unique_ptr<SqliteVfs> vfs_;
  ManualClock clock_;
  SqliteStoreOptions options_;
  std::unique_ptr<CheckpointStore> store_;
  std::array<RunModel, kRuns> runs_{};
  struct {
    bool create_attempted = false;
    bool created = false;
    bool prune_attempted = false;
    bool pruned = false;
  } scratch_;
};

// How many operations of each kind the whole workload makes without faults.
struct Totals {
  int changing = 0;
  int writes = 0;
  int syncs = 0;
  int truncates = 0;
};

Totals CountOperations() {
  Machine machine;
  EXPECT_TRUE(machine.Workload(Mode::kStopAtFirstError).ok());
  return {ChangingOps(machine.fs()), machine.fs().Count(FsOp::kWrite),
          machine.fs().Count(FsOp::kSync), machine.fs().Count(FsOp::kTruncate)};
}

// Cuts the power at every changing operation of the workload in turn: the n-th one and all later
// ones never happen.
void CutAtEveryPoint(bool torn_writes) {
  const Totals totals = CountOperations();
  ASSERT_GT(totals.changing, 100);
  int failed_workloads = 0;
  for (int n = 0; n <= totals.changing; ++n) {
    SCOPED_TRACE("power cut at changing operation " + std::to_string(n));
    Machine machine;
    machine.fs().SetTornWrites(torn_writes);
    machine.fs().CrashAfter(n, EIO);
    Status s = machine.Workload(Mode::kStopAtFirstError);
    // A fault that reached the store is reported; only the very end has none left.
    if (n < totals.changing) {
      EXPECT_TRUE(machine.fs().Crashed());
      if (!s.ok()) ++failed_workloads;
    }
    machine.fs().SetTornWrites(false);
    machine.Crash();
    machine.Verify();
    if (::testing::Test::HasFailure()) return;
  }
  std::cout << "power cuts: " << totals.changing + 1 << " points over " << totals.writes
            << " writes, " << totals.syncs << " syncs and " << totals.truncates << " truncations; "
            << failed_workloads << " workloads saw the fault as an error\n";
}

TEST(SqlitePowerCutTest, EverySaveThatReturnedOkSurvivesACutAtAnyPoint) { CutAtEveryPoint(false); }

TEST(SqlitePowerCutTest, TornWritesAtTheCutPointDoNotCorruptTheStore) { CutAtEveryPoint(true); }

// One failing operation of kind `op` (the k-th, for every k), the workload carrying on with a
// retry, then a power cut at the end: a save whose fault was not made good is reported as an
// error, never as success, and every save reported OK survives the cut.
void FailEachOnce(FsOp op, int total, bool torn_writes) {
  ASSERT_GT(total, 20);
  for (int k = 0; k < total; ++k) {
    SCOPED_TRACE("fault at operation " + std::to_string(k));
    Machine machine;
    machine.fs().SetTornWrites(torn_writes);
    machine.fs().FailAfter(op, k, EIO);
    machine.Workload(Mode::kRetryOnce).IgnoreError();
    machine.fs().SetTornWrites(false);
    machine.Crash();
    machine.Verify();
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(SqlitePowerCutTest, AFailedSyncIsNeverAcknowledged) {
  FailEachOnce(FsOp::kSync, CountOperations().syncs, /*torn_writes=*/false);
}

TEST(SqlitePowerCutTest, ATornWriteIsNeverAcknowledged) {
  FailEachOnce(FsOp::kWrite, CountOperations().writes, /*torn_writes=*/true);
}

}  // namespace
}  // namespace mend::store
