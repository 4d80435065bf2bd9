// The SQLite half of the power-cut scenario (power_cut_chaos_parts.h): mend.db opened through
// SqliteVfs, so the cuts hit the database file, its WAL and its journals.
//
// What the store promises (sqlite_store.h): WAL mode with synchronous=FULL, so a write that
// returns OK (CreateRun, Save, Update, Prune) is durable; one that failed may or may not have
// happened. tests/store/sqlite_power_cut_test.cc cuts one fixed workload at every point; this half
// cuts random workloads on one image that lives on, at random points. After every cut:
//   PRAGMA integrity_check says ok (otherwise the damage counts as lost)
//   lost        a run whose creation returned OK is missing (unless a whole-run prune covering it
//               was started); a step whose save returned OK is missing, or the conversation or
//               state differs from what was saved; a run whose completion returned OK is not
//               completed
//   duplicated  a run listed twice or that nobody created; more messages than were saved; a step
//               twice in the history, or one no save was started for; a run back after its prune
//               returned OK; a run completed that nobody completed
// What survived a cut is what the next round builds on.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/fault_injection_file_system.h"
#include "mend/base/manual_clock.h"
#include "mend/base/memory_file_system.h"
#include "mend/store/prune.h"
#include "mend/store/sqlite_store.h"
#include "mend/store/sqlite_vfs.h"
#include "tests/chaos/chaos_util.h"
#include "tests/chaos/power_cut_chaos_parts.h"
#include "tests/support/made_up_words.h"

namespace mend::chaos {
namespace {

using store::Lease;
using store::RunStatus;

constexpr char kHome[] = "/home/.mend";
constexpr char kDbPath[] = "/home/.mend/mend.db";
constexpr int kRoundsPerScale = 400;
constexpr int kMaxActiveRuns = 4;

// The two messages step `step` of run `index` adds; the second needs overflow pages, so a save
// writes several pages.
std::vector<std::string> StepMessages(int index, int64_t step) {
  const std::string tag = std::to_string(index) + "." + std::to_string(step);
  return {"user " + tag, "assistant " + tag + " " +
                             testing::MadeUpWords(index * 1000 + static_cast<int>(step), 700)};
}

std::string StepState(int index, int64_t step) {
  return "{\"run\": " + std::to_string(index) + ", \"step\": " + std::to_string(step) + "}";
}

// What the workload was told about one run.
struct RunModel {
  int index = 0;
  std::string id;
  bool create_attempted = false;
  bool created = false;   // CreateRun returned OK, or the run was found after a cut
  int64_t acked = 0;      // the last step whose save returned OK (or found after a cut)
  int64_t attempted = 0;  // the last step a save was started for
  bool completion_attempted = false;
  bool completed = false;        // its completion returned OK, or it was found completed
  bool completion_ok = false;    // its completion call returned OK (never set by a cut)
  bool counted = false;          // counted in runs_completed
  bool prune_attempted = false;  // a whole-run prune covering it was started
  bool pruned = false;           // ... and returned OK
  bool gone = false;             // found missing after a cut (never created, pruned, or lost)
};

std::string Where(int round) { return " after cut " + std::to_string(round + 1); }

class StoreMachine {
 public:
  explicit StoreMachine(const ChaosOptions& options);
  ~StoreMachine() { store_.reset(); }  // before the VFS goes

  Result<PowerCutTally> Run();

 private:
  Status Open();
  Status Workload();
  Status Step();
  Status CreateRun();
  Status SaveStep(RunModel& m, bool complete);
  Status CompleteWithUpdate(RunModel& m);
  Status PruneFinishedRuns();
  Status CheckpointWal();
  Result<Lease*> LeaseFor(RunModel& m);
  RunModel* PickActive(int64_t min_step);
  int ActiveRuns() const;

  bool Verify(int round);
  void CheckListing(int round);
  void CheckRun(RunModel& m, int round);
  void CheckContent(const RunModel& m, const store::RunSnapshot& snapshot, int round);
  void CheckHistory(const RunModel& m, int64_t step, int round);
  std::string IntegrityCheck();

