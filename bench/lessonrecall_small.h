#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/lessonrecall_data.h"
#include "mend/base/result.h"
#include "mend/memory/retriever.h"

// LessonRecall on small memories: a new user's memory holds a handful of facts, not three
// thousand. For each size, every positive query runs against a memory of its own lesson plus
// distractors drawn at random (seeded) from the split's distractor pool, and every no_match query
// against a memory of distractors only; each size is drawn several times.
namespace mend::lessonrecall {

struct SmallMemoryScores {
  size_t facts = 0;                 // the memory's size
  size_t positive_samples = 0;      // positive queries × draws
  size_t no_match_samples = 0;      // no_match queries × draws
  double recall_at_1 = 0;           // the lesson ranked first
  double injection_rate = 0;        // positives for which anything is injected
  double lesson_injected = 0;       // positives for which the lesson itself is injected
  double false_injection_rate = 0;  // no_match queries for which anything is injected
};

struct SmallMemoryOptions {
  std::vector<size_t> sizes = {5, 20, 100};
  int draws = 3;
  uint32_t seed = 20240611;
  memory::RetrieverOptions retriever;
};

// One result per size, in the order of `options.sizes`. `scratch_dir` holds the temporary
// databases (each removed after use). Store errors are returned.
Result<std::vector<SmallMemoryScores>> RunSmallMemories(const Split& split, LoadMode mode,
                                                        const SmallMemoryOptions& options,
                                                        const std::string& scratch_dir);

// The report's table, one line per size, with `full` (the full-size figures of the same loading:
// facts = the split's size) as the last line.
std::string FormatSmallMemories(const std::vector<SmallMemoryScores>& scores,
                                const SmallMemoryScores& full, const std::string& title);

}  // namespace mend::lessonrecall
