#include "mend/memory/backfill.h"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace mend::memory {

namespace {

// One request for the texts of `batch`: a vector for each, in order.
Result<std::vector<std::vector<float>>> EmbedTexts(llm::Embedder& embedder,
                                                   const std::vector<EmbeddingWork>& batch) {
  std::vector<std::string> texts;
  texts.reserve(batch.size());
  for (const EmbeddingWork& w : batch) texts.push_back(w.text);
  MEND_ASSIGN_OR_RETURN(std::vector<std::vector<float>> vectors, embedder.Embed(texts));
  if (vectors.size() != batch.size()) {
    return InternalError("the embedder returned " + std::to_string(vectors.size()) +
                         " vectors for " + std::to_string(batch.size()) + " texts");
  }
  return vectors;
}

// Stores the answer to `batch` in one transaction; returns how many vectors were stored (a fact
// removed since it was listed stores nothing).
Result<int64_t> StoreAnswer(FactStore& store, const std::string& model,
                            const std::vector<EmbeddingWork>& batch,
                            std::vector<std::vector<float>> vectors) {
  std::vector<FactVector> put;
  put.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    put.push_back(FactVector{batch[i].id, batch[i].part, std::move(vectors[i]), ""});
  }
  return store.PutEmbeddings(put, model);
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

// The answer to one batch: its vectors, or the error of its last attempt.
struct Answer {
  Result<std::vector<std::vector<float>>> vectors;
  int64_t retries = 0;
};

// Sends `batch` until it is answered, pausing between attempts as EmbedMissing says.
Answer EmbedWithRetries(llm::Embedder& embedder, Clock& clock,
                        const std::vector<EmbeddingWork>& batch, const EmbedOptions& options) {
  Answer answer{std::vector<std::vector<float>>{}, 0};
  std::chrono::milliseconds pause = options.first_delay;
  for (int attempt = 1;; ++attempt) {
    answer.vectors = EmbedTexts(embedder, batch);
    if (answer.vectors.ok() || attempt >= options.max_attempts ||
        !IsRetryable(answer.vectors.status())) {
      return answer;
    }
    std::chrono::milliseconds wait = pause;
    if (std::optional<std::chrono::milliseconds> after = answer.vectors.status().retry_after()) {
      wait = std::max(wait, *after);
    }
    clock.SleepFor(std::min(wait, options.max_delay));
    pause = std::min(pause * 2, options.max_delay);
    answer.retries += 1;
  }
}

// A batch sent and not yet stored.
struct Flight {
  std::vector<EmbeddingWork> batch;
  std::future<Answer> answer;
};

// Sends the batches `next` gives, up to options.concurrency at a time, and stores each answer in
// one transaction, in the order they were sent. The next request leaves before an answer is
// stored, so the endpoint and the store work at the same time.
class Pipeline {
 public:
  using Next = std::function<Result<std::vector<EmbeddingWork>>()>;

  Pipeline(FactStore& store, llm::Embedder& embedder, Clock& clock, const EmbedOptions& options,
           const std::function<void(const EmbedProgress&)>& on_progress, EmbedReport& report)
      : store_(store),
        embedder_(embedder),
        clock_(clock),
        options_(options),
        on_progress_(on_progress),
        report_(report) {}

  // Runs until `next` gives an empty batch or something fails (report_.error).
  void Run(const Next& next) {
    Status listed = Fill(next);
    while (!flights_.empty()) {
      Flight flight = std::move(flights_.front());
      flights_.pop_front();
      Answer answer = flight.answer.get();
      report_.progress.retries += answer.retries;
      if (!answer.vectors.ok()) {
        Fail(answer.vectors.status());
        continue;  // the batches in flight are still stored when answered
      }
      if (report_.error.ok() && listed.ok()) listed = Fill(next);
      Status stored = Store(flight.batch, std::move(answer.vectors).value());
      if (!stored.ok()) Fail(stored);
    }
    if (!listed.ok()) Fail(listed);
  }

