// Long-term memory at scale: ingest, retrieval latency next to a raw FTS5 OR query over the same
// data in the same run, and memory use. Prints one JSON object (bench/run_memory_bench formats it).
//
// usage: mend_memory_bench DATA_DIR [FACTS] [QUERIES] [ADDS]
//
// With MEND_BENCH_EMBED_DIMENSION=N (N > 0), the import is followed by what `mend memory import`
// does next: every part of the imported facts embedded (EmbedMissing, its default batches and
// concurrency) by an embedder that answers at once with vectors of N floats, so the figure is the
// store's; "import_embed_seconds" is that step's time.

#include <libpq-fe.h>
#include <malloc.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "memory/pg_fact_store.h"
#include "mend/base/clock.h"
#include "mend/llm/embedder.h"
#include "mend/memory/backfill.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/lexical.h"
#include "mend/memory/postgres_fact_store.h"
#include "mend/memory/retriever.h"

namespace mend::memory {
namespace {

using Seconds = std::chrono::duration<double>;

// A vocabulary of pronounceable pseudo-words with a Zipf-like use, so term statistics resemble
// text: a few words are everywhere, most are rare.
class Corpus {
 public:
  explicit Corpus(uint32_t seed) : rng_(seed) {
    const char* consonants = "bcdfghklmnprstvz";
    const char* vowels = "aeiou";
    // The most frequent ranks are English function words, as in real text (queries drop them).
    for (const char* w :
         {"the", "to",   "a",   "and", "of",   "in", "is",   "it",   "for", "that",
          "on",  "with", "as",  "was", "be",   "by", "this", "an",   "at",  "from",
          "or",  "not",  "but", "are", "when", "if", "so",   "then", "its", "which"}) {
      words_.push_back(w);
    }
    while (words_.size() < 20000) {
      std::string w;
      int syllables = 2 + static_cast<int>(rng_() % 3);
      for (int s = 0; s < syllables; ++s) {
        w += consonants[rng_() % 16];
        w += vowels[rng_() % 5];
      }
      words_.push_back(w);
    }
  }
  std::string Word() {
    // Zipf via inverse transform of a power law over ranks.
    double u = std::uniform_real_distribution<double>(0, 1)(rng_);
    size_t rank = static_cast<size_t>(std::pow(static_cast<double>(words_.size()), u)) - 1;
    return words_[std::min(rank, words_.size() - 1)];
  }
  std::string Text(int min_words, int max_words) {
    int n = min_words + static_cast<int>(rng_() % static_cast<uint32_t>(max_words - min_words + 1));
    std::string out;
    for (int i = 0; i < n; ++i) {
      if (i > 0) out += ' ';
      out += Word();
    }
    return out;
  }
  std::mt19937& rng() { return rng_; }

 private:
  std::mt19937 rng_;
  std::vector<std::string> words_;
};

// Vectors at once: what is measured is storing them, not computing them.
class InstantEmbedder final : public llm::Embedder {
 public:
  explicit InstantEmbedder(int dimension) : dimension_(dimension) {}
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override {
    std::vector<std::vector<float>> out;
    for (size_t i = 0; i < texts.size(); ++i) {
      std::vector<float> v(static_cast<size_t>(dimension_));
      for (size_t d = 0; d < v.size(); ++d) v[d] = static_cast<float>((i + d) % 17) / 17.0f;
      out.push_back(std::move(v));
    }
    return out;
  }
  int dimension() const override { return dimension_; }
  std::string model_id() const override { return "bench-instant"; }

