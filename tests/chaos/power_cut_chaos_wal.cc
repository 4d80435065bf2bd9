// The lesson WAL half of the power-cut scenario (power_cut_chaos_parts.h).
//
// What the queue promises (docs/lesson_queue.md, docs/wal_format.md): a job is durable once
// Enqueue returns OK, and is processed at least once. The ack of a processed job is an unlink of
// its record followed by a directory fsync, whose failure the queue ignores: a cut that comes
// before that sync completes brings the job back, which at-least-once allows. A dead letter is
// written to dlq/ before it leaves wal/, so a cut between the two leaves it in both, never in
// neither. After every cut this half counts against exactly that:
//   lost        a job whose enqueue returned OK and that was not processed is missing from wal/
//               (or its record no longer holds its request); a dead letter is in neither wal/
//               nor dlq/
//   duplicated  an id listed twice; a record nobody enqueued; a processed job back in wal/
//               although its ack (unlink and directory sync) had completed before the cut; a
//               dead letter back after its purge returned OK
// and counts, as allowed, processed jobs redelivered because the cut came before their ack was
// synced.
//
// One worker, virtual time and enqueues made while no worker runs keep the order of the disk
// operations, and so each crash point, the same for a given seed.
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/env.h"
#include "mend/base/fault_injection_file_system.h"
#include "mend/base/manual_clock.h"
#include "mend/base/memory_file_system.h"
#include "mend/base/random.h"
#include "mend/lessonq/lesson_queue.h"
#include "tests/chaos/chaos_util.h"
#include "tests/chaos/power_cut_chaos_parts.h"
#include "tests/support/made_up_words.h"

namespace mend::chaos {
namespace {

using lessonq::Job;
using lessonq::LessonQueue;
using lessonq::LessonRequest;
using lessonq::ProcessResult;

constexpr char kQueueDir[] = "/home/.mend/reflexion";
constexpr int kRoundsPerScale = 400;

enum class JobState {
  kMaybe,    // its enqueue failed: the record may or may not have survived
  kPending,  // its enqueue returned OK, or its record survived a cut: it stays until processed
  kDone,     // the processor succeeded, so the queue acks it (removes its record)
  kDead,     // the processor failed for good: the record belongs in dlq/ (or is still in wal/)
  kPurging,  // an operator's purge of its dead letter failed: it may or may not be gone
  kGone,     // purged, or a failed enqueue that did not survive, or a job already counted lost
};

struct JobModel {
  LessonRequest request;
  JobState state = JobState::kMaybe;
  int transient_failures = 0;  // attempts that fail transiently before the job's fate
  bool dead_letter = false;    // its fate: a permanent failure instead of success
  bool enqueue_acked = false;  // Enqueue returned OK
  bool ack_synced = false;     // kDone, and the ack completed before the crash point
  bool redelivered = false;    // kDone, and found back in wal/ since it was last processed
  bool lost = false;
};

lessonq::QueueOptions QueueOptionsForChaos() {
  lessonq::QueueOptions options;
  options.base_dir = kQueueDir;
  options.workers = 1;
  options.jitter = 0.0;
  options.max_attempts = 1000;  // only the processor's verdict sends a job to dlq/
  options.initial_delay = std::chrono::seconds(1);
  options.poll_interval = std::chrono::seconds(1);
  return options;
}

std::string Where(int round) { return " after cut " + std::to_string(round + 1); }

class WalMachine {
 public:
  explicit WalMachine(const ChaosOptions& options)
      : options_(options),
        rng_(options.seed * 0x9E3779B97F4A7C15ull + 1),
        random_(options.seed),
        planner_(rng_) {}

  Result<PowerCutTally> Run();

 private:
  Env env() { return Env{&fs_, &clock_, &random_}; }
  Status Workload();
  Status Batch();
  Status EnqueueOne(LessonQueue& queue);
  Status TendOneDeadLetter(LessonQueue& queue);
  Result<ProcessResult> Process(const Job& job);
  void ConfirmAcksLocked();
  void Verify(int round);
  std::map<std::string, const Job*> Index(const std::vector<Job>& jobs, const char* dir, int round);
  void Check(const std::string& id, JobModel& m, const Job* in_wal, const Job* in_dlq, int round);

