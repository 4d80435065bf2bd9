#pragma once

#include <optional>
#include <string>

#include "mend/memory/retriever.h"

// Command-line arguments of mend_lessonrecall.
namespace mend::lessonrecall {

inline constexpr const char* kUsage =
    "usage: mend_lessonrecall --data DIR [--predictions OUT_DIR] [--option key=value]...\n"
    "                         [--embedder hashing] [--mend MEND_BINARY] [--no-small]\n"
    "                         [--small-draws N] [--store postgres [--postgres-url URL]]\n"
    "  --data DIR          a LessonRecall split folder (lessons.jsonl, distractors.jsonl,\n"
    "                      queries.jsonl); also accepted as the only positional argument\n"
    "  --predictions DIR   write one predictions file per system, for the reference scorer\n"
    "  --option key=value  set a RetrieverOptions field: bm25_weight, trigram_weight,\n"
    "                      hint_weight, vector_weight, rrf_k, gate, fact_gate,\n"
    "                      coverage_gate, mmr_lambda,\n"
    "                      recency_weight, confidence_weight, usefulness_weight, max_facts,\n"
    "                      candidates, budget_chars, max_query_terms\n"
    "  --embedder hashing  add vectors from the built-in hashing embedder (256 dimensions)\n"
    "  --mend MEND_BINARY  also run every query through this `mend` executable (import,\n"
    "                      search, recall on a temporary home) and compare with the\n"
    "                      in-process figures; needs the default options and no embedder\n"
    "  --no-small          skip the small-memory evaluation (5, 20 and 100 facts)\n"
    "  --small-draws N     memories drawn per size in the small-memory evaluation\n"
    "                      (default 3; more draws, finer figures)\n"
    "  --store postgres    also run mend's Retriever over the PostgreSQL fact store and print\n"
    "                      it beside SQLite's (the same loadings and options)\n"
    "  --postgres-url URL  the database for --store postgres (schemas of its own are made\n"
    "                      and dropped); default $MEND_TEST_POSTGRES_URL\n";

struct Args {
  std::string data_dir;
  std::string predictions_dir;
  memory::RetrieverOptions options;
  bool options_changed = false;  // some --option was given
  bool hashing_embedder = false;
  std::string mend_binary;  // "" = no CLI path
  bool small_memories = true;
  int small_draws = 3;       // SmallMemoryOptions::draws
  std::string postgres_url;  // "" = SQLite only; else --store postgres
};

// The arguments, or nullopt with `error` set.
std::optional<Args> ParseArgs(int argc, char** argv, std::string& error);

// Sets the RetrieverOptions field `key` from `value`; false (with `error`) for an unknown key or
// a value that is not a number of the field's kind.
bool SetOption(memory::RetrieverOptions& options, const std::string& key, const std::string& value,
               std::string& error);

}  // namespace mend::lessonrecall
