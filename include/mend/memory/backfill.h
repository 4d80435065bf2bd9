#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "mend/base/clock.h"
#include "mend/llm/embedder.h"
#include "mend/memory/fact_store.h"

namespace mend::memory {

struct BackfillOptions {
  size_t batch = 64;                       // texts per embedding request
  std::chrono::milliseconds idle{30'000};  // sleep when nothing is missing
  std::chrono::milliseconds on_error{
      5'000};  // first pause after a failed request (doubles, ≤ idle)
};

// Embeds facts that have no vector for the embedder's model, on a background thread, so writes and
// runs never wait for an embeddings endpoint. Notify() after a write wakes it early. A failed
// request is retried later; nothing is lost or blocked. Stops (joining the thread) on Stop() or
// destruction.
class EmbeddingBackfill {
 public:
  // All pointers must outlive the backfill.
  EmbeddingBackfill(FactStore* store, llm::Embedder* embedder, Clock* clock,
                    BackfillOptions options = {});
  ~EmbeddingBackfill();

  void Start();
  void Notify();
  void Stop();

  // One pass in the caller's thread (tests, `mend memory` commands): embeds up to `max_texts`
  // missing parts. Returns how many vectors were stored.
  Result<int64_t> RunOnce(size_t max_texts);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mend::memory
