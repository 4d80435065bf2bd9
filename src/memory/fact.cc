#include "mend/memory/fact.h"

#include <algorithm>
#include <cstdint>

#include "memory/fact_rows.h"
#include "memory/trigram_set.h"
#include "mend/base/hash.h"
#include "mend/base/utf8.h"
#include "mend/memory/fact_store.h"

namespace mend::memory {

std::string FactIdFor(std::string_view content) {
  std::string key = ToLowerUtf8(Trim(content));  // Go's strings.ToLower, as chatcli hashes it
  Sha256Digest digest = Sha256(key);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), 12));
}

std::vector<std::string> NormalizeTags(const std::vector<std::string>& tags) {
  std::vector<std::string> out;
  for (const std::string& tag : tags) {
    std::string t = ToLowerAscii(internal::StorableText(Trim(tag)));
    t = std::string(Trim(t));
    if (t.empty() || std::find(out.begin(), out.end(), t) != out.end()) continue;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace mend::memory

namespace mend::memory {
namespace internal {

std::vector<uint32_t> SortedTrigrams(std::string_view text) {
  std::string norm = " " + ToLowerAscii(CollapseWhitespace(Trim(text))) + " ";
  std::vector<uint32_t> grams;
  grams.reserve(norm.size());
  for (size_t i = 0; i + 3 <= norm.size(); ++i) {
    grams.push_back(static_cast<uint32_t>(static_cast<unsigned char>(norm[i])) << 16 |
                    static_cast<uint32_t>(static_cast<unsigned char>(norm[i + 1])) << 8 |
                    static_cast<uint32_t>(static_cast<unsigned char>(norm[i + 2])));
  }
  std::sort(grams.begin(), grams.end());
  return grams;
}

std::vector<uint32_t> TrigramSet(std::string_view text) {
  std::vector<uint32_t> grams = SortedTrigrams(text);
  grams.erase(std::unique(grams.begin(), grams.end()), grams.end());
  return grams;
}

double JaccardOfSets(const std::vector<uint32_t>& ga, const std::vector<uint32_t>& gb) {
  if (ga.empty() && gb.empty()) return 1.0;
  size_t common = 0;
  size_t i = 0;
  size_t j = 0;
  while (i < ga.size() && j < gb.size()) {
    if (ga[i] == gb[j]) {
      ++common;
      ++i;
      ++j;
    } else if (ga[i] < gb[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return static_cast<double>(common) / static_cast<double>(ga.size() + gb.size() - common);
}

}  // namespace internal

double TrigramJaccard(std::string_view a, std::string_view b) {
  return internal::JaccardOfSets(internal::TrigramSet(a), internal::TrigramSet(b));
}

}  // namespace mend::memory