 private:
  int dimension_;
};

long RssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

std::vector<Fact> MakeFacts(Corpus& corpus, int n) {
  std::vector<Fact> facts;
  facts.reserve(static_cast<size_t>(n));
  const char* categories[] = {"lesson", "project", "preference", "history", "environment"};
  Time now = SystemClock().Now();
  for (int i = 0; i < n; ++i) {
    Fact f;
    f.content = "LESSON: " + corpus.Text(8, 20) + "\nMISTAKE: " + corpus.Text(10, 30) +
                "\nCORRECTION: " + corpus.Text(8, 25) + "\nTRIGGER: error";
    f.id = FactIdFor(f.content + std::to_string(i));
    f.category = categories[i % 5];
    f.tags = {corpus.Word(), corpus.Word(), corpus.Word()};
    f.created_at = f.last_accessed = now;
    if (i % 3 == 0)
      f.provenance.push_back({corpus.Text(8, 20), "ERROR: " + corpus.Text(10, 40), now});
    facts.push_back(std::move(f));
  }
  return facts;
}

// The reference: the same FTS5 OR query, straight through the C API on its own connection.
std::vector<double> RawFtsLatencies(const std::string& path,
                                    const std::vector<std::string>& queries) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT rowid, bm25(facts_fts) FROM facts_fts WHERE facts_fts MATCH ?1 "
                     "ORDER BY bm25(facts_fts) LIMIT 10",
                     -1, &stmt, nullptr);
  std::vector<double> ms;
  for (const std::string& q : queries) {
    auto start = std::chrono::steady_clock::now();
    std::string fts = BuildFtsQuery(QueryTerms(q, 32));
    sqlite3_bind_text(stmt, 1, fts.c_str(), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
    }
    sqlite3_reset(stmt);
    ms.push_back(Seconds(std::chrono::steady_clock::now() - start).count() * 1000);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return ms;
}

// The PostgreSQL reference: the same OR query the store runs (tsquery, GIN, ts_rank), top 10,
// straight through libpq on its own connection.
std::vector<double> RawPgLatencies(const std::string& url, const std::string& schema,
                                   const std::vector<std::string>& queries) {
  std::vector<double> ms;
  PGconn* conn = PQconnectdb(url.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    PQfinish(conn);
    return ms;
  }
  const std::string sql = "SELECT fact_rowid, ts_rank(search, q, 1) AS r FROM \"" + schema +
                          "\".fact_search, to_tsquery('english', $1) q WHERE search @@ q "
                          "ORDER BY r DESC LIMIT 10";
  for (const std::string& q : queries) {
    auto start = std::chrono::steady_clock::now();
    const std::string tsquery = internal::PgOrQuery(QueryTerms(q, 32));
    const char* values[] = {tsquery.c_str()};
    PGresult* res = PQexecParams(conn, sql.c_str(), 1, nullptr, values, nullptr, nullptr, 0);
    PQclear(res);
    ms.push_back(Seconds(std::chrono::steady_clock::now() - start).count() * 1000);
  }
  PQfinish(conn);
  return ms;
}

// The store under test: SQLite at `path`, or with MEND_BENCH_POSTGRES_URL set, PostgreSQL in
// schema memory_bench of that database (made afresh by the first open).
Result<std::unique_ptr<FactStore>> OpenBenchStore(const std::string& path, Clock& clock,
                                                  bool fresh) {
  const char* url = std::getenv("MEND_BENCH_POSTGRES_URL");
  if (url == nullptr || *url == '\0') return FactStore::Open(path, FactStoreOptions{&clock});
  if (fresh) {
    PGconn* conn = PQconnectdb(url);
    PQsetNoticeProcessor(
        conn, [](void*, const char*) {}, nullptr);
    PQclear(PQexec(conn, "DROP SCHEMA IF EXISTS memory_bench CASCADE"));
    PQfinish(conn);
  }
  PostgresFactStoreOptions options;
  options.url = url;
  options.schema = "memory_bench";
  return OpenPostgresFactStore(options, clock);
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mend_memory_bench DATA_DIR [FACTS] [QUERIES] [ADDS]\n");
    return 2;
  }
  std::string dir = argv[1];
  int n_facts = argc > 2 ? std::stoi(argv[2]) : 100000;
  int n_queries = argc > 3 ? std::stoi(argv[3]) : 300;
  int n_adds = argc > 4 ? std::stoi(argv[4]) : 300;
  std::string path = dir + "/mend.db";
  std::remove(path.c_str());
  SystemClock clock;
  Corpus corpus(42);
  long rss_start = RssKiB();