  const ChaosOptions& options_;
  std::mt19937_64 rng_;
  MemoryFileSystem memory_;
  FaultInjectionFileSystem fs_{&memory_};
  std::unique_ptr<store::SqliteVfs> vfs_;
  ManualClock clock_;
  store::SqliteStoreOptions store_options_;
  std::unique_ptr<store::CheckpointStore> store_;
  CutPlanner planner_;
  PowerCutTally tally_;
  std::deque<RunModel> runs_;    // by index; a deque keeps references stable
  std::map<int, Lease> leases_;  // claimed this round, by run index
  int64_t saves_ = 0, completions_ = 0, prunes_ = 0;
};

StoreMachine::StoreMachine(const ChaosOptions& options)
    : options_(options), rng_(options.seed * 0xD1B54A32D192ED03ull + 2), planner_(rng_) {
  store_options_.path = kDbPath;
  store_options_.history_limit = 3;  // saves delete old checkpoints too
  store_options_.local = store::LeaseHolder{"chaos", "host-a", "boot-1", 100};
  // The process that held a lease before a cut is gone, so its runs can be claimed at once.
  store_options_.process_alive = [](int64_t) { return false; };
}

Result<PowerCutTally> StoreMachine::Run() {
  static int next_vfs = 0;
  MEND_ASSIGN_OR_RETURN(
      vfs_, store::SqliteVfs::Register("mend-chaos-power-cut-" + std::to_string(next_vfs++), &fs_));
  store_options_.vfs = vfs_->name();
  MEND_RETURN_IF_ERROR(memory_.CreateDirs(kHome));
  const int rounds = kRoundsPerScale * options_.scale;
  for (int round = 0; round < rounds; ++round) {
    planner_.Arm(fs_);
    const Status s = Workload();
    const bool crashed = planner_.Disarm(fs_, tally_);
    if (!s.ok() && !crashed && s.code() == StatusCode::kDataLoss) {
      // Damage an earlier cut left that the checks after it did not see: the image is done for.
      tally_.Lost(1, "a write found mend.db corrupt" + Where(round - 1) + ": " + s.ToString());
      break;
    }
    if (!s.ok() && !crashed) {
      return InternalError("mend.db round " + std::to_string(round + 1) +
                           " failed with no fault injected: " + s.ToString());
    }
    CutPower(fs_, [this] { store_.reset(); });
    leases_.clear();
    if (!Verify(round)) break;
    if ((round + 1) % 100 == 0) {
      Say(options_, "power-cut: mend.db: " + std::to_string(round + 1) + " cuts, " +
                        std::to_string(saves_) + " saves acknowledged");
    }
  }
  store_.reset();
  tally_.summary = std::to_string(saves_) + " saves, " + std::to_string(completions_) +
                   " completions and " + std::to_string(prunes_) +
                   " runs pruned whole acknowledged";
  return std::move(tally_);
}

Status StoreMachine::Open() {
  store_.reset();
  MEND_ASSIGN_OR_RETURN(store_, store::OpenSqliteStore(store_options_, clock_));
  return OkStatus();
}

// A process's work between two cuts: sometimes a prune of the runs finished before it, then
// creates, saves, completions, history prunes, WAL checkpoints and reopens at random.
Status StoreMachine::Workload() {
  if (store_ == nullptr) MEND_RETURN_IF_ERROR(Open());
  if (Pick(rng_, 3) == 0) MEND_RETURN_IF_ERROR(PruneFinishedRuns());
  const int steps = 8 + Pick(rng_, 8);
  for (int i = 0; i < steps; ++i) {
    MEND_RETURN_IF_ERROR(Step());
    clock_.Advance(std::chrono::seconds(1));
  }
  return OkStatus();
}

Status StoreMachine::Step() {
  const int r = Pick(rng_, 100);
  const int active = ActiveRuns();
  if ((r < 12 || active == 0) && active < kMaxActiveRuns) return CreateRun();
  if (r < 70) return SaveStep(*PickActive(0), /*complete=*/false);
  if (r < 80) {
    RunModel* done = PickActive(2);
    if (done == nullptr) return SaveStep(*PickActive(0), false);
    return Pick(rng_, 2) == 0 ? SaveStep(*done, /*complete=*/true) : CompleteWithUpdate(*done);
  }
  if (r < 86) {
    store::PruneRequest prune;
    prune.cutoff = clock_.Now();
    prune.scope = store::PruneScope::kHistory;
    return store_->Prune(prune).status();
  }
  if (r < 93) return CheckpointWal();
  return Open();  // closing the last connection checkpoints the WAL into mend.db
}

int StoreMachine::ActiveRuns() const {
  int n = 0;
  for (const RunModel& m : runs_) n += m.created && !m.gone && !m.completion_attempted ? 1 : 0;
  return n;
}

RunModel* StoreMachine::PickActive(int64_t min_step) {
  std::vector<RunModel*> candidates;
  for (RunModel& m : runs_) {
    if (m.created && !m.gone && !m.completion_attempted && m.acked >= min_step) {
      candidates.push_back(&m);
    }
  }
  if (candidates.empty()) return nullptr;
  return candidates[Pick(rng_, static_cast<int>(candidates.size()))];
}

Status StoreMachine::CreateRun() {
  RunModel& m = runs_.emplace_back();
  m.index = static_cast<int>(runs_.size()) - 1;
  m.id = Tag("run", m.index);
  store::RunRecord record;
  record.id = m.id;
  record.agent = "chaos";
  record.agent_dir = "agents/chaos";
  record.task = "task " + std::to_string(m.index) + ": " + testing::MadeUpWords(m.index, 5);
  m.create_attempted = true;
  MEND_RETURN_IF_ERROR(store_->CreateRun(record));
  m.created = true;
  return OkStatus();
}

Result<Lease*> StoreMachine::LeaseFor(RunModel& m) {
  auto it = leases_.find(m.index);
  if (it != leases_.end()) return &it->second;
  MEND_ASSIGN_OR_RETURN(Lease lease,
                        store_->Claim(m.id, store_options_.local, std::chrono::hours(1)));
  return &leases_.emplace(m.index, std::move(lease)).first->second;
}

Status StoreMachine::SaveStep(RunModel& m, bool complete) {
  MEND_ASSIGN_OR_RETURN(Lease * lease, LeaseFor(m));
  store::Checkpoint cp;
  cp.step = m.acked + 1;
  cp.new_messages = StepMessages(m.index, cp.step);
  cp.state = StepState(m.index, cp.step);
  store::RunUpdate update;
  if (complete) {
    update.status = RunStatus::kCompleted;
    m.completion_attempted = true;
  }
  m.attempted = cp.step;
  MEND_RETURN_IF_ERROR(store_->Save(*lease, cp, update));
  m.acked = cp.step;
  ++saves_;
  if (complete) {
    m.completed = m.completion_ok = true;
    ++completions_;
  }
  return OkStatus();
}

Status StoreMachine::CompleteWithUpdate(RunModel& m) {
  MEND_ASSIGN_OR_RETURN(Lease * lease, LeaseFor(m));
  store::RunUpdate update;
  update.status = RunStatus::kCompleted;
  m.completion_attempted = true;
  MEND_RETURN_IF_ERROR(store_->Update(*lease, update));
  m.completed = m.completion_ok = true;
  ++completions_;
  return OkStatus();
}

// Deletes the runs completed before this round (all of them were last updated before now).
Status StoreMachine::PruneFinishedRuns() {
  store::PruneRequest prune;
  prune.cutoff = clock_.Now();
  prune.scope = store::PruneScope::kWholeRuns;
  std::vector<RunModel*> covered;
  for (RunModel& m : runs_) {
    if (m.gone || !m.completed) continue;
    m.prune_attempted = true;
    covered.push_back(&m);
  }
  MEND_ASSIGN_OR_RETURN(store::PruneReport report, store_->Prune(prune));
  if (report.runs_deleted != static_cast<int64_t>(covered.size())) {
    return InternalError("a whole-run prune deleted " + std::to_string(report.runs_deleted) +
                         " runs, not the " + std::to_string(covered.size()) + " completed ones");
  }
  for (RunModel* m : covered) m->pruned = true;
  prunes_ += static_cast<int64_t>(covered.size());
  clock_.Advance(std::chrono::seconds(1));
  return OkStatus();
}

// What another process's connection does: moves the WAL into the database file.
Status StoreMachine::CheckpointWal() {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(kDbPath, &db, SQLITE_OPEN_READWRITE, store_options_.vfs.c_str());
  if (rc == SQLITE_OK) {
    rc = sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  }
  const std::string message = db == nullptr ? "out of memory" : sqlite3_errmsg(db);
  sqlite3_close_v2(db);
  if (rc != SQLITE_OK) return InternalError("wal_checkpoint: " + message);
  return OkStatus();
}

std::string StoreMachine::IntegrityCheck() {
  sqlite3* db = nullptr;
  std::string out = "cannot open";
  if (sqlite3_open_v2(kDbPath, &db, SQLITE_OPEN_READONLY, store_options_.vfs.c_str()) ==
      SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    out = "cannot prepare";
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) == SQLITE_OK) {
      out = sqlite3_step(stmt) == SQLITE_ROW
                ? reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))
                : "cannot step";
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close_v2(db);
  return out;
}

