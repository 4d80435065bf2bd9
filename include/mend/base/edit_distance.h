#pragma once

// EditDistance, the Levenshtein distance behind the "did you mean" hints for mistyped keys and
// names. Pure and thread-safe.

#include <cstddef>
#include <string_view>

namespace mend {

/// Levenshtein distance between two byte strings (insertions, deletions and substitutions of one
/// byte each). Used for "did you mean" hints on mistyped keys and names. O(|a|·|b|) time,
/// O(|b|) memory: meant for short identifiers.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace mend
