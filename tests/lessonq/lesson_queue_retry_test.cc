#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mend/base/file_system.h"
#include "mend/base/home_layout.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/obs/metrics.h"
#include "tests/lessonq/queue_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::QueueWorld;
using testing::Request;
using testing::ScriptedProcessor;
using testing::TestOptions;

class RetryTest : public ::testing::Test {
 protected:
  void Start(ScriptedProcessor::Step step, QueueOptions options = TestOptions()) {
    processor_ = std::make_unique<ScriptedProcessor>(std::move(step));
    auto queue = LessonQueue::Open(world_.env(), options, &registry_);
    ASSERT_TRUE(queue.ok()) << queue.status();
    queue_ = std::move(queue).value();
    MEND_ASSERT_OK(queue_->Start(processor_->processor()));
  }
  // Waits for the n-th call and until the worker and the poller wait again.
  void AwaitCall(size_t n) {
    processor_->WaitForCalls(n);
    world_.clock.BlockUntilWaiters(queue_->options().workers + 1);
  }

  QueueWorld world_;
  obs::MetricsRegistry registry_;
  std::unique_ptr<ScriptedProcessor> processor_;
  std::unique_ptr<LessonQueue> queue_;
};

TEST_F(RetryTest, TransientFailureIsRetriedAfterTheDelayNotBefore) {
  const std::string marker = JobIdFor(Request(99));
  Start([&](const Job& job, const JobContext&) -> Result<ProcessResult> {
    if (job.id != marker && job.attempts == 1) return UnavailableError("provider 503");
    return ProcessResult::kSuccess;
  });
  ASSERT_TRUE(queue_->Enqueue(Request(1)).ok());
  AwaitCall(1);
  ASSERT_THAT(
      queue_->Pending(),
      IsOkAndHolds(ElementsAre(AllOf(Field(&Job::attempts, 1),
                                     Field(&Job::next_attempt_at, world_.clock.Now() + seconds(1)),
                                     Field(&Job::last_error, HasSubstr("provider 503"))))));

  // Half the delay later the job is not due: a job enqueued now is processed first.
  world_.clock.Advance(milliseconds(500));
  ASSERT_TRUE(queue_->Enqueue(Request(99)).ok());
  AwaitCall(2);
  EXPECT_EQ(processor_->calls()[1].id, marker);

  world_.clock.Advance(milliseconds(500));
  AwaitCall(3);
  EXPECT_EQ(processor_->calls()[2].request, Request(1));
  EXPECT_EQ(processor_->calls()[2].attempts, 2);
  EXPECT_THAT(queue_->Pending(), IsOkAndHolds(IsEmpty()));
  EXPECT_EQ(registry_.counter_family("mend_lessonq_retry_total", "", {"attempt"})
                .WithLabels({"1"})
                .value(),
            1.0);
}

