#include "mend/memory/backfill.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace mend::memory {

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
    while (static_cast<size_t>(stored) < max_texts) {
      size_t want = std::min(options_.batch, max_texts - static_cast<size_t>(stored));
      MEND_ASSIGN_OR_RETURN(std::vector<EmbeddingWork> work,
                            store_->MissingEmbeddings(embedder_->model_id(), want));
      if (work.empty()) break;
      std::vector<std::string> texts;
      for (const EmbeddingWork& w : work) texts.push_back(w.text);
      MEND_ASSIGN_OR_RETURN(std::vector<std::vector<float>> vectors, embedder_->Embed(texts));
      if (vectors.size() != work.size()) {
        return InternalError("the embedder returned " + std::to_string(vectors.size()) +
                             " vectors for " + std::to_string(work.size()) + " texts");
      }
      for (size_t i = 0; i < work.size(); ++i) {
        Status put = store_->PutEmbedding({work[i].id, work[i].part, std::move(vectors[i])},
                                          embedder_->model_id());
        // A fact removed since it was listed is simply skipped.
        if (!put.ok() && put.code() != StatusCode::kNotFound) return put;
        if (put.ok()) ++stored;
      }
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
