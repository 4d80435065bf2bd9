#include <cctype>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "mend/llm/embedder.h"

namespace mend::llm {
namespace {

// FNV-1a, 64 bit: stable across platforms and runs (std::hash is neither).
uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// Lowercased runs of ASCII letters and digits; bytes >= 0x80 count as letters so that words in
// other scripts are kept whole.
std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::string current;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c >= 0x80) {
      current += static_cast<char>(std::tolower(c));
    } else if (!current.empty()) {
      words.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) words.push_back(std::move(current));
  return words;
}

void AddFeature(std::vector<float>& v, std::string_view feature, float weight) {
  uint64_t h = Fnv1a(feature);
  size_t index = static_cast<size_t>(h % v.size());
  // The top bit picks the sign, so that collisions cancel out on average instead of piling up.
  float sign = (h >> 63) != 0 ? -1.0f : 1.0f;
  v[index] += sign * weight;
}

}  // namespace

HashingEmbedder::HashingEmbedder(int dimension) : dimension_(dimension < 1 ? 1 : dimension) {}

std::string HashingEmbedder::model_id() const { return "hashing-" + std::to_string(dimension_); }

std::vector<float> HashingEmbedder::EmbedOne(const std::string& text) const {
  std::vector<float> v(static_cast<size_t>(dimension_), 0.0f);
  std::vector<std::string> words = Words(text);
  for (size_t i = 0; i < words.size(); ++i) {
    AddFeature(v, "w:" + words[i], 1.0f);
    if (i + 1 < words.size()) AddFeature(v, "b:" + words[i] + " " + words[i + 1], 0.7f);
    std::string padded = "#" + words[i] + "#";
    for (size_t k = 0; k + 3 <= padded.size(); ++k) {
      AddFeature(v, "c:" + padded.substr(k, 3), 0.3f);
    }
  }
  double norm = 0;
  for (float x : v) norm += static_cast<double>(x) * x;
  if (norm > 0) {
    float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& x : v) x *= inv;
  }
  return v;
}

Result<std::vector<std::vector<float>>> HashingEmbedder::Embed(
    const std::vector<std::string>& texts) {
  std::vector<std::vector<float>> out;
  out.reserve(texts.size());
  for (const std::string& t : texts) out.push_back(EmbedOne(t));
  return out;
}

double CosineSimilarity(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size() || a.empty()) return 0;
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0 || nb == 0) return 0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

}  // namespace mend::llm
