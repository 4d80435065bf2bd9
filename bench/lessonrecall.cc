// LessonRecall: how well mend's memory brings back the right lesson for a new task, and how often
// it injects something when nothing applies, next to reference systems measured in the same run.
//
//   mend_lessonrecall --data DIR [--predictions OUT_DIR] [--option key=value]...
//                     [--embedder hashing]
//
// DIR is a LessonRecall split folder. Systems: BM25-only (raw FTS5, the split's own baseline, with
// and without its dev-chosen threshold), tags-only, and mend's Retriever over two loadings of the
// facts: content only, and with each lesson's episodes as provenance. --predictions writes one
// predictions file per system in the reference scorer's format.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/lessonrecall_bm25.h"
#include "bench/lessonrecall_data.h"
#include "bench/lessonrecall_options.h"
#include "bench/lessonrecall_score.h"
#include "mend/base/json.h"
#include "mend/base/manual_clock.h"
#include "mend/llm/embedder.h"
#include "mend/memory/backfill.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/retriever.h"

namespace mend::lessonrecall {
namespace {

using Predictions = std::map<std::string, Prediction>;

struct SystemResult {
  std::string name;   // short name for the summary and the predictions file
  std::string title;  // the report's heading
  Predictions predictions;
  double ms_per_query = 0;
};

double MsSince(std::chrono::steady_clock::time_point start, size_t n) {
  const std::chrono::duration<double, std::milli> d = std::chrono::steady_clock::now() - start;
  return n == 0 ? 0 : d.count() / static_cast<double>(n);
}

std::vector<std::string> Ids(const std::vector<Hit>& hits) {
  std::vector<std::string> ids;
  for (const Hit& h : hits) ids.push_back(h.id);
  return ids;
}

// The baseline twice: every query injects, then only above the threshold picked on these queries.
Result<std::vector<SystemResult>> RunBm25(const Split& split) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<Bm25Baseline> index,
                        Bm25Baseline::Build(BaselineDocs(split)));
  std::map<std::string, std::vector<Hit>> hits;
  std::map<std::string, double> top;
  const auto start = std::chrono::steady_clock::now();
  for (const Query& q : split.queries) {
    MEND_ASSIGN_OR_RETURN(hits[q.id], index->Search(q.text, 10));
    top[q.id] = hits[q.id].empty() ? 0.0 : hits[q.id][0].score;
  }
  const double ms = MsSince(start, split.queries.size());
  const double threshold = PickThreshold(split.queries, top);
  SystemResult all{"bm25_nothr", "== BM25-only (FTS5 content + tags), no threshold", {}, ms};
  char title[128];
  std::snprintf(title, sizeof(title),
                "== BM25-only (FTS5 content + tags), threshold %.2f (chosen on dev)", threshold);
  SystemResult gated{"bm25_thr", title, {}, ms};
  for (const auto& [id, h] : hits) {
    all.predictions[id] = {Ids(h), !h.empty()};
    gated.predictions[id] = {Ids(h), !h.empty() && h[0].score >= threshold};
  }
  return std::vector<SystemResult>{std::move(all), std::move(gated)};
}

SystemResult RunTags(const Split& split) {
  const std::vector<IndexedDoc> docs = MendTagDocs(split);
  SystemResult out{"tags_only", "== tags-only (query terms equal to a fact's tag)", {}, 0};
  const auto start = std::chrono::steady_clock::now();
  for (const Query& q : split.queries) {
    std::vector<Hit> hits = RankByTags(docs, q.text, 10);
    out.predictions[q.id] = {Ids(hits), !hits.empty()};
  }
  out.ms_per_query = MsSince(start, split.queries.size());
  return out;
}

struct MendSetup {
  memory::RetrieverOptions options;
  bool hashing_embedder = false;
  std::string db_path;
};

// Fills every missing vector in the caller's thread before any query runs.
Status Backfill(memory::FactStore* store, llm::Embedder* embedder, Clock* clock) {
  memory::EmbeddingBackfill backfill(store, embedder, clock);
  for (;;) {
    MEND_ASSIGN_OR_RETURN(int64_t stored, backfill.RunOnce(1024));
    if (stored == 0) return OkStatus();
  }
}

Result<SystemResult> RunMend(const Split& split, LoadMode mode, const MendSetup& setup) {
  ManualClock clock;
  memory::FactStoreOptions store_options;
  store_options.clock = &clock;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<memory::FactStore> store,
                        memory::FactStore::Open(setup.db_path, store_options));
  MEND_RETURN_IF_ERROR(store->Import(ToFacts(split, mode, clock.Now())));
  std::unique_ptr<llm::HashingEmbedder> embedder;
  if (setup.hashing_embedder) {
    embedder = std::make_unique<llm::HashingEmbedder>(256);
    MEND_RETURN_IF_ERROR(Backfill(store.get(), embedder.get(), &clock));
  }
  memory::Retriever retriever(store.get(), &clock, setup.options, embedder.get());
  const bool provenance = mode == LoadMode::kWithProvenance;
  SystemResult out{provenance ? "mend_provenance" : "mend_content",
                   provenance ? "== mend Retriever, lessons with provenance (task + error)"
                              : "== mend Retriever, content only",
                   {},
                   0};
  const auto start = std::chrono::steady_clock::now();
  for (const Query& q : split.queries) {
    memory::RetrievalQuery query;
    query.task = q.text;
    MEND_ASSIGN_OR_RETURN(memory::Retrieval r, retriever.Retrieve(query));
    Prediction& p = out.predictions[q.id];
    for (size_t i = 0; i < r.ranked.size() && i < 10; ++i) p.ranked.push_back(r.ranked[i].fact.id);
    p.injected = !r.selected.empty();
  }
  out.ms_per_query = MsSince(start, split.queries.size());
  return out;
}

