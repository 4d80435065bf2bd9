#pragma once

// Lessons and runs linked both ways (docs/http_api.md, "Memory"): what a run was given from
// long-term memory and which lessons its failure produced, and for one fact the runs it came from
// and the runs it was given to, each with its outcome. Pure reads of the runtime's fact store.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "mend/app/runtime.h"
#include "mend/base/result.h"
#include "mend/memory/fact.h"

namespace mend::server {

// The lessons searched for those a run produced: the newest this many (a run's lesson is written
// soon after it fails, so it is among them while it matters).
inline constexpr size_t kLessonsScanned = 1000;

// {"run_id","given":[{"fact_id","category","content","score","at","outcome","helped","hurt"}],
//  "lessons":[{"fact_id","category","content","created_at"}]}: `given` in the order recorded,
// `category`, `content`, `helped` and `hurt` null for a fact since removed; `score` null when
// none was recorded; `outcome` "helped", "hurt" or "pending". `lessons`: the lesson facts with an
// episode from this run, newest first. Errors are the fact store's.
Result<nlohmann::json> RunMemoryJson(app::Runtime& runtime, const std::string& run_id);

// app::FactJson plus "came_from" (the runs of its episodes, distinct, oldest first) and
// "given_to" (at most `limit` runs it was given to, newest first:
// [{"run_id","at","score","outcome"}]). Errors are the fact store's.
Result<nlohmann::json> FactDetailJson(app::Runtime& runtime, const memory::Fact& fact,
                                      size_t limit);

}  // namespace mend::server
