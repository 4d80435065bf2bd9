// The power-cut scenario: power cuts under the lesson WAL and under mend.db (SQLite through a VFS
// over mend's FileSystem, so a cut can hit the database file itself). The halves are in
// power_cut_chaos_wal.cc and power_cut_chaos_sqlite.cc; this file runs them and joins their rows.
#include <algorithm>
#include <array>
#include <cerrno>
#include <string>
#include <utility>

#include "tests/chaos/chaos.h"
#include "tests/chaos/chaos_util.h"
#include "tests/chaos/power_cut_chaos_parts.h"

namespace mend::chaos {
namespace {

// A broken sync loses a great many items at once; the first few say enough.
constexpr size_t kMaxProblemsPerHalf = 25;

void AddProblems(const std::string& half, const PowerCutTally& tally, ChaosRow& row) {
  const size_t shown = std::min(tally.problems.size(), kMaxProblemsPerHalf);
  for (size_t i = 0; i < shown; ++i) row.problems.push_back(half + ": " + tally.problems[i]);
  if (tally.problems.size() > shown) {
    row.problems.push_back(half + ": ... and " + std::to_string(tally.problems.size() - shown) +
                           " more like these");
  }
}

}  // namespace

void PowerCutTally::Lost(int64_t n, std::string problem) {
  lost += n;
  problems.push_back(std::move(problem));
}

void PowerCutTally::Duplicated(int64_t n, std::string problem) {
  duplicated += n;
  problems.push_back(std::move(problem));
}

int ChangingOps(const FaultInjectionFileSystem& fs) {
  int n = 0;
  for (FsOp op : {FsOp::kWrite, FsOp::kSync, FsOp::kTruncate, FsOp::kRename, FsOp::kSyncDir,
                  FsOp::kUnlink, FsOp::kCreateDirs}) {
    n += fs.Count(op);
  }
  return n;
}

void CutPlanner::Arm(FaultInjectionFileSystem& fs) {
  start_ = ChangingOps(fs);
  torn_ = Pick(rng_, 2) == 1;
  fs.SetTornWrites(torn_);
  if (bound_ >= 0 && Pick(rng_, 5) != 0) fs.CrashAfter(Pick(rng_, bound_ + 1), EIO);
}

bool CutPlanner::Disarm(FaultInjectionFileSystem& fs, PowerCutTally& tally) {
  fs.SetTornWrites(false);
  const bool crashed = fs.Crashed();
  ++tally.cuts;
  if (crashed) {
    ++tally.mid_workload;
    if (torn_) ++tally.torn;
  } else {
    bound_ = ChangingOps(fs) - start_;
  }
  return crashed;
}

void CutPower(FaultInjectionFileSystem& fs, const std::function<void()>& die) {
  static constexpr std::array<FsOp, 13> kAllOps = {
      FsOp::kOpen,       FsOp::kRead,   FsOp::kWrite,   FsOp::kSync,   FsOp::kTruncate,
      FsOp::kClose,      FsOp::kRename, FsOp::kSyncDir, FsOp::kUnlink, FsOp::kList,
      FsOp::kCreateDirs, FsOp::kStat,   FsOp::kLock};
  for (FsOp op : kAllOps) fs.FailAlways(op, EIO);
  die();
  fs.CutPower().IgnoreError();  // the base is a MemoryFileSystem: it cannot fail
  fs.ClearFaults();
}

Result<ChaosRow> RunPowerCutChaos(const ChaosOptions& options) {
  MEND_ASSIGN_OR_RETURN(PowerCutTally wal, RunLessonWalCuts(options));
  MEND_ASSIGN_OR_RETURN(PowerCutTally db, RunCheckpointStoreCuts(options));
  ChaosRow row;
  row.faults = wal.cuts + db.cuts;
  row.lessons_stored = wal.completed;
  row.runs_completed = db.completed;
  row.lost = wal.lost + db.lost;
  row.duplicated = wal.duplicated + db.duplicated;
  for (const auto& [half, tally] : {std::pair{"lesson WAL", &wal}, std::pair{"mend.db", &db}}) {
    Say(options, std::string("power-cut: ") + half + ": " + std::to_string(tally->mid_workload) +
                     " of " + std::to_string(tally->cuts) + " cuts inside the workload; " +
                     tally->summary);
  }
  row.detail = std::to_string(wal.cuts) + " cuts (" + std::to_string(wal.torn) +
               " torn) of the lesson WAL and " + std::to_string(db.cuts) + " cuts (" +
               std::to_string(db.torn) +
               " torn) of mend.db through the VFS; after each: reopen, integrity_check, every "
               "acknowledged job, checkpoint and completion present, none twice, no synced ack "
               "or prune undone (" +
               std::to_string(wal.redelivered) +
               " jobs redelivered whose ack the cut beat: at least once)";
  AddProblems("lesson WAL", wal, row);
  AddProblems("mend.db", db, row);
  return row;
}

}  // namespace mend::chaos