TEST_F(RetryTest, ExhaustedRetriesMoveTheJobToTheDeadLetterQueue) {
  QueueOptions options = TestOptions();
  options.max_attempts = 2;
  std::mutex mu;
  std::vector<std::pair<int, JobFate>> fates;  // (attempts, fate)
  options.on_job = [&](const Job& job, JobFate fate) {
    std::lock_guard<std::mutex> lock(mu);
    fates.emplace_back(job.attempts, fate);
  };
  Start(
      [](const Job&, const JobContext&) -> Result<ProcessResult> {
        return ResourceExhaustedError("rate limited");
      },
      options);
  ASSERT_TRUE(queue_->Enqueue(Request(1)).ok());
  AwaitCall(1);
  world_.clock.Advance(seconds(1));
  AwaitCall(2);
  EXPECT_THAT(queue_->Pending(), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(queue_->DeadLetters(),
              IsOkAndHolds(ElementsAre(AllOf(Field(&Job::attempts, 2),
                                             Field(&Job::last_error, HasSubstr("rate limited"))))));
  auto& attempts = registry_.counter_family("mend_lessonq_attempts_total", "", {"outcome"});
  EXPECT_EQ(attempts.WithLabels({"transient"}).value(), 2.0);
  EXPECT_EQ(registry_.gauge("mend_lessonq_dlq_size", "").value(), 1.0);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_THAT(fates,
              ElementsAre(std::pair(1, JobFate::kRetrying), std::pair(2, JobFate::kDeadLettered)));
}

TEST_F(RetryTest, AStoredOrSkippedJobIsReportedOnceProcessed) {
  QueueOptions options = TestOptions();
  std::mutex mu;
  std::vector<std::pair<std::string, JobFate>> fates;  // (job id, fate)
  options.on_job = [&](const Job& job, JobFate fate) {
    std::lock_guard<std::mutex> lock(mu);
    fates.emplace_back(job.id, fate);
  };
  const std::string skipped = JobIdFor(Request(2));
  Start(
      [&](const Job& job, const JobContext&) -> Result<ProcessResult> {
        return job.id == skipped ? ProcessResult::kSkipped : ProcessResult::kSuccess;
      },
      options);
  ASSERT_TRUE(queue_->Enqueue(Request(1)).ok());
  AwaitCall(1);
  ASSERT_TRUE(queue_->Enqueue(Request(2)).ok());
  AwaitCall(2);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_THAT(fates, ElementsAre(std::pair(JobIdFor(Request(1)), JobFate::kStored),
                                 std::pair(skipped, JobFate::kSkipped)));
  EXPECT_EQ(JobFateName(JobFate::kDeadLettered), "dead_lettered");
}

TEST_F(RetryTest, PermanentErrorDeadLettersAtOnce) {
  Start([](const Job&, const JobContext&) -> Result<ProcessResult> {
    return InvalidArgumentError("no <situation> block");
  });
  ASSERT_TRUE(queue_->Enqueue(Request(1)).ok());
  AwaitCall(1);
  EXPECT_THAT(
      queue_->DeadLetters(),
      IsOkAndHolds(ElementsAre(
          AllOf(Field(&Job::attempts, 1), Field(&Job::last_error, HasSubstr("no <situation>"))))));
  EXPECT_THAT(queue_->Stats(), IsOkAndHolds(AllOf(Field(&QueueStats::wal_records, 0),
                                                  Field(&QueueStats::dlq_size, 1))));
  auto& attempts = registry_.counter_family("mend_lessonq_attempts_total", "", {"outcome"});
  EXPECT_EQ(attempts.WithLabels({"permanent"}).value(), 1.0);
}

TEST_F(RetryTest, ThrowingProcessorDeadLetters) {
  Start([](const Job&, const JobContext&) -> Result<ProcessResult> {
    throw std::runtime_error("boom");
  });
  ASSERT_TRUE(queue_->Enqueue(Request(1)).ok());
  AwaitCall(1);
  EXPECT_THAT(queue_->DeadLetters(),
              IsOkAndHolds(ElementsAre(Field(&Job::last_error, "processor threw: boom"))));
}

TEST_F(RetryTest, ReturningAfterTheDeadlineIsTransient) {
  Start([&](const Job& job, const JobContext&) -> Result<ProcessResult> {
    if (job.attempts > 1) return ProcessResult::kSkipped;
    world_.clock.Advance(TestOptions().job_timeout + seconds(1));
    return InvalidArgumentError("cut off");
  });
  ASSERT_TRUE(queue_->Enqueue(Request(1)).ok());
  AwaitCall(1);
  EXPECT_THAT(queue_->DeadLetters(), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(queue_->Pending(),
              IsOkAndHolds(ElementsAre(Field(&Job::last_error, HasSubstr("job timeout")))));
  world_.clock.Advance(seconds(1));
  AwaitCall(2);
  EXPECT_THAT(queue_->Pending(), IsOkAndHolds(IsEmpty()));
  auto& attempts = registry_.counter_family("mend_lessonq_attempts_total", "", {"outcome"});
  EXPECT_EQ(attempts.WithLabels({"skipped"}).value(), 1.0);
}

TEST_F(RetryTest, AttemptPastItsDeadlineIsCancelledAndRetried) {
  Start([&](const Job& job, const JobContext& context) -> Result<ProcessResult> {
    if (job.attempts > 1) return ProcessResult::kSkipped;
    context.cancelled->wait(false);  // a model call that never answers, until cancelled
    return CancelledError("request abandoned");
  });
  ASSERT_TRUE(queue_->Enqueue(Request(1)).ok());
  processor_->WaitForCalls(1);
  world_.clock.BlockUntilWaiters(1);  // the poller; the worker is inside the processor
  world_.clock.Advance(TestOptions().job_timeout);
  // The poller cancels the overdue attempt; the failure counts as a timeout and is retried.
  world_.clock.BlockUntilWaiters(2);
  EXPECT_THAT(
      queue_->Pending(),
      IsOkAndHolds(ElementsAre(Field(&Job::last_error, HasSubstr("job timeout exceeded")))));
  world_.clock.Advance(seconds(1));
  AwaitCall(2);
  EXPECT_THAT(queue_->Pending(), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(queue_->DeadLetters(), IsOkAndHolds(IsEmpty()));
}

TEST_F(RetryTest, RetryAndPurgeDeadLetters) {
  int calls_of_1 = 0;  // only the single worker touches it
  Start([&calls_of_1](const Job& job, const JobContext&) -> Result<ProcessResult> {
    if (job.request == Request(1) && calls_of_1++ == 0) return FailedPreconditionError("bad");
    if (job.request == Request(2)) return FailedPreconditionError("bad too");
    return ProcessResult::kSuccess;
  });
  const std::string id1 = JobIdFor(Request(1));
  const std::string id2 = JobIdFor(Request(2));
  ASSERT_TRUE(queue_->Enqueue(Request(1)).ok());
  ASSERT_TRUE(queue_->Enqueue(Request(2)).ok());
  AwaitCall(2);
  ASSERT_THAT(queue_->Stats(), IsOkAndHolds(Field(&QueueStats::dlq_size, 2)));

  MEND_ASSERT_OK(queue_->RetryDeadLetter(id1));
  AwaitCall(3);
  EXPECT_EQ(processor_->calls()[2].id, id1);
  EXPECT_EQ(processor_->calls()[2].attempts, 1);  // reset to 0, then this attempt
  EXPECT_EQ(processor_->calls()[2].last_error, "");
  EXPECT_THAT(queue_->DeadLetters(), IsOkAndHolds(ElementsAre(Field(&Job::id, id2))));

  MEND_ASSERT_OK(queue_->PurgeDeadLetter(id2));
  EXPECT_THAT(queue_->DeadLetters(), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(queue_->PurgeDeadLetter(id2), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(queue_->RetryDeadLetter(id2), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(queue_->PurgeDeadLetter("../wal/x"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(queue_->RetryDeadLetter("ABC"), StatusIs(StatusCode::kInvalidArgument));
}

TEST(LessonQueueDrainTest, ProducerCannotDrain) {
  QueueWorld world;
  auto queue = LessonQueue::Open(world.env(), TestOptions(), nullptr);
  ASSERT_TRUE(queue.ok());
  EXPECT_THAT((*queue)->DrainNow(seconds(1)), StatusIs(StatusCode::kFailedPrecondition));
}

TEST(LessonQueueDrainTest, DrainProcessesEveryDueJobAndReports) {
  QueueWorld world;
  auto owner = LessonQueue::Open(world.env(), TestOptions(), nullptr);
  auto producer = LessonQueue::Open(world.env(), TestOptions(), nullptr);
  ASSERT_TRUE(owner.ok() && producer.ok());
  ScriptedProcessor processor([](const Job& job, const JobContext&) -> Result<ProcessResult> {
    if (job.request == Request(2)) return ProcessResult::kSkipped;
    if (job.request == Request(3) && job.attempts == 1) return UnavailableError("down");
    if (job.request == Request(4)) return InvalidArgumentError("unparsable");
    return ProcessResult::kSuccess;
  });
  MEND_ASSERT_OK((*owner)->Start(processor.processor()));
  // Written by another process: the owner learns of them only through the drain's rescan.
  for (int i = 1; i <= 4; ++i) ASSERT_TRUE((*producer)->Enqueue(Request(i)).ok());

  Result<DrainReport> report = (*owner)->DrainNow(seconds(30));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->succeeded, 1);
  EXPECT_EQ(report->skipped, 1);
  EXPECT_EQ(report->retried, 1);
  EXPECT_EQ(report->dead_lettered, 1);
  EXPECT_EQ(report->remaining, 1);

  // A second drain makes the rescheduled job due at once.
  report = (*owner)->DrainNow(seconds(30));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->succeeded, 1);
  EXPECT_EQ(report->remaining, 0);
  EXPECT_EQ(processor.calls().size(), 5u);
}

// `mend reflect drain` starts the workers, which may finish a replayed job before DrainNow looks:
// that job is still part of what the drain reports.
TEST(LessonQueueDrainTest, ReportsJobsFinishedBeforeTheDrainBegan) {
  QueueWorld world;
  auto owner = LessonQueue::Open(world.env(), TestOptions(), nullptr);
  ASSERT_TRUE(owner.ok());
  ScriptedProcessor processor;
  MEND_ASSERT_OK((*owner)->Start(processor.processor()));
  ASSERT_TRUE((*owner)->Enqueue(Request(1)).ok());
  processor.WaitForCalls(1);
  world.clock.BlockUntilWaiters(2);  // the worker is back waiting, and the poller

  Result<DrainReport> report = (*owner)->DrainNow(seconds(30));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->succeeded, 1);
  EXPECT_EQ(report->remaining, 0);
  // Reported once: the next drain starts from there.
  report = (*owner)->DrainNow(seconds(30));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->succeeded, 0);
}

TEST(LessonQueueShutdownTest, WaitsForJobsInFlight) {
  QueueWorld world;
  auto queue = LessonQueue::Open(world.env(), TestOptions(), nullptr);
  ASSERT_TRUE(queue.ok());
  testing::Gate gate;
  ScriptedProcessor processor([&](const Job&, const JobContext&) -> Result<ProcessResult> {
    gate.Wait();
    return ProcessResult::kSuccess;
  });
  MEND_ASSERT_OK((*queue)->Start(processor.processor()));
  ASSERT_TRUE((*queue)->Enqueue(Request(1)).ok());
  processor.WaitForCalls(1);
  Status shutdown = InternalError("not run");
  std::thread stopper([&] { shutdown = (*queue)->Shutdown(seconds(30)); });
  gate.Open();
  stopper.join();
  MEND_EXPECT_OK(shutdown);
  EXPECT_FALSE((*queue)->owner());
  EXPECT_THAT((*queue)->Stats(), IsOkAndHolds(Field(&QueueStats::wal_records, 0)));
  MEND_EXPECT_OK((*queue)->Shutdown(seconds(1)));  // idempotent
}

// Drain-and-shutdown: a due job that no worker has taken yet is still processed before the
// workers stop (the lesson of a run that failed just before its process exits).
TEST(LessonQueueShutdownTest, ProcessesDueJobsNotYetStartedBeforeStopping) {
  QueueWorld world;
  QueueOptions options = TestOptions();
  options.workers = 1;
  auto queue = LessonQueue::Open(world.env(), options, nullptr);
  ASSERT_TRUE(queue.ok());
  testing::Gate gate;
  ScriptedProcessor processor([&](const Job& job, const JobContext&) -> Result<ProcessResult> {
    if (job.request == Request(1)) gate.Wait();
    return ProcessResult::kSuccess;
  });
  MEND_ASSERT_OK((*queue)->Start(processor.processor()));
  ASSERT_TRUE((*queue)->Enqueue(Request(1)).ok());
  processor.WaitForCalls(1);  // the only worker is busy with job 1
  ASSERT_TRUE((*queue)->Enqueue(Request(2)).ok());
  Status shutdown = InternalError("not run");
  std::thread stopper([&] { shutdown = (*queue)->Shutdown(seconds(30)); });
  world.clock.BlockUntilWaiters(2);  // the poller, and Shutdown waiting for the queue to drain
  gate.Open();
  stopper.join();
  MEND_EXPECT_OK(shutdown);
  ASSERT_EQ(processor.calls().size(), 2u);
  EXPECT_EQ(processor.calls()[1].request, Request(2));
  EXPECT_THAT((*queue)->Stats(), IsOkAndHolds(Field(&QueueStats::wal_records, 0)));
}

TEST(LessonQueueShutdownTest, StuckProcessorGivesDeadlineExceededAndKeepsTheRecord) {
  QueueWorld world;
  // Stuck until shutdown gives up on it; then it fails as a cancelled call would. Declared before
  // the queue, so it outlives the worker that shutdown left behind.
  ScriptedProcessor processor([](const Job&, const JobContext& context) -> Result<ProcessResult> {
    context.cancelled->wait(false);
    return CancelledError("cancelled");
  });
  auto queue = LessonQueue::Open(world.env(), TestOptions(), nullptr);
  ASSERT_TRUE(queue.ok());
  MEND_ASSERT_OK((*queue)->Start(processor.processor()));
  ASSERT_TRUE((*queue)->Enqueue(Request(1)).ok());
  processor.WaitForCalls(1);
  EXPECT_THAT((*queue)->Shutdown(Duration::zero()), StatusIs(StatusCode::kDeadlineExceeded));
  EXPECT_THAT((*queue)->Pending(),
              IsOkAndHolds(ElementsAre(
                  AllOf(Field(&Job::id, JobIdFor(Request(1))), Field(&Job::attempts, 0)))));
  EXPECT_THAT((*queue)->DeadLetters(), IsOkAndHolds(IsEmpty()));

  // The lock is released: a new owner replays the job.
  auto next = LessonQueue::Open(world.env(), TestOptions(), nullptr);
  ASSERT_TRUE(next.ok());
  ScriptedProcessor second;
  MEND_ASSERT_OK((*next)->Start(second.processor()));
  second.WaitForCalls(1);
  EXPECT_EQ(second.calls()[0].request, Request(1));
}

// Holds the first listing of a directory made after Arm() between reading the directory and
// returning the names, until Release(): a listing slow to come back, as on a loaded machine.
class SlowListingFileSystem final : public FileSystem {
 public:
  explicit SlowListingFileSystem(FileSystem* base) : base_(*base) {}

  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path,
                                                     WriteMode mode) override {
    return base_.OpenWritable(path, mode);
  }
  Result<std::unique_ptr<ReadableFile>> OpenReadable(const std::string& path) override {
    return base_.OpenReadable(path);
  }
  Result<std::unique_ptr<RandomAccessFile>> OpenRandomAccess(const std::string& path,
                                                             bool create) override {
    return base_.OpenRandomAccess(path, create);
  }
  Status Rename(const std::string& from, const std::string& to) override {
    return base_.Rename(from, to);
  }
  Status SyncDir(const std::string& dir) override { return base_.SyncDir(dir); }
  Status Unlink(const std::string& path) override { return base_.Unlink(path); }
  Status CreateDirs(const std::string& dir) override { return base_.CreateDirs(dir); }
  Result<FileInfo> Stat(const std::string& path) override { return base_.Stat(path); }
  Result<std::unique_ptr<FileLock>> Lock(const std::string& path) override {
    return base_.Lock(path);
  }
  Result<std::vector<std::string>> List(const std::string& dir) override {
    Result<std::vector<std::string>> names = base_.List(dir);
    std::unique_lock<std::mutex> lock(mu_);
    if (armed_ && dir == dir_) {
      armed_ = false;
      held_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return released_; });
    }
    return names;
  }

  void Arm(std::string dir) {
    std::lock_guard<std::mutex> lock(mu_);
    dir_ = std::move(dir);
    armed_ = true;
  }
  void AwaitHeld() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return held_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  FileSystem& base_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string dir_;
  bool armed_ = false;
  bool held_ = false;
  bool released_ = false;
};

// The poller and a worker both refresh the gauges. A poller whose listing of dlq/ was read before
// a worker moved a job there must not set the dead-letter count back once the worker has set it.
TEST(LessonQueueGaugeTest, AListingReadBeforeAMoveDoesNotSetTheDeadLetterCountBack) {
  QueueWorld world;
  SlowListingFileSystem fs(&world.fs);
  QueueOptions options = TestOptions();
  options.max_attempts = 2;
  obs::MetricsRegistry registry;
  // The second attempt fails only once the poller has listed dlq/ (still empty) and is held.
  ScriptedProcessor processor([&](const Job& job, const JobContext&) -> Result<ProcessResult> {
    if (job.attempts == 2) fs.AwaitHeld();
    return ResourceExhaustedError("rate limited");
  });
  auto queue = LessonQueue::Open(Env{&fs, &world.clock, &world.random}, options, &registry);
  ASSERT_TRUE(queue.ok()) << queue.status();
  MEND_ASSERT_OK((*queue)->Start(processor.processor()));
  ASSERT_TRUE((*queue)->Enqueue(Request(1)).ok());
  processor.WaitForCalls(1);
  world.clock.BlockUntilWaiters(options.workers + 1);

  fs.Arm(home::LessonDlqDir(options.base_dir));
  world.clock.Advance(seconds(1));
  processor.WaitForCalls(2);
  fs.AwaitHeld();
  // The worker has moved the job and waits for work; the poller is still in its listing.
  world.clock.BlockUntilWaiters(options.workers);
  auto& dlq_size = registry.gauge("mend_lessonq_dlq_size", "");
  EXPECT_EQ(dlq_size.value(), 1.0);

  fs.Release();
  world.clock.BlockUntilWaiters(options.workers + 1);
  EXPECT_EQ(dlq_size.value(), 1.0);
  EXPECT_THAT((*queue)->DeadLetters(), IsOkAndHolds(ElementsAre(Field(&Job::attempts, 2))));
  MEND_EXPECT_OK((*queue)->Shutdown(seconds(5)));
}

}  // namespace
}  // namespace mend::lessonq
