#pragma once

// Embedder, the interface that turns texts into vectors for similarity search (docs/memory.md),
// HashingEmbedder, which needs no model, and CosineSimilarity. Embedders are thread-safe.

#include <string>
#include <vector>

#include "mend/base/result.h"

namespace mend::llm {

/// Turns texts into vectors for similarity search (memory, lesson retrieval). Implementations are
/// thread-safe. Errors follow the provider taxonomy (provider.h).
class Embedder {
 public:
  virtual ~Embedder() = default;
  /// One vector per text, in the order of `texts`, each of dimension() floats.
  virtual Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) = 0;
  /// The length of every vector; 0 until known for an embedder that learns it from its server.
  virtual int dimension() const = 0;
  /// Identifies the embedding space ("hashing-256", "openai:text-embedding-3-small"): vectors from
  /// different ids must not be compared.
  virtual std::string model_id() const = 0;
};

/// A deterministic embedder needing no model: signed feature hashing of lowercased word unigrams,
/// word bigrams and character trigrams, L2-normalised (an empty text gives the zero vector). Texts
/// sharing words land close together. The same text gives the same vector on every platform.
/// For tests and as an offline fallback. Thread-safe (stateless).
class HashingEmbedder final : public Embedder {
 public:
  /// `dimension` below 1 is treated as 1.
  explicit HashingEmbedder(int dimension = 256);

  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override;
  int dimension() const override { return dimension_; }
  std::string model_id() const override;

  /// The vector of one text; what Embed gives each.
  std::vector<float> EmbedOne(const std::string& text) const;

 private:
  int dimension_;
};

/// The cosine similarity of two vectors of equal length (0 when either is zero or lengths differ).
double CosineSimilarity(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace mend::llm