 private:
  Status Fill(const Next& next) {
    while (flights_.size() < std::max<size_t>(1, options_.concurrency)) {
      MEND_ASSIGN_OR_RETURN(std::vector<EmbeddingWork> batch, next());
      if (batch.empty()) return OkStatus();
      llm::Embedder& embedder = embedder_;
      Clock& clock = clock_;
      const EmbedOptions options = options_;
      std::future<Answer> answer =
          std::async(std::launch::async, [&embedder, &clock, batch, options] {
            return EmbedWithRetries(embedder, clock, batch, options);
          });
      flights_.push_back(Flight{std::move(batch), std::move(answer)});
    }
    return OkStatus();
  }

  Status Store(const std::vector<EmbeddingWork>& batch, std::vector<std::vector<float>> vectors) {
    MEND_ASSIGN_OR_RETURN(int64_t stored,
                          StoreAnswer(store_, embedder_.model_id(), batch, std::move(vectors)));
    EmbedProgress& progress = report_.progress;
    progress.texts += stored;
    progress.requests += 1;
    for (const EmbeddingWork& w : batch) progress.facts_done += w.completes_fact ? 1 : 0;
    if (on_progress_) on_progress_(progress);
    return OkStatus();
  }

  void Fail(const Status& error) {
    if (report_.error.ok()) report_.error = error;
  }

  FactStore& store_;
  llm::Embedder& embedder_;
  Clock& clock_;
  const EmbedOptions& options_;
  const std::function<void(const EmbedProgress&)>& on_progress_;
  EmbedReport& report_;
  std::deque<Flight> flights_;
};

}  // namespace

EmbedReport EmbedMissing(FactStore& store, llm::Embedder& embedder, Clock& clock,
                         const std::vector<std::string>* ids, const EmbedOptions& options,
                         const std::function<void(const EmbedProgress&)>& on_progress) {
  EmbedReport report;
  EmbedProgress& progress = report.progress;
  const std::string model = embedder.model_id();
  const size_t batch = std::max<size_t>(1, options.batch);
  Pipeline pipeline(store, embedder, clock, options, on_progress, report);
  if (ids != nullptr) {
    Result<std::vector<EmbeddingWork>> work = store.MissingEmbeddingsOf(model, *ids);
    if (!work.ok()) {
      report.error = work.status();
      return report;
    }
    for (const EmbeddingWork& w : *work) progress.facts_total += w.completes_fact ? 1 : 0;
    size_t begin = 0;
    pipeline.Run([&]() -> Result<std::vector<EmbeddingWork>> {
      const size_t n = BatchSize(*work, begin, options);
      std::vector<EmbeddingWork> next(work->begin() + static_cast<ptrdiff_t>(begin),
                                      work->begin() + static_cast<ptrdiff_t>(begin + n));
      begin += n;
      return next;
    });
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
  // The listing goes on from the last fact sent, leaving out the parts sent and not yet stored
  // (a fact whose parts did not all fit is listed again for the rest).
  int64_t from = 0;
  std::set<std::tuple<int64_t, std::string, int>> sent;  // (position, id, part), from `from` on
  const size_t in_flight = batch * std::max<size_t>(1, options.concurrency);
  pipeline.Run([&]() -> Result<std::vector<EmbeddingWork>> {
    MEND_ASSIGN_OR_RETURN(std::vector<EmbeddingWork> listed,
                          store.MissingEmbeddings(model, batch + in_flight, from));
    std::vector<EmbeddingWork> next;
    for (EmbeddingWork& w : listed) {
      if (next.size() >= batch) break;
      if (sent.insert({w.position, w.id, w.part}).second) next.push_back(std::move(w));
    }
    const size_t n = BatchSize(next, 0, options);
    for (size_t i = n; i < next.size(); ++i)
      sent.erase({next[i].position, next[i].id, next[i].part});
    next.resize(n);
    if (!next.empty()) {
      from = next.back().position;
      // What lies before `from` is never listed again.
      sent.erase(sent.begin(), sent.lower_bound({from, std::string(), 0}));
    }
    return next;
  });
  return report;
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
      MEND_ASSIGN_OR_RETURN(std::vector<std::vector<float>> vectors, EmbedTexts(*embedder_, work));
      MEND_ASSIGN_OR_RETURN(int64_t n,
                            StoreAnswer(*store_, embedder_->model_id(), work, std::move(vectors)));
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
