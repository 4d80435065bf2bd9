#pragma once

// The two halves of the power-cut scenario (power_cut_chaos.cc): the lesson WAL
// (power_cut_chaos_wal.cc) and the SQLite checkpoint store through its VFS
// (power_cut_chaos_sqlite.cc). Both run in this process on a MemoryFileSystem behind a
// FaultInjectionFileSystem, one disk image per half that lives through every round: a round arms
// a crash point at a random changing operation (torn writes on or off at random), runs a random
// workload until the crash point stops it, cuts the power, and then reopens and checks what
// survived against what the workload was told.

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "mend/base/fault_injection_file_system.h"
#include "tests/chaos/chaos.h"

namespace mend::chaos {

// What one half found.
struct PowerCutTally {
  int64_t cuts = 0;          // power cuts, one a round
  int64_t mid_workload = 0;  // of them, cuts at a crash point inside the workload
  int64_t torn = 0;          // of those, with torn writes on (a write at the point leaves half)
  int64_t completed = 0;     // runs_completed or lessons_stored, as the half defines it
  int64_t redelivered = 0;   // processed jobs back after a cut before their ack's sync (allowed)
  int64_t lost = 0;
  int64_t duplicated = 0;
  std::vector<std::string> problems;  // each lost or duplicated item, described
  std::string summary;                // what the workloads did, for the progress lines

  void Lost(int64_t n, std::string problem);
  void Duplicated(int64_t n, std::string problem);
};

// The lesson queue's WAL (mend/lessonq/lesson_queue.h). lessons_stored: jobs whose enqueue
// returned OK and that were accounted for after the cuts (pending, dead-lettered or processed).
Result<PowerCutTally> RunLessonWalCuts(const ChaosOptions& options);

// The SQLite checkpoint store (mend.db) through SqliteVfs. runs_completed: runs whose completion
// returned OK and that were found completed after the next cut.
Result<PowerCutTally> RunCheckpointStoreCuts(const ChaosOptions& options);

// Changing operations (those a crash point counts) the filesystem has seen so far.
int ChangingOps(const FaultInjectionFileSystem& fs);

// Where each round's power cut lands. The workload's size changes as the image fills and empties
// (a longer backlog of jobs, more runs), so it is measured as it goes: the first round, and one
// round in five after it, arm no crash point and are cut after the workload, which measures how
// many changing operations a whole workload makes (so does any round whose crash point lies past
// its end). The other rounds pick their point uniformly within the last size measured.
class CutPlanner {
 public:
  explicit CutPlanner(std::mt19937_64& rng) : rng_(rng) {}

  // Arms the crash point (EIO from there on) and torn writes for the coming workload.
  void Arm(FaultInjectionFileSystem& fs);
  // After the workload: disarms torn writes and counts the cut in `tally`. True when the crash
  // point was reached.
  bool Disarm(FaultInjectionFileSystem& fs, PowerCutTally& tally);

 private:
  std::mt19937_64& rng_;
  int bound_ = -1;  // changing operations of the last whole workload; -1 before the first
  int start_ = 0;
  bool torn_ = false;
};

// The process dies and the power goes out: every operation fails from now on (so `die`, which
// closes what the dead process had open, writes nothing), the disk keeps only what was synced,
// and then the faults are cleared for the next boot.
void CutPower(FaultInjectionFileSystem& fs, const std::function<void()>& die);

// A uniform pick in [0, n).
inline int Pick(std::mt19937_64& rng, int n) {
  return static_cast<int>(rng() % static_cast<uint64_t>(n));
}

}  // namespace mend::chaos
