#pragma once

// Vectors for facts that lack them (docs/memory.md): EmbedMissing, the batched call behind `mend
// memory embed`, and EmbeddingBackfill, the background thread that embeds new facts so runs never
// wait for an embeddings endpoint.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/status.h"
#include "mend/llm/embedder.h"
#include "mend/memory/fact_store.h"

namespace mend::memory {

/// How facts' texts are sent to an embeddings endpoint (memory.embeddings.* in the configuration).
struct EmbedOptions {
  size_t batch = 128;  ///< texts per request (OpenAI's endpoint takes up to 2048)
  /// ...and at most this many bytes of text per request, so a request of long facts stays far below
  /// the endpoint's token limit (OpenAI: 300,000 per request). A single longer text goes alone.
  size_t batch_bytes = 512u << 10;
  /// Requests in flight at a time. With 1, the next request still leaves while an answer is
  /// stored.
  size_t concurrency = 4;
  int max_attempts = 4;  ///< per request, when its error is retryable (IsRetryable)
  std::chrono::milliseconds first_delay{1'000};  ///< pause after the first failure; doubles
  std::chrono::milliseconds max_delay{30'000};   ///< cap of the pause and of a Retry-After
};

/// How far EmbedMissing got.
struct EmbedProgress {
  int64_t facts_done = 0;   ///< facts this call left with a vector for every part
  int64_t facts_total = 0;  ///< facts that lacked one when it began
  int64_t texts = 0;        ///< vectors stored
  int64_t requests = 0;     ///< answered requests
  int64_t retries = 0;      ///< failed attempts tried again
};

/// What EmbedMissing did.
struct EmbedReport {
  EmbedProgress progress;  ///< the counts at the end
  /// Why it stopped before the end: the error of the last attempt (the endpoint's, its key
  /// masked, or the store's). OK when every missing vector was stored.
  Status error;
};

/// Embeds for `embedder`'s model every part without a vector of the active facts (`ids` null) or of
/// the facts in `*ids`, with up to options.concurrency requests in flight. Each answer is stored in
/// one transaction, in the order the requests were sent, so what was answered stays when the call
/// stops early and a later call sends only what is still missing. A request failing with a
/// retryable error is sent again after a pause (first_delay, doubling, at least the server's
/// Retry-After, at most max_delay), up to max_attempts in all; any other error, or the last
/// attempt's, stops the call (the requests already in flight are still stored). `on_progress`, when
/// set, is called after each stored batch, on the calling thread.
EmbedReport EmbedMissing(FactStore& store, llm::Embedder& embedder, Clock& clock,
                         const std::vector<std::string>* ids, const EmbedOptions& options,
                         const std::function<void(const EmbedProgress&)>& on_progress = nullptr);

/// How EmbeddingBackfill batches and waits.
struct BackfillOptions {
  size_t batch = 128;                      ///< texts per embedding request
  std::chrono::milliseconds idle{30'000};  ///< sleep when nothing is missing
  /// The first pause after a failed request (doubles, ≤ idle).
  std::chrono::milliseconds on_error{5'000};
};

/// Embeds facts that have no vector for the embedder's model, on a background thread, so runs never
/// wait for an embeddings endpoint. Notify() after a write wakes it early. A failed request is
/// retried later; nothing is lost or blocked. Stops (joining the thread) on Stop() or destruction.
class EmbeddingBackfill {
 public:
  /// All pointers must outlive the backfill.
  EmbeddingBackfill(FactStore* store, llm::Embedder* embedder, Clock* clock,
                    BackfillOptions options = {});
  ~EmbeddingBackfill();

  /// Starts the thread, which embeds what is missing at once.
  void Start();
  /// Wakes the thread early: a fact was written.
  void Notify();
  /// Stops and joins the thread; idempotent.
  void Stop();

  /// One pass in the caller's thread (tests): embeds up to `max_texts` missing parts, one request
  /// per batch, without retrying. Returns how many vectors were stored.
  Result<int64_t> RunOnce(size_t max_texts);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mend::memory