  const ChaosOptions& options_;
  std::mt19937_64 rng_;
  MemoryFileSystem memory_;
  FaultInjectionFileSystem fs_{&memory_};
  ManualClock clock_;
  SeededRandom random_;
  CutPlanner planner_;
  PowerCutTally tally_;
  int next_index_ = 0;

  std::mutex mu_;  // the worker's processor and the main thread share what follows
  std::map<std::string, JobModel> jobs_;
  std::vector<std::string> unconfirmed_;  // processed ids whose ack may not have completed
  // Ids whose record must be, or may be, in wal/ or dlq/ (every state but kDone and kGone), and
  // perhaps a few more: every verify checks them even when absent.
  std::set<std::string> watch_;
  int64_t processed_ = 0, redelivered_ = 0, in_both_ = 0, enqueued_ = 0, purged_ = 0,
          purged_still_pending_ = 0;
};

Result<PowerCutTally> WalMachine::Run() {
  const int rounds = kRoundsPerScale * options_.scale;
  for (int round = 0; round < rounds; ++round) {
    planner_.Arm(fs_);
    const Status s = Workload();
    const bool crashed = planner_.Disarm(fs_, tally_);
    if (!s.ok() && !crashed) {
      return InternalError("lesson WAL round " + std::to_string(round + 1) +
                           " failed with no fault injected: " + s.ToString());
    }
    CutPower(fs_, [] {});  // each batch closed its queue: nothing is open
    unconfirmed_.clear();
    Verify(round);
    if ((round + 1) % 100 == 0) {
      Say(options_, "power-cut: lesson WAL: " + std::to_string(round + 1) + " cuts, " +
                        std::to_string(enqueued_) + " jobs enqueued");
    }
  }
  for (const auto& [id, m] : jobs_) {
    if (m.enqueue_acked && !m.lost) ++tally_.completed;
  }
  tally_.redelivered = redelivered_;
  tally_.summary = std::to_string(enqueued_) + " enqueues acknowledged, " +
                   std::to_string(processed_) + " attempts, " + std::to_string(redelivered_) +
                   " acks cut before their sync redelivered, " + std::to_string(in_both_) +
                   " dead letters found in both wal/ and dlq/, " + std::to_string(purged_) +
                   " purged (" + std::to_string(purged_still_pending_) +
                   " more kept pending by a wal/ copy a cut left, retried-looking)";
  return std::move(tally_);
}

// One to three batches, each a queue process's life: enqueues while no worker runs, an operator
// retrying or purging dead letters, then a start (replay) and a shutdown that first processes
// every due job.
Status WalMachine::Workload() {
  const int batches = 1 + Pick(rng_, 3);
  for (int b = 0; b < batches; ++b) MEND_RETURN_IF_ERROR(Batch());
  return OkStatus();
}

Status WalMachine::Batch() {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<LessonQueue> queue,
                        LessonQueue::Open(env(), QueueOptionsForChaos(), nullptr));
  const int enqueues = 2 + Pick(rng_, 6);
  for (int i = 0; i < enqueues; ++i) MEND_RETURN_IF_ERROR(EnqueueOne(*queue));
  for (int i = Pick(rng_, 3); i > 0; --i) MEND_RETURN_IF_ERROR(TendOneDeadLetter(*queue));
  MEND_RETURN_IF_ERROR(
      queue->Start([this](const Job& job, const lessonq::JobContext&) { return Process(job); }));
  // Shutdown hands out every due job before it stops: every job enqueued or replayed, and the
  // retries due by now. DrainNow would make the retries rescheduled during it due as well, or
  // not, depending on when the worker got to them, and the crash points would then move.
  MEND_RETURN_IF_ERROR(queue->Shutdown(std::chrono::minutes(1)));
  queue.reset();
  {
    std::lock_guard<std::mutex> lock(mu_);
    ConfirmAcksLocked();
  }
  clock_.Advance(std::chrono::seconds(10));  // the retries rescheduled meanwhile come due
  return OkStatus();
}

Status WalMachine::EnqueueOne(LessonQueue& queue) {
  const int index = next_index_++;
  const std::string n = std::to_string(index);
  LessonRequest request{"chaos task " + n + " " + testing::MadeUpWords(index, 4),
                        "attempt " + n + ": " + testing::MadeUpWords(index + 100000, 60),
                        "ERROR: failure " + n, "error"};
  request.run_id = "run-" + std::to_string(index % 7);
  JobModel m;
  m.request = request;
  const int fate = Pick(rng_, 20);  // 13 in 20 succeed, 5 after transient failures, 2 dead-letter
  m.transient_failures = fate >= 13 && fate < 18 ? 1 + Pick(rng_, 2) : 0;
  m.dead_letter = fate >= 18;
  const std::string id = lessonq::JobIdFor(request);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!jobs_.emplace(id, std::move(m)).second) return InternalError("job id collision: " + id);
    watch_.insert(id);
  }
  Result<lessonq::EnqueueResult> result = queue.Enqueue(request);
  clock_.Advance(std::chrono::milliseconds(1));
  MEND_RETURN_IF_ERROR(result.status());
  if (!result->created) return InternalError("new job " + id + " was found already pending");
  std::lock_guard<std::mutex> lock(mu_);
  JobModel& stored = jobs_[id];
  stored.state = JobState::kPending;
  stored.enqueue_acked = true;
  ++enqueued_;
  return OkStatus();
}