// The next boot: the store must open and the database be intact; then every run is checked
// against the model, and the model takes what survived.
bool StoreMachine::Verify(int round) {
  if (const Status s = Open(); !s.ok()) {
    int64_t acked = 0;
    for (const RunModel& m : runs_) acked += m.created && !m.gone ? 1 + m.acked : 0;
    tally_.Lost(acked, "mend.db does not open" + Where(round) + ": " + s.ToString());
    return false;
  }
  if (std::string integrity = IntegrityCheck(); integrity != "ok") {
    std::replace(integrity.begin(), integrity.end(), '\n', ' ');  // one problem, one line
    if (integrity.size() > 160) integrity = integrity.substr(0, 160) + "...";
    tally_.Lost(1, "PRAGMA integrity_check" + Where(round) + ": " + integrity);
  }
  CheckListing(round);
  for (RunModel& m : runs_) {
    if (m.create_attempted && !m.gone) CheckRun(m, round);
  }
  return true;
}

void StoreMachine::CheckListing(int round) {
  store::ListOptions all;
  all.unfinished_only = false;
  Result<std::vector<store::RunRecord>> listed = store_->ListRuns(all);
  if (!listed.ok()) {
    tally_.Lost(1, "the runs cannot be listed" + Where(round) + ": " + listed.status().ToString());
    return;
  }
  std::map<std::string, int> seen;
  for (const store::RunRecord& run : *listed) {
    if (++seen[run.id] == 2) {
      tally_.Duplicated(1, "run " + run.id + " is listed twice" + Where(round));
    }
  }
  std::map<std::string, const RunModel*> known;
  for (const RunModel& m : runs_) known[m.id] = &m;
  for (const auto& [id, count] : seen) {
    auto it = known.find(id);
    if (it == known.end()) {
      tally_.Duplicated(1, "run " + id + ", which nobody created, is there" + Where(round));
    } else if (it->second->gone) {
      tally_.Duplicated(1, "run " + id + ", gone after an earlier cut, is back" + Where(round));
    }
  }
}