  const char* pg_url = std::getenv("MEND_BENCH_POSTGRES_URL");
  const bool pg = pg_url != nullptr && *pg_url != '\0';
  auto opened = OpenBenchStore(path, clock, /*fresh=*/true);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<FactStore> store = std::move(opened).value();
  std::vector<Fact> facts = MakeFacts(corpus, n_facts);
  auto start = std::chrono::steady_clock::now();
  auto imported = store->Import(facts);
  double import_s = Seconds(std::chrono::steady_clock::now() - start).count();
  if (!imported.ok()) {
    std::fprintf(stderr, "import: %s\n", imported.status().ToString().c_str());
    return 1;
  }
  if (!imported->unusable.empty()) {
    std::fprintf(stderr, "import: fact %s: %s\n", imported->unusable[0].id.c_str(),
                 imported->unusable[0].reason.c_str());
    return 1;
  }
  double embed_s = 0;
  const char* dimension = std::getenv("MEND_BENCH_EMBED_DIMENSION");
  if (dimension != nullptr && std::atoi(dimension) > 0) {
    std::vector<std::string> ids;
    for (const Fact& f : facts) ids.push_back(f.id);
    InstantEmbedder embedder(std::atoi(dimension));
    auto e0 = std::chrono::steady_clock::now();
    EmbedReport report = EmbedMissing(*store, embedder, clock, &ids, EmbedOptions{});
    embed_s = Seconds(std::chrono::steady_clock::now() - e0).count();
    if (!report.error.ok()) {
      std::fprintf(stderr, "embed: %s\n", report.error.ToString().c_str());
      return 1;
    }
  }
  facts.clear();
  facts.shrink_to_fit();

  // Single durable adds on the full store (duplicate check + FTS update + fsync each).
  std::vector<double> add_ms;
  for (int i = 0; i < n_adds; ++i) {
    NewFact f{"LESSON: " + corpus.Text(10, 20) + "\nCORRECTION: " + corpus.Text(10, 20), "lesson"};
    auto t0 = std::chrono::steady_clock::now();
    if (!store->Add(f).ok()) return 1;
    add_ms.push_back(Seconds(std::chrono::steady_clock::now() - t0).count() * 1000);
  }

  std::vector<std::string> queries;
  for (int i = 0; i < n_queries; ++i) queries.push_back(corpus.Text(10, 40));

  if (pg) {
    // What autovacuum does within a minute of a bulk load: statistics for the planner and the
    // visibility map for index-only scans. Measured in that steady state, not in the minute after.
    PGconn* conn = PQconnectdb(pg_url);
    PQclear(PQexec(conn,
                   "VACUUM ANALYZE memory_bench.facts, memory_bench.fact_search, "
                   "memory_bench.fact_tag_keys, memory_bench.fact_tag_counts, "
                   "memory_bench.fact_terms"));
    PQfinish(conn);
  }