// An operator takes up one dead letter: either sends it back (WAL first, then the DLQ record
// goes), its cause taken to be fixed so that it succeeds next time, or purges it (unlink and
// directory sync, so it must not come back once that returned OK).
Status WalMachine::TendOneDeadLetter(LessonQueue& queue) {
  MEND_ASSIGN_OR_RETURN(std::vector<Job> dead, queue.DeadLetters());
  std::vector<std::string> ids;
  std::lock_guard<std::mutex> lock(mu_);  // no worker runs yet
  for (const Job& job : dead) {
    auto it = jobs_.find(job.id);
    if (it != jobs_.end() && it->second.state == JobState::kDead) ids.push_back(job.id);
  }
  if (ids.empty()) return OkStatus();
  const std::string id = ids[Pick(rng_, static_cast<int>(ids.size()))];
  JobModel& m = jobs_[id];
  if (Pick(rng_, 2) == 0) {
    // A cut between a dead letter's two writes leaves it in wal/ as well (docs/lesson_queue.md).
    // The purge deletes that copy too, unless it looks retried by hand (no attempt, no error: a
    // job dead at its first attempt), which stays pending and fails again.
    m.state = JobState::kPurging;
    MEND_RETURN_IF_ERROR(queue.PurgeDeadLetter(id));
    const bool in_wal = fs_.Exists(JoinPath(kQueueDir, "wal/" + id + ".wal"));
    m.state = in_wal ? JobState::kDead : JobState::kGone;
    ++(in_wal ? purged_still_pending_ : purged_);
    return OkStatus();
  }
  m.dead_letter = false;
  m.transient_failures = 0;
  MEND_RETURN_IF_ERROR(queue.RetryDeadLetter(id));
  m.state = JobState::kPending;
  return OkStatus();
}

// The worker's processor. With one worker, the previous job's ack finished before this call, so
// a crash point not reached yet means that ack (unlink and directory sync) is complete.
Result<ProcessResult> WalMachine::Process(const Job& job) {
  std::lock_guard<std::mutex> lock(mu_);
  ConfirmAcksLocked();
  auto it = jobs_.find(job.id);
  if (it == jobs_.end()) {
    tally_.Duplicated(1, "the worker was handed job " + job.id + ", which nobody enqueued");
    return ProcessResult::kSkipped;
  }
  JobModel& m = it->second;
  ++processed_;
  if (m.transient_failures > 0) {
    --m.transient_failures;
    return UnavailableError("chaos: the model is unavailable");
  }
  if (m.dead_letter) {
    m.state = JobState::kDead;
    watch_.insert(job.id);
    return InvalidArgumentError("chaos: the lesson cannot be parsed");
  }
  m.state = JobState::kDone;
  m.ack_synced = false;
  m.redelivered = false;
  unconfirmed_.push_back(job.id);
  return ProcessResult::kSuccess;
}

void WalMachine::ConfirmAcksLocked() {
  if (fs_.Crashed()) return;
  for (const std::string& id : unconfirmed_) {
    JobModel& m = jobs_[id];
    if (m.state == JobState::kDone) m.ack_synced = true;
  }
  unconfirmed_.clear();
}

