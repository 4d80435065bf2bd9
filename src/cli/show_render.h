#pragma once

#include <cstddef>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>

#include "mend/agent/run_view.h"
#include "mend/app/run_inspector.h"

namespace mend::cli::show {

// Text mode cuts messages longer than this, saying how much was left out.
inline constexpr size_t kClipBytes = 2000;

enum class Detail { kClipped, kFull };

// The `show` JSON shape (docs/runs.md): the `run` fields of docs/cli.md plus the record, the
// origin, the transcript and the checkpoints.
nlohmann::json RunViewJson(const agent::RunView& view, const app::RunOverview& overview);

// The same for people: a header of `key  value` lines, the transcript, the checkpoints.
void PrintRunView(const agent::RunView& view, const app::RunOverview& overview, Detail detail,
                  std::ostream& out);

}  // namespace mend::cli::show
