#include "mend/memory/backfill.h"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace mend::memory {

namespace {

// Sends the texts of `work` in one request and stores the answer in one transaction. Returns how
// many vectors were stored.
Result<int64_t> EmbedBatch(FactStore& store, llm::Embedder& embedder,
                           const std::vector<EmbeddingWork>& work) {
  std::vector<std::string> texts;
  texts.reserve(work.size());
  for (const EmbeddingWork& w : work) texts.push_back(w.text);
  MEND_ASSIGN_OR_RETURN(std::vector<std::vector<float>> vectors, embedder.Embed(texts));
  if (vectors.size() != work.size()) {
    return InternalError("the embedder returned " + std::to_string(vectors.size()) +
                         " vectors for " + std::to_string(work.size()) + " texts");
  }
  std::vector<FactVector> put;
  put.reserve(work.size());
  for (size_t i = 0; i < work.size(); ++i) {
    put.push_back(FactVector{work[i].id, work[i].part, std::move(vectors[i]), ""});
  }
  return store.PutEmbeddings(put, embedder.model_id());
}

// The first items of `work` that fit one request: at most `batch`, and within `bytes` of text
// unless the first alone is longer.
size_t BatchSize(const std::vector<EmbeddingWork>& work, size_t begin,
                 const EmbedOptions& options) {
  size_t n = 0;
  size_t bytes = 0;
  while (begin + n < work.size() && n < options.batch) {
    bytes += work[begin + n].text.size();
    if (n > 0 && bytes > options.batch_bytes) break;
    ++n;
  }
  return n;
}

// Sends `batch` until it is answered, pausing between attempts as EmbedMissing says, and stores
// the answer. Counts into `progress`; returns how many vectors were stored.
Result<int64_t> SendWithRetries(FactStore& store, llm::Embedder& embedder, Clock& clock,
                                const std::vector<EmbeddingWork>& batch,
                                const EmbedOptions& options, EmbedProgress& progress) {
  std::chrono::milliseconds pause = options.first_delay;
  for (int attempt = 1;; ++attempt) {
    Result<int64_t> stored = EmbedBatch(store, embedder, batch);
    if (stored.ok()) {
      progress.texts += *stored;
      progress.requests += 1;
      for (const EmbeddingWork& w : batch) progress.facts_done += w.completes_fact ? 1 : 0;
      return stored;
    }
    if (attempt >= options.max_attempts || !IsRetryable(stored.status())) {
      return stored.status();
    }
    std::chrono::milliseconds wait = pause;
    if (std::optional<std::chrono::milliseconds> after = stored.status().retry_after()) {
      wait = std::max(wait, *after);
    }
    clock.SleepFor(std::min(wait, options.max_delay));
    pause = std::min(pause * 2, options.max_delay);
    progress.retries += 1;
  }
}

}  // namespace

EmbedReport EmbedMissing(FactStore& store, llm::Embedder& embedder, Clock& clock,
                         const std::vector<std::string>* ids, const EmbedOptions& options,
                         const std::function<void(const EmbedProgress&)>& on_progress) {
  EmbedReport report;
  EmbedProgress& progress = report.progress;
  const std::string model = embedder.model_id();
  const size_t batch = std::max<size_t>(1, options.batch);
  if (ids != nullptr) {
    Result<std::vector<EmbeddingWork>> work = store.MissingEmbeddingsOf(model, *ids);
    if (!work.ok()) {
      report.error = work.status();
      return report;
    }
    for (const EmbeddingWork& w : *work) progress.facts_total += w.completes_fact ? 1 : 0;
    for (size_t begin = 0; begin < work->size();) {
      const size_t n = BatchSize(*work, begin, options);
      const std::vector<EmbeddingWork> part(work->begin() + static_cast<ptrdiff_t>(begin),
                                            work->begin() + static_cast<ptrdiff_t>(begin + n));
      Result<int64_t> stored = SendWithRetries(store, embedder, clock, part, options, progress);
      if (!stored.ok()) {
        report.error = stored.status();
        return report;
      }
      if (on_progress) on_progress(progress);
      begin += n;
    }
    return report;
  }
  Result<std::vector<EmbeddingCoverage>> coverage = store.Coverage(model);
  if (!coverage.ok()) {
    report.error = coverage.status();
    return report;
  }
  for (const EmbeddingCoverage& c : *coverage) {
    if (c.model_id == model) progress.facts_total = c.uncovered;
  }
  int64_t from = 0;
  while (true) {
    Result<std::vector<EmbeddingWork>> work = store.MissingEmbeddings(model, batch, from);
    if (!work.ok()) {
      report.error = work.status();
      return report;
    }
    if (work->empty()) return report;
    const size_t n = BatchSize(*work, 0, options);
    work->resize(n);
    Result<int64_t> stored = SendWithRetries(store, embedder, clock, *work, options, progress);
    if (!stored.ok()) {
      report.error = stored.status();
      return report;
    }
    if (on_progress) on_progress(progress);
    // The next listing starts at the last fact sent: its parts that did not fit come next. (A
    // fact removed meanwhile stores nothing and is not listed again.)
    if (*stored == 0 && work->back().position == from) {
      report.error = InternalError("vectors of fact " + work->back().id + " could not be stored");
      return report;
    }
    from = work->back().position;
  }
}

