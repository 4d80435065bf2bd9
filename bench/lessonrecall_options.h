#pragma once

#include <optional>
#include <string>

#include "mend/memory/retriever.h"

// Command-line arguments of mend_lessonrecall.
namespace mend::lessonrecall {

inline constexpr const char* kUsage =
    "usage: mend_lessonrecall --data DIR [--predictions OUT_DIR] [--option key=value]...\n"
    "                         [--embedder hashing]\n"
    "  --data DIR          a LessonRecall split folder (lessons.jsonl, distractors.jsonl,\n"
    "                      queries.jsonl); also accepted as the only positional argument\n"
    "  --predictions DIR   write one predictions file per system, for the reference scorer\n"
    "  --option key=value  set a RetrieverOptions field: bm25_weight, trigram_weight,\n"
    "                      hint_weight, vector_weight, rrf_k, gate, mmr_lambda,\n"
    "                      recency_weight, confidence_weight, usefulness_weight, max_facts,\n"
    "                      candidates, budget_chars, max_query_terms\n"
    "  --embedder hashing  add vectors from the built-in hashing embedder (256 dimensions)\n";

struct Args {
  std::string data_dir;
  std::string predictions_dir;
  memory::RetrieverOptions options;
  bool hashing_embedder = false;
};

// The arguments, or nullopt with `error` set.
std::optional<Args> ParseArgs(int argc, char** argv, std::string& error);

// Sets the RetrieverOptions field `key` from `value`; false (with `error`) for an unknown key or
// a value that is not a number of the field's kind.
bool SetOption(memory::RetrieverOptions& options, const std::string& key, const std::string& value,
               std::string& error);

}  // namespace mend::lessonrecall
