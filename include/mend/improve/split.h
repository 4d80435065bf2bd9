#pragma once

// Splitting improve cases into training and held-out (docs/improve.md): SplitCases, the same for a
// seed on every platform, and CheckedSplitCases for input from users.

#include <cstdint>
#include <vector>

#include "mend/base/result.h"
#include "mend/improve/cases.h"

namespace mend::improve {

/// Cases divided into the ones an editor may learn from and the ones only the gate sees
/// (docs/improve.md). `held_out_fraction` and `seed` are kept so the audit log can record them and
/// a run can be reproduced.
struct Split {
  std::vector<Case> training;    ///< in input order
  std::vector<Case> held_out;    ///< in input order
  double held_out_fraction = 0;  ///< as given to SplitCases
  std::uint64_t seed = 0;        ///< as given to SplitCases
};

/// Divides `cases` (unique ids, as ParseCasesJsonl guarantees) deterministically:
///  1. every case gets the key SHA-256("<seed in decimal>:<id>"), so a case's rank depends only on
///     the seed and its own id, never on the order of the file or on the other cases;
///  2. the cases sorted by (key, id) are ranked; the first k are held out, where
///     k = round(held_out_fraction * n) (halves round up), lowered to n - 1 when it would leave no
///     training case (so one case is always training; n = 0 gives two empty lists);
///  3. both lists keep the input order.
/// The same cases, fraction and seed give the same split on every platform. `held_out_fraction`
/// must be in [0, 1) (a value outside is a programmer error and is clamped); use CheckedSplitCases
/// for input from users. Pure and thread-safe.
Split SplitCases(const std::vector<Case>& cases, double held_out_fraction, std::uint64_t seed);

/// SplitCases after validating its input: kInvalidArgument for a fraction outside [0, 1) (NaN
/// included) and for two cases with one id.
Result<Split> CheckedSplitCases(const std::vector<Case>& cases, double held_out_fraction,
                                std::uint64_t seed);

}  // namespace mend::improve