Status WritePredictions(const std::string& dir, const SystemResult& system) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = dir + "/" + system.name + ".jsonl";
  std::ofstream out(path);
  for (const auto& [id, p] : system.predictions) {
    nlohmann::json line = {{"query_id", id}, {"ranked", p.ranked}, {"injected", p.injected}};
    out << DumpJson(line) << "\n";
  }
  out.close();
  if (!out) return InternalError("cannot write " + path);
  return OkStatus();
}

void PrintSummary(const std::vector<SystemResult>& systems, const std::vector<Scores>& scores) {
  // The baseline the goal is stated against: BM25-only with its dev-chosen threshold.
  const double base_r5 = scores[1].by_kind.at("all").recall_at_5;
  std::printf(
      "== summary (positives: R@5, MRR@10, injection rate, injected & hit@5; no_match: FIR)\n");
  for (size_t i = 0; i < systems.size(); ++i) {
    const KindScores& all = scores[i].by_kind.at("all");
    std::printf(
        "%-16s R@5 %.3f  MRR@10 %.3f  inj %-6s  inj&hit@5 %-6s  FIR %-4s  R@5 vs BM25-only %+5.1f "
        "points  %.2f ms/query\n",
        systems[i].name.c_str(), all.recall_at_5, all.mrr_at_10,
        PythonFloat(scores[i].injection_rate_positive.value_or(0)).c_str(),
        PythonFloat(scores[i].injected_and_hit_at_5.value_or(0)).c_str(),
        PythonFloat(scores[i].false_injection_rate.value_or(0)).c_str(),
        100 * (all.recall_at_5 - base_r5), systems[i].ms_per_query);
  }
  std::printf("goal: R@5 ≥ BM25-only + 15 points, FIR ≤ 5%%\n");
}

// A fresh directory for the memory databases, removed at the end ("" when it cannot be made).
std::string ScratchDir() {
  std::error_code ec;
  std::string pattern = (std::filesystem::temp_directory_path(ec) / "lessonrecall-XXXXXX").string();
  if (ec) return "";
  return mkdtemp(pattern.data()) != nullptr ? pattern : "";
}

int Run(const Args& args) {
  Result<Split> split = LoadSplit(args.data_dir);
  if (!split.ok()) {
    std::fprintf(stderr, "mend_lessonrecall: %s\n", split.status().ToString().c_str());
    return 1;
  }
  std::fprintf(stderr, "%zu lessons, %zu distractors, %zu queries\n", split->lessons.size(),
               split->distractors.size(), split->queries.size());
  std::vector<SystemResult> systems;
  Result<std::vector<SystemResult>> bm25 = RunBm25(*split);
  if (!bm25.ok()) {
    std::fprintf(stderr, "mend_lessonrecall: BM25-only: %s\n", bm25.status().ToString().c_str());
    return 1;
  }
  systems = std::move(*bm25);
  systems.push_back(RunTags(*split));
  const std::string tmp = ScratchDir();
  if (tmp.empty()) {
    std::fprintf(stderr, "mend_lessonrecall: cannot create a scratch directory\n");
    return 1;
  }
  for (LoadMode mode : {LoadMode::kContentOnly, LoadMode::kWithProvenance}) {
    const char* file = mode == LoadMode::kContentOnly ? "/content.db" : "/provenance.db";
    MendSetup setup{args.options, args.hashing_embedder, tmp + file};
    Result<SystemResult> mend = RunMend(*split, mode, setup);
    if (!mend.ok()) {
      std::fprintf(stderr, "mend_lessonrecall: mend: %s\n", mend.status().ToString().c_str());
      std::filesystem::remove_all(tmp);
      return 1;
    }
    systems.push_back(std::move(*mend));
  }
  std::filesystem::remove_all(tmp);
  std::vector<Scores> scores;
  for (const SystemResult& s : systems) {
    scores.push_back(Score(split->queries, s.predictions, split->lesson_fact_ids));
    std::printf("%s\n", FormatReport(scores.back(), s.title).c_str());
    if (!args.predictions_dir.empty()) {
      Status written = WritePredictions(args.predictions_dir, s);
      if (!written.ok()) std::fprintf(stderr, "%s\n", written.ToString().c_str());
    }
  }
  PrintSummary(systems, scores);
  return 0;
}

}  // namespace
}  // namespace mend::lessonrecall

int main(int argc, char** argv) {
  std::string error;
  std::optional<mend::lessonrecall::Args> args = mend::lessonrecall::ParseArgs(argc, argv, error);
  if (!args) {
    std::fprintf(stderr, "mend_lessonrecall: %s\n%s", error.c_str(), mend::lessonrecall::kUsage);
    return 2;
  }
  return mend::lessonrecall::Run(*args);
}