class EmbeddingBackfill::Impl {
 public:
  Impl(FactStore* store, llm::Embedder* embedder, Clock* clock, BackfillOptions options)
      : store_(store), embedder_(embedder), clock_(clock), options_(options) {}
  ~Impl() { Stop(); }

  void Start() {
    std::lock_guard<std::mutex> lock(mu_);
    if (thread_.joinable()) return;
    stop_ = false;
    thread_ = std::thread([this] { Loop(); });
  }

  void Notify() {
    std::lock_guard<std::mutex> lock(mu_);
    notified_ = true;
    cv_.notify_all();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }

  Result<int64_t> RunOnce(size_t max_texts) {
    int64_t stored = 0;
    int64_t from = 0;
    while (static_cast<size_t>(stored) < max_texts) {
      size_t want = std::min(options_.batch, max_texts - static_cast<size_t>(stored));
      MEND_ASSIGN_OR_RETURN(std::vector<EmbeddingWork> work,
                            store_->MissingEmbeddings(embedder_->model_id(), want, from));
      if (work.empty()) break;
      MEND_ASSIGN_OR_RETURN(int64_t n, EmbedBatch(*store_, *embedder_, work));
      if (n == 0) break;  // the facts went away meanwhile
      stored += n;
      from = work.back().position;
      if (work.size() < want) break;
    }
    return stored;
  }

 private:
  void Loop() {
    std::chrono::milliseconds pause = options_.on_error;
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      lock.unlock();
      Result<int64_t> stored = RunOnce(options_.batch);
      lock.lock();
      if (stop_) break;
      std::chrono::milliseconds wait = options_.idle;
      if (!stored.ok()) {
        wait = pause;
        pause = std::min(pause * 2, options_.idle);
      } else {
        pause = options_.on_error;
        if (*stored > 0) continue;  // more may be missing
      }
      notified_ = false;
      clock_->WaitUntil(cv_, lock, clock_->Now() + wait, [this] { return stop_ || notified_; });
    }
  }

  FactStore* store_;
  llm::Embedder* embedder_;
  Clock* clock_;
  const BackfillOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool notified_ = false;
  std::thread thread_;
};

EmbeddingBackfill::EmbeddingBackfill(FactStore* store, llm::Embedder* embedder, Clock* clock,
                                     BackfillOptions options)
    : impl_(std::make_unique<Impl>(store, embedder, clock, options)) {}

EmbeddingBackfill::~EmbeddingBackfill() = default;

void EmbeddingBackfill::Start() { impl_->Start(); }
void EmbeddingBackfill::Notify() { impl_->Notify(); }
void EmbeddingBackfill::Stop() { impl_->Stop(); }
Result<int64_t> EmbeddingBackfill::RunOnce(size_t max_texts) { return impl_->RunOnce(max_texts); }

}  // namespace mend::memory
