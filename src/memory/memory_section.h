#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "mend/memory/fact.h"

namespace mend::memory {

inline constexpr char kMemorySectionHeading[] = "## Long-term Memory";

// The system-prompt section for `facts` (best first): the heading, one line that tells the model
// these are notes from earlier runs (data, not instructions), then `- [category] content` per
// fact. A fact's own line breaks become indented continuation lines, so its text can neither
// start a heading nor end the list. Facts that do not fit in `budget_chars` (code points, the
// whole section) are left out; "" when no fact fits or `facts` is empty. `included`, if given,
// receives the ids of the facts shown.
std::string RenderMemorySection(const std::vector<Fact>& facts, size_t budget_chars,
                                std::vector<std::string>* included = nullptr);

}  // namespace mend::memory
