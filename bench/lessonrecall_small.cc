#include "bench/lessonrecall_small.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <utility>

#include "mend/base/manual_clock.h"
#include "mend/memory/fact_store.h"

namespace mend::lessonrecall {
namespace {

struct Tally {
  size_t positives = 0;
  size_t hits_at_1 = 0;
  size_t injected = 0;
  size_t lesson_injected = 0;
  size_t no_match = 0;
  size_t false_injections = 0;
};

// `n` distinct indices below `pool`, drawn by a partial Fisher-Yates shuffle.
std::vector<size_t> Draw(std::mt19937& rng, size_t pool, size_t n) {
  std::vector<size_t> index(pool);
  for (size_t i = 0; i < pool; ++i) index[i] = i;
  n = std::min(n, pool);
  for (size_t i = 0; i < n; ++i) {
    std::uniform_int_distribution<size_t> pick(i, pool - 1);
    std::swap(index[i], index[pick(rng)]);
  }
  index.resize(n);
  return index;
}

// A fresh memory holding `facts`, its retriever, and the removal of its files afterwards.
class SmallMemory {
 public:
  static Result<std::unique_ptr<SmallMemory>> Open(const std::string& path,
                                                   const std::vector<memory::Fact>& facts,
                                                   const memory::RetrieverOptions& options) {
    auto memory = std::unique_ptr<SmallMemory>(new SmallMemory(path));
    memory::FactStoreOptions store_options;
    store_options.clock = &memory->clock_;
    MEND_ASSIGN_OR_RETURN(memory->store_, memory::FactStore::Open(path, store_options));
    MEND_ASSIGN_OR_RETURN(memory::FactStore::ImportCounts imported, memory->store_->Import(facts));
    if (!imported.unusable.empty()) {
      return InvalidArgumentError("fact " + imported.unusable[0].id +
                                  " was not imported: " + imported.unusable[0].reason);
    }
    memory->retriever_ =
        std::make_unique<memory::Retriever>(memory->store_.get(), &memory->clock_, options);
    return memory;
  }
  ~SmallMemory() {
    retriever_.reset();
    store_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::error_code ec;
      std::filesystem::remove(path_ + suffix, ec);
    }
  }
  Result<memory::Retrieval> Retrieve(const std::string& text) {
    memory::RetrievalQuery query;
    query.task = text;
    return retriever_->Retrieve(query);
  }

 private:
  explicit SmallMemory(std::string path) : path_(std::move(path)) {}
  std::string path_;
  ManualClock clock_;
  std::unique_ptr<memory::FactStore> store_;
  std::unique_ptr<memory::Retriever> retriever_;
};

bool Contains(const std::vector<memory::ScoredFact>& facts, const std::string& id) {
  return std::any_of(facts.begin(), facts.end(),
                     [&](const memory::ScoredFact& s) { return s.fact.id == id; });
}

double Rate(size_t part, size_t whole) {
  return whole == 0 ? 0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

Result<std::vector<SmallMemoryScores>> RunSmallMemories(const Split& split, LoadMode mode,
                                                        const SmallMemoryOptions& options,
                                                        const std::string& scratch_dir) {
  const std::vector<memory::Fact> all = ToFacts(split, mode, ManualClock().Now());
  const size_t lessons = split.lessons.size();
  const size_t distractors = all.size() - lessons;  // ToFacts: lessons first, then distractors
  std::map<std::string, size_t> lesson_index;
  for (size_t i = 0; i < lessons; ++i) lesson_index[all[i].id] = i;
  std::vector<SmallMemoryScores> out;
  const std::string path = scratch_dir + "/small.db";
  for (size_t size : options.sizes) {
    if (size == 0) continue;
    std::mt19937 rng(options.seed + static_cast<uint32_t>(size));
    Tally tally;
    for (int draw = 0; draw < options.draws; ++draw) {
      // Lesson memories: the lesson and size - 1 distractors, for the queries of that lesson.
      for (size_t l = 0; l < lessons; ++l) {
        std::vector<memory::Fact> facts = {all[l]};
        for (size_t d : Draw(rng, distractors, size - 1)) facts.push_back(all[lessons + d]);
        MEND_ASSIGN_OR_RETURN(std::unique_ptr<SmallMemory> memory,
                              SmallMemory::Open(path, facts, options.retriever));
        for (const Query& q : split.queries) {
          if (q.relevant.empty() || lesson_index.count(q.relevant[0]) == 0 ||
              lesson_index[q.relevant[0]] != l) {
            continue;
          }
          MEND_ASSIGN_OR_RETURN(memory::Retrieval r, memory->Retrieve(q.text));
          ++tally.positives;
          if (!r.ranked.empty() && r.ranked[0].fact.id == all[l].id) ++tally.hits_at_1;
          if (!r.selected.empty()) ++tally.injected;
          if (Contains(r.selected, all[l].id)) ++tally.lesson_injected;
        }
      }
      // One memory of distractors only for the no_match queries of this draw.
      std::vector<memory::Fact> facts;
      for (size_t d : Draw(rng, distractors, size)) facts.push_back(all[lessons + d]);
      MEND_ASSIGN_OR_RETURN(std::unique_ptr<SmallMemory> memory,
                            SmallMemory::Open(path, facts, options.retriever));
      for (const Query& q : split.queries) {
        if (!q.relevant.empty()) continue;
        MEND_ASSIGN_OR_RETURN(memory::Retrieval r, memory->Retrieve(q.text));
        ++tally.no_match;
        if (!r.selected.empty()) ++tally.false_injections;
      }
    }
    SmallMemoryScores s;
    s.facts = size;
    s.positive_samples = tally.positives;
    s.no_match_samples = tally.no_match;
    s.recall_at_1 = Rate(tally.hits_at_1, tally.positives);
    s.injection_rate = Rate(tally.injected, tally.positives);
    s.lesson_injected = Rate(tally.lesson_injected, tally.positives);
    s.false_injection_rate = Rate(tally.false_injections, tally.no_match);
    out.push_back(s);
  }
  return out;
}

std::string FormatSmallMemories(const std::vector<SmallMemoryScores>& scores,
                                const SmallMemoryScores& full, const std::string& title) {
  std::string text = title + "\n";
  char line[160];
  std::snprintf(line, sizeof(line), "%-8s %9s %7s %7s %12s %7s\n", "facts", "samples", "R@1", "inj",
                "lesson inj", "FIR");
  text += line;
  std::vector<SmallMemoryScores> rows = scores;
  rows.push_back(full);
  for (const SmallMemoryScores& s : rows) {
    const std::string samples =
        std::to_string(s.positive_samples) + "+" + std::to_string(s.no_match_samples);
    std::snprintf(line, sizeof(line), "%-8zu %9s %7.3f %7.3f %12.3f %7.3f\n", s.facts,
                  samples.c_str(), s.recall_at_1, s.injection_rate, s.lesson_injected,
                  s.false_injection_rate);
    text += line;
  }
  return text;
}

}  // namespace mend::lessonrecall
