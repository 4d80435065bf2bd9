// Legacy mode: one background thread per request, no WAL, no retries.

#include <atomic>
#include <condition_variable>
#include <exception>
#include <list>
#include <mutex>
#include <thread>
#include <utility>

#include "mend/lessonq/lesson_queue.h"

namespace mend::lessonq {

class DetachedLessonRunner::Impl {
 public:
  Impl(Env env, Processor processor, Duration job_timeout)
      : env_(env), processor_(std::move(processor)), job_timeout_(job_timeout) {}

  ~Impl() {
    WaitIdle();
    std::lock_guard<std::mutex> lock(mu_);
    for (Task& task : tasks_) task.thread.join();
  }

  Result<EnqueueResult> Enqueue(const LessonRequest& request) {
    const Time now = env_.clock->Now();
    Job job{JobIdFor(request), request, now, now, 1, ""};
    EnqueueResult result{job.id, true, EnqueueOutcome::kAccepted};
    std::lock_guard<std::mutex> lock(mu_);
    ReapFinished();
    ++pending_;
    tasks_.emplace_back();
    Task* task = &tasks_.back();
    task->thread = std::thread([this, task, job = std::move(job)] { Run(job, task); });
    return result;
  }

  void WaitIdle() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  struct Task {
    std::thread thread;
    bool done = false;  // under mu_
  };

  // The outcome is the processor's business (it logs and counts); exceptions must not escape a
  // thread, so they are swallowed here as the legacy mode always did.
  void Run(const Job& job, Task* task) {
    const JobContext context{env_.clock->Now() + job_timeout_, &cancelled_};
    try {
      processor_(job, context).status().IgnoreError();
    } catch (...) {
    }
    std::lock_guard<std::mutex> lock(mu_);
    task->done = true;
    --pending_;
    idle_.notify_all();
  }

  // Joins the threads of requests already processed so that the list stays short.
  void ReapFinished() {
    for (auto it = tasks_.begin(); it != tasks_.end();) {
      if (!it->done) {
        ++it;
        continue;
      }
      it->thread.join();
      it = tasks_.erase(it);
    }
  }

  Env env_;
  Processor processor_;
  const Duration job_timeout_;
  std::atomic<bool> cancelled_{false};  // never set: legacy jobs run to completion
  std::mutex mu_;
  std::condition_variable idle_;
  std::list<Task> tasks_;
  int64_t pending_ = 0;
};

DetachedLessonRunner::DetachedLessonRunner(Env env, Processor processor, Duration job_timeout)
    : impl_(std::make_unique<Impl>(env, std::move(processor), job_timeout)) {}

DetachedLessonRunner::~DetachedLessonRunner() = default;

Result<EnqueueResult> DetachedLessonRunner::Enqueue(const LessonRequest& request) {
  return impl_->Enqueue(request);
}

void DetachedLessonRunner::WaitIdle() { impl_->WaitIdle(); }

}  // namespace mend::lessonq
