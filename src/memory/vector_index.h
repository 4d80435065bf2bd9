#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/result.h"

namespace mend::memory {

// Nearest neighbours by cosine similarity over vectors keyed by (id, part). Below
// `exact_limit` vectors it scans them all; from there on it uses an HNSW graph (hnswlib), whose
// results are approximate. Several parts of one id count once, with their best similarity. Built
// once, then read-only: Search is thread-safe.
class VectorIndex {
 public:
  struct Entry {
    std::string id;
    std::vector<float> vector;
  };
  struct Hit {
    std::string id;
    double similarity = 0;
  };

  // kInvalidArgument when the vectors do not all have the same dimension or a component is not
  // finite; kInternal when the HNSW graph cannot be built. A zero vector is similar to nothing.
  static Result<std::unique_ptr<VectorIndex>> Build(std::vector<Entry> entries,
                                                    size_t exact_limit = 20000);
  virtual ~VectorIndex() = default;

  // The `k` ids most similar to `query`, best first (empty for a zero or mis-sized query).
  virtual std::vector<Hit> Search(const std::vector<float>& query, size_t k) const = 0;
  virtual size_t size() const = 0;
  virtual bool approximate() const = 0;
};

}  // namespace mend::memory