void WalMachine::Verify(int round) {
  Result<std::unique_ptr<LessonQueue>> queue =
      LessonQueue::Open(env(), QueueOptionsForChaos(), nullptr);
  Result<std::vector<Job>> wal = queue.ok() ? (*queue)->Pending() : queue.status();
  Result<std::vector<Job>> dlq = queue.ok() ? (*queue)->DeadLetters() : queue.status();
  if (!wal.ok() || !dlq.ok()) {
    const Status s = wal.ok() ? dlq.status() : wal.status();
    for (const std::string& id : watch_) {
      JobModel& m = jobs_[id];
      if (m.state != JobState::kPending && m.state != JobState::kDead) continue;
      tally_.Lost(1, "job " + id + " cannot be read" + Where(round) + ": " + s.ToString());
      m.state = JobState::kGone;
      m.lost = true;
    }
    return;
  }
  const std::map<std::string, const Job*> in_wal = Index(*wal, "wal/", round);
  const std::map<std::string, const Job*> in_dlq = Index(*dlq, "dlq/", round);
  auto find = [](const std::map<std::string, const Job*>& index, const std::string& id) {
    auto it = index.find(id);
    return it == index.end() ? nullptr : it->second;
  };
  // A job is looked at when its record is there, or when it is watched (its record must be, or
  // may be, there): the others are processed or gone, and only their coming back would matter.
  std::set<std::string> candidates = std::move(watch_);
  for (const auto* index : {&in_wal, &in_dlq}) {
    for (const auto& [id, job] : *index) candidates.insert(id);
  }
  watch_.clear();
  for (const std::string& id : candidates) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) {
      tally_.Duplicated(
          1, "a record of job " + id + ", which nobody enqueued, is there" + Where(round));
      continue;
    }
    JobModel& m = it->second;
    Check(id, m, find(in_wal, id), find(in_dlq, id), round);
    if (m.state != JobState::kDone && m.state != JobState::kGone) watch_.insert(id);
  }
}

std::map<std::string, const Job*> WalMachine::Index(const std::vector<Job>& jobs, const char* dir,
                                                    int round) {
  std::map<std::string, const Job*> index;
  for (const Job& job : jobs) {
    if (!index.emplace(job.id, &job).second) {
      tally_.Duplicated(1, "job " + job.id + " is listed twice in " + dir + Where(round));
    }
  }
  return index;
}

void WalMachine::Check(const std::string& id, JobModel& m, const Job* in_wal, const Job* in_dlq,
                       int round) {
  for (const Job* job : {in_wal, in_dlq}) {
    if (job != nullptr && job->request != m.request) {
      tally_.Lost(1, "the record of job " + id + Where(round) + " does not hold its request");
      m.state = JobState::kGone;
      m.lost = true;
      return;
    }
  }
  switch (m.state) {
    case JobState::kMaybe:
      m.state = in_wal != nullptr ? JobState::kPending : JobState::kGone;
      break;
    case JobState::kPending:
      if (in_wal == nullptr) {
        tally_.Lost(
            1, "job " + id + " (enqueue returned OK, not processed) is missing" + Where(round));
        m.state = JobState::kGone;
        m.lost = true;
      }
      break;
    case JobState::kDone:
      if (in_wal == nullptr) break;
      if (m.ack_synced) {
        tally_.Duplicated(1, "job " + id + " is pending again" + Where(round) +
                                 " although its ack was synced before it");
      } else if (!m.redelivered) {
        ++redelivered_;
      }
      m.redelivered = true;
      m.ack_synced = false;  // processed once already: it is acked again, and may go
      break;
    case JobState::kDead:
      if (in_wal == nullptr && in_dlq == nullptr) {
        tally_.Lost(1, "dead letter " + id + " is in neither wal/ nor dlq/" + Where(round));
        m.state = JobState::kGone;
        m.lost = true;
      } else if (in_wal != nullptr && in_dlq != nullptr) {
        ++in_both_;  // the cut fell between its two writes, as docs/lesson_queue.md allows
      }
      break;
    case JobState::kPurging:
      m.state = in_wal != nullptr || in_dlq != nullptr ? JobState::kDead : JobState::kGone;
      break;
    case JobState::kGone:
      if (in_wal != nullptr || in_dlq != nullptr) {
        tally_.Duplicated(1, "job " + id + ", gone after an earlier cut, is back" + Where(round));
      }
      break;
  }
}

}  // namespace

Result<PowerCutTally> RunLessonWalCuts(const ChaosOptions& options) {
  WalMachine machine(options);
  return machine.Run();
}

}  // namespace mend::chaos