  // What a fresh process pays: the store opened again, a new retriever, its first retrieval. The
  // file's pages are in the OS cache, as after any recent use of the memory.
  store.reset();
  malloc_trim(0);
  long rss_before_index = RssKiB();
  auto t0 = std::chrono::steady_clock::now();
  opened = OpenBenchStore(path, clock, /*fresh=*/false);
  if (!opened.ok()) {
    std::fprintf(stderr, "reopen: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  store = std::move(opened).value();
  Retriever retriever(store.get(), &clock, RetrieverOptions{});
  if (!retriever.Retrieve({queries[0]}).ok()) return 1;
  double first_s = Seconds(std::chrono::steady_clock::now() - t0).count();
  malloc_trim(0);  // count live memory, not freed heap glibc still holds
  long rss_after_index = RssKiB();

  auto raw = [&] {
    return pg ? RawPgLatencies(pg_url, "memory_bench", queries) : RawFtsLatencies(path, queries);
  };
  std::vector<double> raw_ms = raw();
  std::vector<double> mend_ms;
  for (const std::string& q : queries) {
    auto q0 = std::chrono::steady_clock::now();
    auto r = retriever.Retrieve({q});
    if (!r.ok()) {
      std::fprintf(stderr, "retrieve: %s\n", r.status().ToString().c_str());
      return 1;
    }
    mend_ms.push_back(Seconds(std::chrono::steady_clock::now() - q0).count() * 1000);
  }
  std::vector<double> raw_again = raw();
  raw_ms.insert(raw_ms.end(), raw_again.begin(), raw_again.end());
  malloc_trim(0);
  long rss_after_queries = RssKiB();

  // Where a retrieval's time goes: the store calls it makes, one by one, for the same queries.
  const RetrieverOptions defaults;
  std::vector<double> counts_ms, fts_ms, tags_ms;
  for (const std::string& q : queries) {
    std::vector<std::string> words = QueryTerms(q, defaults.max_query_terms);
    auto c0 = std::chrono::steady_clock::now();
    auto counts = store->CountTerms(TermStatistics::QueryStems(words));
    auto c1 = std::chrono::steady_clock::now();
    if (!counts.ok()) return 1;
    std::unique_ptr<TermStatistics> stats = TermStatistics::FromCounts(*counts);
    const std::vector<std::string> searched = SearchedWords(words, *stats, defaults.max_postings);
    auto f0 = std::chrono::steady_clock::now();
    if (!store->SearchLexical(searched, 2 * defaults.candidates, "").ok()) return 1;
    auto f1 = std::chrono::steady_clock::now();
    if (!store->MatchTags(words, "", defaults.max_postings).ok()) return 1;
    auto t1 = std::chrono::steady_clock::now();
    counts_ms.push_back(Seconds(c1 - c0).count() * 1000);
    fts_ms.push_back(Seconds(f1 - f0).count() * 1000);
    tags_ms.push_back(Seconds(t1 - f1).count() * 1000);
  }

  // What the postings budget leaves out: the same ranking with every word searched, its top 10
  // beside the budgeted one's, and its latency.
  RetrieverOptions unbounded_options;
  unbounded_options.max_postings = std::numeric_limits<size_t>::max();
  Retriever unbounded(store.get(), &clock, unbounded_options);
  std::vector<double> unbounded_ms;
  double overlap = 0;
  const size_t compared = std::min<size_t>(queries.size(), 100);
  for (size_t i = 0; i < compared; ++i) {
    auto q0 = std::chrono::steady_clock::now();
    auto all = unbounded.Search(queries[i], 10);
    unbounded_ms.push_back(Seconds(std::chrono::steady_clock::now() - q0).count() * 1000);
    auto budgeted = retriever.Search(queries[i], 10);
    if (!all.ok() || !budgeted.ok()) return 1;
    size_t same = 0;
    for (const ScoredFact& a : *all) {
      for (const ScoredFact& b : *budgeted) same += a.fact.id == b.fact.id;
    }
    overlap += all->empty() ? 1.0 : static_cast<double>(same) / static_cast<double>(all->size());
  }
  overlap /= static_cast<double>(std::max<size_t>(compared, 1));

  std::printf(
      "{\"store\": \"%s\", \"facts\": %d, \"queries\": %d, \"import_seconds\": %.3f, "
      "\"import_facts_per_s\": %.0f, \"import_embed_seconds\": %.3f, "
      "\"add_p50_ms\": %.3f, \"add_p99_ms\": %.3f, \"first_retrieval_s\": %.3f, "
      "\"retrieve_p50_ms\": %.3f, \"retrieve_p99_ms\": %.3f, \"raw_fts_p50_ms\": %.3f, "
      "\"raw_fts_p99_ms\": %.3f, \"rss_start_kib\": %ld, \"rss_before_index_kib\": %ld, "
      "\"rss_after_index_kib\": %ld, \"rss_after_queries_kib\": %ld, "
      "\"unbounded_p50_ms\": %.3f, \"unbounded_p99_ms\": %.3f, \"top10_overlap\": %.3f, "
      "\"counts_p50_ms\": %.3f, \"fts_p50_ms\": %.3f, \"fts_p99_ms\": %.3f, "
      "\"tags_p50_ms\": %.3f, \"tags_p99_ms\": %.3f}\n",
      pg ? "postgres" : "sqlite", n_facts, n_queries, import_s, n_facts / import_s, embed_s,
      Percentile(add_ms, 0.5), Percentile(add_ms, 0.99), first_s, Percentile(mend_ms, 0.5),
      Percentile(mend_ms, 0.99), Percentile(raw_ms, 0.5), Percentile(raw_ms, 0.99), rss_start,
      rss_before_index, rss_after_index, rss_after_queries, Percentile(unbounded_ms, 0.5),
      Percentile(unbounded_ms, 0.99), overlap, Percentile(counts_ms, 0.5), Percentile(fts_ms, 0.5),
      Percentile(fts_ms, 0.99), Percentile(tags_ms, 0.5), Percentile(tags_ms, 0.99));
  return 0;
}

}  // namespace
}  // namespace mend::memory

int main(int argc, char** argv) { return mend::memory::Main(argc, argv); }
