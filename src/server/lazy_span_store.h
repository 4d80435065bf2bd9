#pragma once

// observe.db for a route group, opened on first use: the file may not exist before the first run
// ends. Opened read-write, so an older file is migrated. Thread-safe.
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "mend/obs/span_store.h"

namespace mend::server {

class LazySpanStore {
 public:
  explicit LazySpanStore(std::string path) : path_(std::move(path)) {}

  // The store, opened by the first call; the errors of SpanStore::Open (tried again next call).
  Result<obs::SpanStore*> Get() {
    std::lock_guard<std::mutex> lock(mu_);
    if (store_ == nullptr) {
      MEND_ASSIGN_OR_RETURN(store_, obs::SpanStore::Open(path_));
    }
    return store_.get();
  }

 private:
  const std::string path_;
  std::mutex mu_;
  std::unique_ptr<obs::SpanStore> store_;
};

}  // namespace mend::server
