#pragma once

#include <map>
#include <string>

#include "bench/lessonrecall_data.h"
#include "bench/lessonrecall_score.h"
#include "mend/base/result.h"

// The LessonRecall queries through the command line instead of the library: the real `mend`
// binary as a child process on a fresh home, with nothing of the caller's environment but PATH.
// `mend memory import` loads the split in chatcli's memory_index.json format with each lesson's
// episodes (the "with provenance" loading, LoadMode::kWithProvenance), then for every query
// `mend --json memory search TEXT -k 10` gives the ranking and `mend --json memory recall TEXT`
// says whether a run would receive anything. Figures from here and from the in-process Retriever
// over the same loading must be equal: both paths run the same ranking with the default options.
namespace mend::lessonrecall {

struct CliResult {
  std::map<std::string, Prediction> predictions;  // by query id
  double ms_per_query = 0;  // one search plus one recall, process start included
};

// Runs the split through `mend_binary` with `scratch_dir` (which must exist and be empty) as its
// home; the import file is written there too. Any failing command (a non-zero exit or output that
// is not the documented JSON) is an error naming the command and its stderr.
Result<CliResult> RunCli(const Split& split, const std::string& mend_binary,
                         const std::string& scratch_dir);

}  // namespace mend::lessonrecall
