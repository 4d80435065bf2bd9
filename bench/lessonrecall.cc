// LessonRecall: how well mend's memory brings back the right lesson for a new task, and how often
// it injects something when nothing applies, next to reference systems measured in the same run.
//
//   mend_lessonrecall --data DIR [--predictions OUT_DIR] [--option key=value]...
//                     [--embedder hashing] [--mend MEND_BINARY] [--no-small]
//                     [--small-draws N]
//
// DIR is a LessonRecall split folder. Systems: BM25-only (raw FTS5, the split's own baseline, with
// and without its dev-chosen threshold), tags-only, and mend's Retriever over two loadings of the
// facts: content only, and with each lesson's episodes as provenance. With --mend, the same queries
// also go through the `mend` executable (bench/lessonrecall_cli.h), whose figures must equal the
// in-process ones for the loading with provenance. Then the small-memory evaluation
// (bench/lessonrecall_small.h) for both loadings. --predictions writes one predictions file per
// system in the reference scorer's format.

#include <libpq-fe.h>
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
#include "bench/lessonrecall_cli.h"
#include "bench/lessonrecall_data.h"
#include "bench/lessonrecall_options.h"
#include "bench/lessonrecall_score.h"
#include "bench/lessonrecall_small.h"
#include "mend/base/json.h"
#include "mend/base/manual_clock.h"
#include "mend/llm/embedder.h"
#include "mend/memory/backfill.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/postgres_fact_store.h"
#include "mend/memory/retriever.h"

namespace mend::lessonrecall {
namespace {

using Predictions = std::map<std::string, Prediction>;

struct SystemResult {
  std::string name;   // short name for the summary and the predictions file
  std::string title;  // the report's heading
  Predictions predictions;
  double ms_per_query = 0;
  double lesson_injected = 0;  // positives whose relevant lesson is injected (mend only)
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
  std::string postgres_url;     // non-empty: the PostgreSQL store instead of db_path
  std::string postgres_schema;  // dropped before and after
};

// Drops `schema` of the database at `url`, with everything in it.
Status DropSchema(const std::string& url, const std::string& schema) {
  PGconn* conn = PQconnectdb(url.c_str());
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  Status out = OkStatus();
  if (PQstatus(conn) != CONNECTION_OK) {
    out = UnavailableError(std::string("PostgreSQL: ") + PQerrorMessage(conn));
  } else {
    PGresult* res = PQexec(conn, ("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE").c_str());
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
      out = InternalError(std::string("PostgreSQL: ") + PQerrorMessage(conn));
    }
    PQclear(res);
  }
  PQfinish(conn);
  return out;
}

Result<std::unique_ptr<memory::FactStore>> OpenStore(const MendSetup& setup, Clock& clock) {
  if (setup.postgres_url.empty()) {
    memory::FactStoreOptions options;
    options.clock = &clock;
    return memory::FactStore::Open(setup.db_path, options);
  }
  MEND_RETURN_IF_ERROR(DropSchema(setup.postgres_url, setup.postgres_schema));
  memory::PostgresFactStoreOptions options;
  options.url = setup.postgres_url;
  options.schema = setup.postgres_schema;
  return memory::OpenPostgresFactStore(options, clock);
}

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
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<memory::FactStore> store, OpenStore(setup, clock));
  MEND_ASSIGN_OR_RETURN(memory::FactStore::ImportCounts imported,
                        store->Import(ToFacts(split, mode, clock.Now())));
  if (!imported.unusable.empty()) {
    return InvalidArgumentError("fact " + imported.unusable[0].id +
                                " was not imported: " + imported.unusable[0].reason);
  }
  std::unique_ptr<llm::HashingEmbedder> embedder;
  if (setup.hashing_embedder) {
    embedder = std::make_unique<llm::HashingEmbedder>(256);
    MEND_RETURN_IF_ERROR(Backfill(store.get(), embedder.get(), &clock));
  }
  memory::Retriever retriever(store.get(), &clock, setup.options, embedder.get());
  const bool provenance = mode == LoadMode::kWithProvenance;
  const bool pg = !setup.postgres_url.empty();
  SystemResult out{
      std::string(provenance ? "mend_provenance" : "mend_content") + (pg ? "_pg" : ""),
      std::string(provenance ? "== mend Retriever, lessons with provenance (task + error)"
                             : "== mend Retriever, content only") +
          (pg ? ", on PostgreSQL" : ""),
      {},
      0};
  size_t positives = 0;
  size_t lesson_injected = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const Query& q : split.queries) {
    memory::RetrievalQuery query;
    query.task = q.text;
    MEND_ASSIGN_OR_RETURN(memory::Retrieval r, retriever.Retrieve(query));
    Prediction& p = out.predictions[q.id];
    for (size_t i = 0; i < r.ranked.size() && i < 10; ++i) p.ranked.push_back(r.ranked[i].fact.id);
    p.injected = !r.selected.empty();
    if (q.relevant.empty()) continue;
    ++positives;
    for (const memory::ScoredFact& s : r.selected) lesson_injected += s.fact.id == q.relevant[0];
  }
  out.ms_per_query = MsSince(start, split.queries.size());
  out.lesson_injected =
      positives == 0 ? 0 : static_cast<double>(lesson_injected) / static_cast<double>(positives);
  store.reset();
  if (pg) MEND_RETURN_IF_ERROR(DropSchema(setup.postgres_url, setup.postgres_schema));
  return out;
}

