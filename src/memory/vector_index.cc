#include "memory/vector_index.h"

// hnswlib's SSE code prefetches one neighbour id past the end of a link list: harmless, since a
// prefetch cannot fault, but AddressSanitizer reports the read, so sanitizer builds take the
// portable path. hnswlib.h also defines non-inline functions: include it from this file only.
#if defined(__SANITIZE_ADDRESS__)
#define NO_MANUAL_VECTORIZATION
#endif
#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

namespace mend::memory {
namespace {

constexpr size_t kHnswM = 16;
constexpr size_t kHnswEfConstruction = 100;
constexpr size_t kHnswMinEf = 64;
constexpr size_t kHnswSeed = 100;

// Scales `v` to unit length in place; false when it is zero or holds a non-finite value.
bool Normalize(std::vector<float>& v) {
  double norm = 0;
  for (float x : v) norm += static_cast<double>(x) * x;
  if (!std::isfinite(norm) || norm == 0) return false;
  double inv = 1.0 / std::sqrt(norm);
  for (float& x : v) x = static_cast<float>(x * inv);
  return true;
}

// The best `k` of (id index, similarity) pairs with distinct ids, ties by id.
std::vector<VectorIndex::Hit> TopHits(const std::vector<std::string>& ids,
                                      const std::vector<std::pair<uint32_t, double>>& best,
                                      size_t k) {
  std::vector<VectorIndex::Hit> hits;
  hits.reserve(best.size());
  for (const auto& [id, similarity] : best) hits.push_back({ids[id], similarity});
  auto better = [](const VectorIndex::Hit& a, const VectorIndex::Hit& b) {
    return a.similarity != b.similarity ? a.similarity > b.similarity : a.id < b.id;
  };
  size_t keep = std::min(k, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(keep), hits.end(),
                    better);
  hits.resize(keep);
  return hits;
}

class VectorIndexImpl final : public VectorIndex {
 public:
  VectorIndexImpl(size_t dim, std::vector<std::string> ids, std::vector<uint32_t> entry_ids,
                  std::vector<float> data)
      : dim_(dim),
        ids_(std::move(ids)),
        entry_ids_(std::move(entry_ids)),
        data_(std::move(data)),
        space_(dim) {}

  // Builds the HNSW graph over the stored vectors; kInternal if hnswlib fails.
  Status BuildGraph();

  std::vector<Hit> Search(const std::vector<float>& query, size_t k) const override;
  size_t size() const override { return entry_ids_.size(); }
  bool approximate() const override { return graph_ != nullptr; }

 private:
  std::vector<Hit> SearchExact(const std::vector<float>& query, size_t k) const;
  std::vector<Hit> SearchGraph(const std::vector<float>& query, size_t k) const;

  size_t dim_;
  std::vector<std::string> ids_;     // distinct ids
  std::vector<uint32_t> entry_ids_;  // entry -> index into ids_
  std::vector<float> data_;          // entry vectors, unit length (or zero), row-major
  hnswlib::InnerProductSpace space_;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> graph_;
};

Status VectorIndexImpl::BuildGraph() {
  try {
    size_t n = entry_ids_.size();
    auto graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(&space_, n, kHnswM,
                                                                   kHnswEfConstruction, kHnswSeed);
    for (size_t i = 0; i < n; ++i) graph->addPoint(data_.data() + i * dim_, i);
    // Set once here: hnswlib's setEf is not safe against concurrent searches, and searchKnn
    // explores max(ef, k) candidates, so asking for more neighbours raises the effort instead.
    graph->setEf(kHnswMinEf);
    graph_ = std::move(graph);
    return OkStatus();
  } catch (const std::exception& e) {
    return InternalError(std::string("hnsw build failed: ") + e.what());
  } catch (...) {
    return InternalError("hnsw build failed");
  }
}

std::vector<VectorIndex::Hit> VectorIndexImpl::Search(const std::vector<float>& query,
                                                      size_t k) const {
  if (k == 0 || query.size() != dim_ || entry_ids_.empty()) return {};
  std::vector<float> unit = query;
  if (!Normalize(unit)) return {};
  return graph_ ? SearchGraph(unit, k) : SearchExact(unit, k);
}

std::vector<VectorIndex::Hit> VectorIndexImpl::SearchExact(const std::vector<float>& query,
                                                           size_t k) const {
  std::vector<double> best(ids_.size(), -2.0);  // below any cosine
  for (size_t i = 0; i < entry_ids_.size(); ++i) {
    const float* row = data_.data() + i * dim_;
    float dot = 0;
    for (size_t j = 0; j < dim_; ++j) dot += row[j] * query[j];
    double& slot = best[entry_ids_[i]];
    slot = std::max(slot, static_cast<double>(dot));
  }
  std::vector<std::pair<uint32_t, double>> candidates;
  candidates.reserve(best.size());
  for (size_t id = 0; id < best.size(); ++id) {
    candidates.emplace_back(static_cast<uint32_t>(id), best[id]);
  }
  return TopHits(ids_, candidates, k);
}

std::vector<VectorIndex::Hit> VectorIndexImpl::SearchGraph(const std::vector<float>& query,
                                                           size_t k) const {
  size_t n = entry_ids_.size();
  size_t want = std::min(n, std::max(k * 4, kHnswMinEf));
  try {
    // Parts of one id crowd out other ids, so widen the search until k distinct ids turn up or
    // every entry has been asked for.
    while (true) {
      std::unordered_map<uint32_t, double> best;
      auto found = graph_->searchKnn(query.data(), want);
      for (; !found.empty(); found.pop()) {
        double similarity = 1.0 - static_cast<double>(found.top().first);
        auto [it, inserted] = best.emplace(entry_ids_[found.top().second], similarity);
        if (!inserted) it->second = std::max(it->second, similarity);
      }
      if (best.size() >= k || want >= n) {
        return TopHits(ids_, {best.begin(), best.end()}, k);
      }
      want = std::min(n, want * 2);
    }
  } catch (...) {
    return {};
  }
}

}  // namespace

Result<std::unique_ptr<VectorIndex>> VectorIndex::Build(std::vector<Entry> entries,
                                                        size_t exact_limit) {
  size_t dim = entries.empty() ? 0 : entries.front().vector.size();
  std::vector<std::string> ids;
  std::unordered_map<std::string, uint32_t> id_index;
  std::vector<uint32_t> entry_ids;
  std::vector<float> data;
  data.reserve(entries.size() * dim);
  for (Entry& entry : entries) {
    if (entry.vector.size() != dim) {
      return InvalidArgumentError("vector index: entries have different dimensions");
    }
    for (float x : entry.vector) {
      if (!std::isfinite(x)) return InvalidArgumentError("vector index: non-finite component");
    }
    // A zero vector stays zero: it is similar to nothing.
    Normalize(entry.vector);
    auto [it, inserted] = id_index.emplace(entry.id, static_cast<uint32_t>(ids.size()));
    if (inserted) ids.push_back(entry.id);
    entry_ids.push_back(it->second);
    data.insert(data.end(), entry.vector.begin(), entry.vector.end());
  }
  auto index =
      std::make_unique<VectorIndexImpl>(dim, std::move(ids), std::move(entry_ids), std::move(data));
  if (index->size() >= exact_limit && index->size() > 0 && dim > 0) {
    Status status = index->BuildGraph();
    if (!status.ok()) return status;
  }
  return std::unique_ptr<VectorIndex>(std::move(index));
}

}  // namespace mend::memory
