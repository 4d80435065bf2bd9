#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace mend::memory::internal {

// Every character trigram of a text (normalised as below), sorted, repeats kept.
std::vector<uint32_t> SortedTrigrams(std::string_view text);

// The distinct character trigrams of a text (lower-cased, whitespace collapsed, padded with a space
// at both ends), sorted; each packed into the low 24 bits of a uint32.
std::vector<uint32_t> TrigramSet(std::string_view text);

// |a ∩ b| / |a ∪ b| of two sets made by TrigramSet (1 when both are empty).
double JaccardOfSets(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

}  // namespace mend::memory::internal
