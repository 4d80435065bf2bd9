#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
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
//
// Its state is shared with the functions processor() hands out: a test that declares the queue
// first destroys the ScriptedProcessor first, while a worker may still be finishing a call (the
// queue's destructor waits for it), and the worker must not touch freed memory then.
class ScriptedProcessor {
 public:
  using Step = std::function<Result<ProcessResult>(const Job&, const JobContext&)>;

  explicit ScriptedProcessor(Step step = nullptr) : state_(std::make_shared<State>()) {
    state_->step = std::move(step);
  }

  Processor processor() {
    return [state = state_](const Job& job, const JobContext& context) -> Result<ProcessResult> {
      {
        std::lock_guard<std::mutex> lock(state->mu);
        state->calls.push_back(job);
        state->contexts.push_back(context);
      }
      state->cv.notify_all();
      if (!state->step) return ProcessResult::kSuccess;
      return state->step(job, context);
    };
  }

  void WaitForCalls(size_t n) {
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->cv.wait(lock, [&] { return state_->calls.size() >= n; });
  }
  std::vector<Job> calls() {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->calls;
  }
  std::vector<std::string> ids() {
    std::vector<std::string> out;
    for (const Job& job : calls()) out.push_back(job.id);
    return out;
  }
  std::vector<JobContext> contexts() {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->contexts;
  }

 private:
  struct State {
    Step step;  // set before processor() is first called; read-only afterwards
    std::mutex mu;
    std::condition_variable cv;
    std::vector<Job> calls;
    std::vector<JobContext> contexts;
  };
  std::shared_ptr<State> state_;
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