void StoreMachine::CheckRun(RunModel& m, int round) {
  Result<store::RunSnapshot> snapshot = store_->Load(m.id);
  if (!snapshot.ok()) {
    const bool absent = snapshot.status().code() == StatusCode::kNotFound;
    if (!absent || (m.created && !m.prune_attempted)) {
      tally_.Lost(1 + m.acked, "run " + m.id + " (created, " + std::to_string(m.acked) +
                                   " saves acknowledged) is " +
                                   (absent ? "missing" : snapshot.status().ToString()) +
                                   Where(round));
    }
    m.gone = true;
    return;
  }
  if (m.pruned) {
    tally_.Duplicated(
        1, "run " + m.id + " is back" + Where(round) + " although its whole-run prune returned OK");
  }
  const int64_t step = snapshot->step;
  if (step < m.acked) {
    tally_.Lost(m.acked - step, "run " + m.id + " is at step " + std::to_string(step) +
                                    Where(round) + ", but saves up to step " +
                                    std::to_string(m.acked) + " returned OK");
  }
  if (step > m.attempted) {
    tally_.Duplicated(step - m.attempted, "run " + m.id + " is at step " + std::to_string(step) +
                                              Where(round) + ", but no save past step " +
                                              std::to_string(m.attempted) + " was started");
  }
  CheckContent(m, *snapshot, round);
  CheckHistory(m, step, round);
  const bool completed = snapshot->run.status == RunStatus::kCompleted;
  if (m.completed && !completed) {
    tally_.Lost(1, "run " + m.id + ", whose completion returned OK, is " +
                       std::string(store::RunStatusName(snapshot->run.status)) + Where(round));
  }
  if (completed && !m.completion_attempted) {
    tally_.Duplicated(
        1, "run " + m.id + " is completed" + Where(round) + " though nobody completed it");
  }
  if (completed && m.completion_ok && !m.counted) {
    ++tally_.completed;
    m.counted = true;
  }
  m.created = true;
  m.acked = m.attempted = step;
  m.completed = m.completion_attempted = completed;
  m.prune_attempted = m.pruned = false;
}

