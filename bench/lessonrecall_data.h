#pragma once

#include <set>
#include <string>
#include <vector>

#include "bench/lessonrecall_bm25.h"
#include "bench/lessonrecall_score.h"
#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/memory/fact.h"

// Loading a LessonRecall split folder (lessons.jsonl, distractors.jsonl, queries.jsonl) and turning
// it into mend facts by the split's loading convention (its README).
namespace mend::lessonrecall {

struct SourceEpisode {
  std::string task;
  std::string error_output;
};

// A target lesson or a distractor.
struct SourceFact {
  std::string id;  // class_id for lessons
  std::string category;
  std::string content;
  std::vector<std::string> tags;        // as in the file
  std::vector<SourceEpisode> episodes;  // target lessons only
};

struct Split {
  std::vector<SourceFact> lessons;
  std::vector<SourceFact> distractors;
  std::vector<Query> queries;
  std::set<std::string> lesson_fact_ids;  // targets and lesson-category distractors
};

// Reads the three files of `dir`. kNotFound / kInvalidArgument name the file and line.
Result<Split> LoadSplit(const std::string& dir);

// Whether lessons carry their episodes as provenance (what mend's reflexion stores) or not.
enum class LoadMode { kContentOnly, kWithProvenance };

// Lessons then distractors as mend facts: ids kept; lesson-category facts get the tags
// `reflexion` and `trigger:<t>` (t from the content's TRIGGER line; manual lessons also
// `user-supplied`); with provenance, each episode becomes Episode{task, "ERROR: " + output cut
// to 800 bytes}.
std::vector<memory::Fact> ToFacts(const Split& split, LoadMode mode, Time now);

// Lessons then distractors with their file tags, as the baseline indexes them.
std::vector<IndexedDoc> BaselineDocs(const Split& split);

// Lessons then distractors with the tags mend stores for them (ToFacts).
std::vector<IndexedDoc> MendTagDocs(const Split& split);

}  // namespace mend::lessonrecall