// SQLite's and PostgreSQL's figures for the same loading, side by side (issue goal: R@5 within 3
// points, the same false-injection rate).
void PrintStoreComparison(const std::vector<SystemResult>& systems,
                          const std::vector<Scores>& scores) {
  std::printf("== mend Retriever on SQLite vs PostgreSQL (the same loadings and options)\n");
  std::printf("%-16s %8s %8s %8s %8s %8s %8s %10s %10s\n", "", "R@5 SQL", "R@5 PG", "diff",
              "MRR SQL", "MRR PG", "FIR SQL", "FIR PG", "ms/q SQL/PG");
  for (size_t i = 0; i < systems.size(); ++i) {
    for (size_t j = 0; j < systems.size(); ++j) {
      if (systems[j].name != systems[i].name + "_pg") continue;
      const KindScores& a = scores[i].by_kind.at("all");
      const KindScores& b = scores[j].by_kind.at("all");
      std::printf("%-16s %8.3f %8.3f %+8.1f %8.3f %8.3f %8s %8s %5.2f/%.2f\n",
                  systems[i].name.c_str(), a.recall_at_5, b.recall_at_5,
                  100 * (b.recall_at_5 - a.recall_at_5), a.mrr_at_10, b.mrr_at_10,
                  PythonFloat(scores[i].false_injection_rate.value_or(0)).c_str(),
                  PythonFloat(scores[j].false_injection_rate.value_or(0)).c_str(),
                  systems[i].ms_per_query, systems[j].ms_per_query);
    }
  }
  std::printf("goal: R@5 within 3 points, the same FIR\n");
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

// The CLI path next to the in-process one over the same loading (with provenance): the figures
// side by side and how many queries got the same ranking and the same injection decision. Any
// difference is a bug in one of the paths; it makes the run fail.
bool PrintCliComparison(const Split& split, const SystemResult& in_process, const Scores& in_scores,
                        const SystemResult& cli, const Scores& cli_scores) {
  std::printf(
      "== in-process Retriever vs `mend` CLI, lessons with provenance (the same loading)\n");
  std::printf("%-22s %10s %10s\n", "", "in-process", "CLI");
  const KindScores& a = in_scores.by_kind.at("all");
  const KindScores& b = cli_scores.by_kind.at("all");
  const std::pair<const char*, std::pair<double, double>> rows[] = {
      {"R@1", {a.recall_at_1, b.recall_at_1}},
      {"R@3", {a.recall_at_3, b.recall_at_3}},
      {"R@5", {a.recall_at_5, b.recall_at_5}},
      {"MRR@10", {a.mrr_at_10, b.mrr_at_10}},
      {"injection (positives)",
       {in_scores.injection_rate_positive.value_or(0),
        cli_scores.injection_rate_positive.value_or(0)}},
      {"FIR",
       {in_scores.false_injection_rate.value_or(0), cli_scores.false_injection_rate.value_or(0)}},
  };
  for (const auto& [name, v] : rows) std::printf("%-22s %10.4f %10.4f\n", name, v.first, v.second);
  size_t same_ranking = 0;
  size_t same_injection = 0;
  std::vector<std::string> differing;
  for (const Query& q : split.queries) {
    const Prediction& x = in_process.predictions.at(q.id);
    const Prediction& y = cli.predictions.at(q.id);
    same_ranking += x.ranked == y.ranked;
    same_injection += x.injected == y.injected;
    if (x.ranked != y.ranked || x.injected != y.injected) differing.push_back(q.id);
  }
  std::printf("same top-10 ranking: %zu/%zu queries; same injection decision: %zu/%zu\n",
              same_ranking, split.queries.size(), same_injection, split.queries.size());
  if (differing.empty()) return true;
  std::printf("the two paths disagree on:");
  for (size_t i = 0; i < differing.size() && i < 10; ++i) std::printf(" %s", differing[i].c_str());
  std::printf("%s\n", differing.size() > 10 ? " ..." : "");
  return false;
}

Status RunSmall(const Split& split, const Args& args, const std::vector<SystemResult>& systems,
                const std::vector<Scores>& scores, const std::string& tmp) {
  SmallMemoryOptions options;
  options.retriever = args.options;
  options.draws = args.small_draws;
  for (LoadMode mode : {LoadMode::kContentOnly, LoadMode::kWithProvenance}) {
    const bool provenance = mode == LoadMode::kWithProvenance;
    const std::string name = provenance ? "mend_provenance" : "mend_content";
    size_t i = 0;
    while (i < systems.size() && systems[i].name != name) ++i;
    if (i == systems.size()) return InternalError("no full-size figures for " + name);
    MEND_ASSIGN_OR_RETURN(std::vector<SmallMemoryScores> small,
                          RunSmallMemories(split, mode, options, tmp));
    SmallMemoryScores full;
    full.facts = split.lessons.size() + split.distractors.size();
    const KindScores& all = scores[i].by_kind.at("all");
    full.positive_samples = all.n;
    full.no_match_samples = scores[i].no_match_n;
    full.recall_at_1 = all.recall_at_1;
    full.injection_rate = scores[i].injection_rate_positive.value_or(0);
    full.lesson_injected = systems[i].lesson_injected;
    full.false_injection_rate = scores[i].false_injection_rate.value_or(0);
    char title[200];
    std::snprintf(title, sizeof(title),
                  "== small memories, %s: each positive query's lesson + random distractors, "
                  "no_match queries: distractors only; %d draws per size (last line: full size)",
                  provenance ? "lessons with provenance" : "content only", options.draws);
    std::printf("%s\n", FormatSmallMemories(small, full, title).c_str());
  }
  return OkStatus();
}

// Runs every system; the exit code (1 when the CLI and in-process paths disagree).
Result<int> RunAll(const Args& args, const Split& split, const std::string& tmp) {
  MEND_ASSIGN_OR_RETURN(std::vector<SystemResult> systems, RunBm25(split));
  systems.push_back(RunTags(split));
  for (LoadMode mode : {LoadMode::kContentOnly, LoadMode::kWithProvenance}) {
    const char* file = mode == LoadMode::kContentOnly ? "/content.db" : "/provenance.db";
    MendSetup setup{args.options, args.hashing_embedder, tmp + file, "", ""};
    MEND_ASSIGN_OR_RETURN(SystemResult mend, RunMend(split, mode, setup));
    systems.push_back(std::move(mend));
  }
  if (!args.postgres_url.empty()) {
    for (LoadMode mode : {LoadMode::kContentOnly, LoadMode::kWithProvenance}) {
      MendSetup setup{args.options, args.hashing_embedder, "", args.postgres_url,
                      "lessonrecall_" + std::to_string(getpid())};
      MEND_ASSIGN_OR_RETURN(SystemResult mend, RunMend(split, mode, setup));
      systems.push_back(std::move(mend));
    }
  }
  const bool cli = !args.mend_binary.empty() && !args.options_changed && !args.hashing_embedder;
  if (!args.mend_binary.empty() && !cli) {
    std::fprintf(stderr,
                 "CLI path skipped: --option and --embedder change the in-process "
                 "retriever only\n");
  }
  if (cli) {
    const std::string home = tmp + "/cli";
    std::filesystem::create_directories(home);
    MEND_ASSIGN_OR_RETURN(CliResult run, RunCli(split, args.mend_binary, home));
    systems.push_back({"mend_cli",
                       "== mend CLI (memory import; search -k 10; recall), lessons with provenance",
                       std::move(run.predictions), run.ms_per_query});
  }
  std::vector<Scores> scores;
  for (const SystemResult& s : systems) {
    scores.push_back(Score(split.queries, s.predictions, split.lesson_fact_ids));
    std::printf("%s\n", FormatReport(scores.back(), s.title).c_str());
    if (!args.predictions_dir.empty()) {
      Status written = WritePredictions(args.predictions_dir, s);
      if (!written.ok()) std::fprintf(stderr, "%s\n", written.ToString().c_str());
    }
  }
  PrintSummary(systems, scores);
  if (!args.postgres_url.empty()) {
    std::printf("\n");
    PrintStoreComparison(systems, scores);
  }
  bool agree = true;
  if (cli) {
    std::printf("\n");
    auto index = [&](const std::string& name) {
      size_t i = 0;
      while (i + 1 < systems.size() && systems[i].name != name) ++i;
      return i;
    };
    const size_t in = index("mend_provenance");
    const size_t out = index("mend_cli");
    agree = PrintCliComparison(split, systems[in], scores[in], systems[out], scores[out]);
  }
  if (args.small_memories) {
    std::printf("\n");
    MEND_RETURN_IF_ERROR(RunSmall(split, args, systems, scores, tmp));
  }
  return agree ? 0 : 1;
}

int Run(const Args& args) {
  Result<Split> split = LoadSplit(args.data_dir);
  if (!split.ok()) {
    std::fprintf(stderr, "mend_lessonrecall: %s\n", split.status().ToString().c_str());
    return 1;
  }
  std::fprintf(stderr, "%zu lessons, %zu distractors, %zu queries\n", split->lessons.size(),
               split->distractors.size(), split->queries.size());
  const std::string tmp = ScratchDir();
  if (tmp.empty()) {
    std::fprintf(stderr, "mend_lessonrecall: cannot create a scratch directory\n");
    return 1;
  }
  Result<int> code = RunAll(args, *split, tmp);
  std::filesystem::remove_all(tmp);
  if (!code.ok()) {
    std::fprintf(stderr, "mend_lessonrecall: %s\n", code.status().ToString().c_str());
    return 1;
  }
  return *code;
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