void StoreMachine::CheckContent(const RunModel& m, const store::RunSnapshot& snapshot, int round) {
  std::vector<std::string> expected;
  for (int64_t step = 1; step <= snapshot.step; ++step) {
    for (std::string& message : StepMessages(m.index, step)) expected.push_back(message);
  }
  if (snapshot.messages.size() > expected.size()) {
    tally_.Duplicated(static_cast<int64_t>(snapshot.messages.size() - expected.size()),
                      "run " + m.id + " has " + std::to_string(snapshot.messages.size()) +
                          " messages" + Where(round) + " where its steps saved " +
                          std::to_string(expected.size()));
  } else if (snapshot.messages != expected) {
    tally_.Lost(1, "the conversation of run " + m.id + " differs" + Where(round) +
                       " from what its saves stored");
  }
  if (snapshot.step > 0 && snapshot.state != StepState(m.index, snapshot.step)) {
    tally_.Lost(1, "the state of run " + m.id + " at step " + std::to_string(snapshot.step) +
                       " differs" + Where(round) + " from what was saved");
  }
}

void StoreMachine::CheckHistory(const RunModel& m, int64_t step, int round) {
  Result<std::vector<store::CheckpointInfo>> history = store_->History(m.id);
  if (!history.ok()) {
    tally_.Lost(1, "the history of run " + m.id + " cannot be read" + Where(round) + ": " +
                       history.status().ToString());
    return;
  }
  for (size_t i = 1; i < history->size(); ++i) {
    if ((*history)[i].step <= (*history)[i - 1].step) {
      tally_.Duplicated(1, "the history of run " + m.id + " lists step " +
                               std::to_string((*history)[i].step) + " out of order or twice" +
                               Where(round));
    }
  }
  if (step > 0 && (history->empty() || history->back().step != step)) {
    tally_.Lost(1, "the history of run " + m.id + " does not end at its step " +
                       std::to_string(step) + Where(round));
  }
}

}  // namespace

Result<PowerCutTally> RunCheckpointStoreCuts(const ChaosOptions& options) {
  StoreMachine machine(options);
  return machine.Run();
}

}  // namespace mend::chaos
