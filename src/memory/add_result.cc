// Names of what a write to the fact store did (fact_store.h).
#include "mend/memory/fact_store.h"

namespace mend::memory {

std::string_view AddResultKindName(AddResult::Kind kind) {
  switch (kind) {
    case AddResult::Kind::kAdded:
      return "added";
    case AddResult::Kind::kReinforced:
      return "reinforced";
    case AddResult::Kind::kMerged:
      return "merged";
  }
  return "added";
}

}  // namespace mend::memory
