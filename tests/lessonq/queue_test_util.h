#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/env.h"
#include "mend/base/manual_clock.h"
#include "mend/base/memory_file_system.h"
#include "mend/base/random.h"
#include "mend/lessonq/lesson_queue.h"

namespace mend::lessonq::testing {

// The seams of a queue under test: memory, virtual time, seeded randomness.
struct QueueWorld {
  MemoryFileSystem fs;
  ManualClock clock;
  SeededRandom random{7};
  Env env() { return Env{&fs, &clock, &random}; }
};

// Small, deterministic options: one worker, no jitter, 1 s first delay, 1 s poll.
inline QueueOptions TestOptions() {
  QueueOptions options;
  options.base_dir = "/q";
  options.workers = 1;
  options.capacity = 100;
  options.jitter = 0.0;
  options.initial_delay = std::chrono::seconds(1);
  options.max_delay = std::chrono::minutes(1);
  options.max_attempts = 3;
  options.poll_interval = std::chrono::seconds(1);
  return options;
}

inline LessonRequest Request(int i) {
  return {"task " + std::to_string(i), "attempt", "outcome", "error"};
}

// A processor whose behaviour a test scripts; it records every call before running the script,
// so a test can wait for the n-th call to have started.
class ScriptedProcessor {
 public:
  using Step = std::function<Result<ProcessResult>(const Job&, const JobContext&)>;

  explicit ScriptedProcessor(Step step = nullptr) : step_(std::move(step)) {}

  Processor processor() {
    return [this](const Job& job, const JobContext& context) -> Result<ProcessResult> {
      {
        std::lock_guard<std::mutex> lock(mu_);
        calls_.push_back(job);
        contexts_.push_back(context);
      }
      cv_.notify_all();
      if (!step_) return ProcessResult::kSuccess;
      return step_(job, context);
    };
  }

  void WaitForCalls(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return calls_.size() >= n; });
  }
  std::vector<Job> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  std::vector<std::string> ids() {
    std::vector<std::string> out;
    for (const Job& job : calls()) out.push_back(job.id);
    return out;
  }
  std::vector<JobContext> contexts() {
    std::lock_guard<std::mutex> lock(mu_);
    return contexts_;
  }

 private:
  Step step_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Job> calls_;
  std::vector<JobContext> contexts_;
};

// A gate a processor waits at until the test opens it.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

}  // namespace mend::lessonq::testing
