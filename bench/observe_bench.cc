// observe.db throughput and `mend traces RUN_ID` latency; bench/run_observe_bench prints them.
//
//   BM_WriterSpans    spans/s through BatchSpanWriter into observe.db (8 attributes per span)
//   BM_StoreWrite     SpanStore::Write alone on the calling thread in batches of 512, by CPU time:
//                     the store's share of the writer's work, apart from the buffer and disk waits
//   BM_RawInsert      the reference: the same rows inserted with plain SQLite in one transaction
//                     per batch, attributes pre-encoded (no JSON work), no summary table
//   BM_TraceOf1000StepRun  RunSummary + SpansOfTrace + PrintTrace for a run of ~3,000 spans
//   BM_ListRuns       one page of 20 runs out of ~100k spans
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "cli/traces_render.h"
#include "mend/obs/span_store.h"
#include "mend/obs/span_writer.h"

namespace mend::obs {
namespace {

std::string TempDir() {
  std::string pattern = (std::filesystem::current_path() / "observe-bench-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  return pattern;
}

std::string Hex(uint64_t n, size_t width) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(width, '0');
  for (size_t i = width; i > 0 && n > 0; --i, n >>= 4) s[i - 1] = kDigits[n & 15];
  return s;
}

// A chat or tool span of run `run` like the agent records: 8 attributes.
SpanData RealisticSpan(uint64_t run, uint64_t n) {
  SpanData s;
  s.context = {Hex(run + 1, 32), Hex(n + 1, 16), 1};
  s.parent_span_id = Hex(1, 16);
  s.run_id = "run-" + std::to_string(run);
  const Time t0 = Time{} + std::chrono::seconds(1'700'000'000) + std::chrono::milliseconds(n);
  s.start = t0;
  s.end = t0 + std::chrono::milliseconds(300);
  if (n % 2 == 0) {
    s.name = "chat gpt-4o-mini";
    s.kind = SpanKind::kClient;
    s.attributes = {{"gen_ai.operation.name", std::string("chat")},
                    {"gen_ai.provider.name", std::string("openai")},
                    {"gen_ai.request.model", std::string("gpt-4o-mini")},
                    {"gen_ai.usage.input_tokens", int64_t{1200}},
                    {"gen_ai.usage.output_tokens", int64_t{85}},
                    {"gen_ai.response.finish_reasons", std::vector<std::string>{"tool_calls"}},
                    {"mend.step", static_cast<int64_t>(n / 3)},
                    {"mend.cost_usd", 0.00021}};
  } else {
    s.name = "execute_tool read_file";
    s.attributes = {{"gen_ai.operation.name", std::string("execute_tool")},
                    {"gen_ai.tool.name", std::string("read_file")},
                    {"gen_ai.tool.call.id", "call_" + Hex(n, 12)},
                    {"mend.step", static_cast<int64_t>(n / 3)},
                    {"mend.run.id", s.run_id},
                    {"mend.tool.replaced_by_hook", false},
                    {"gen_ai.provider.name", std::string("openai")},
                    {"mend.attempt", std::string("send")}};
  }
  return s;
}

void BM_WriterSpans(benchmark::State& state) {
  const std::string dir = TempDir();
  auto store = SpanStore::Open(dir + "/observe.db");
  if (!store.ok()) std::abort();
  std::shared_ptr<SpanStore> shared = std::move(store).value();
  std::vector<SpanData> spans;
  for (uint64_t i = 0; i < 10'000; ++i) spans.push_back(RealisticSpan(i / 3000, i));
  uint64_t total = 0;
  for (auto _ : state) {
    BatchSpanWriter writer(shared, {.clock = SystemClock::Default(), .buffer_spans = 20'000});
    for (SpanData& s : spans) {
      s.context.trace_id = Hex(total++ / 3000 + 1, 32);
      writer.OnEnd(s);
    }
    if (!writer.Flush(std::chrono::minutes(1)).ok() || writer.dropped() != 0) std::abort();
  }
  state.SetItemsProcessed(static_cast<int64_t>(total));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_WriterSpans)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StoreWrite(benchmark::State& state) {
  const std::string dir = TempDir();
  auto store = SpanStore::Open(dir + "/observe.db");
  if (!store.ok()) std::abort();
  std::vector<SpanData> spans;
  for (uint64_t i = 0; i < 10'000; ++i) spans.push_back(RealisticSpan(i / 3000, i));
  uint64_t total = 0;
  for (auto _ : state) {
    for (size_t b = 0; b < spans.size(); b += 512) {
      state.PauseTiming();
      std::vector<SpanData> batch(
          spans.begin() + static_cast<ptrdiff_t>(b),
          spans.begin() + static_cast<ptrdiff_t>(std::min(spans.size(), b + 512)));
      for (SpanData& s : batch) s.context.trace_id = Hex(total++ / 3000 + 1, 32);
      state.ResumeTiming();
      if (!(*store)->Write(batch).ok()) std::abort();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(total));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_StoreWrite)->Unit(benchmark::kMillisecond);

void BM_RawInsert(benchmark::State& state) {
  const std::string dir = TempDir();
  sqlite3* db = nullptr;
  sqlite3_open((dir + "/raw.db").c_str(), &db);
  sqlite3_exec(db,
               "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE TABLE spans(trace_id "
               "TEXT, span_id TEXT, parent_span_id TEXT, run_id TEXT, name TEXT, kind INT, "
               "start_ns INT, end_ns INT, status INT, attributes TEXT, PRIMARY KEY(trace_id, "
               "span_id)); CREATE INDEX r ON spans(run_id); CREATE INDEX e ON spans(end_ns);",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO spans VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)", -1, &stmt,
                     nullptr);
  const std::string attributes(380, 'x');  // about the size of 8 encoded attributes
  std::vector<SpanData> spans;
  for (uint64_t i = 0; i < 10'000; ++i) spans.push_back(RealisticSpan(i / 3000, i));
  uint64_t total = 0;
  for (auto _ : state) {
    for (size_t b = 0; b < spans.size(); b += 512) {
      sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
      for (size_t i = b; i < std::min(spans.size(), b + 512); ++i) {
        const SpanData& s = spans[i];
        const std::string trace = Hex(total++ / 3000 + 1, 32);
        sqlite3_bind_text(stmt, 1, trace.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(stmt, 2, s.context.span_id.c_str(), -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 3, s.parent_span_id.c_str(), -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 4, s.run_id.c_str(), -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 5, s.name.c_str(), -1, SQLITE_STATIC);
        sqlite3_bind_int(stmt, 6, 1);
        sqlite3_bind_int64(stmt, 7, s.start.time_since_epoch().count());
        sqlite3_bind_int64(stmt, 8, s.end.time_since_epoch().count());
        sqlite3_bind_int(stmt, 9, 0);
        sqlite3_bind_text(stmt, 10, attributes.c_str(), -1, SQLITE_STATIC);
        if (sqlite3_step(stmt) != SQLITE_DONE) std::abort();
        sqlite3_reset(stmt);
      }
      sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(total));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_RawInsert)->Unit(benchmark::kMillisecond)->UseRealTime();

// A store with ~100k spans in 33 runs of 3,000 spans (1,000 steps: a chat and two tools each).
struct Filled {
  std::string dir;
  std::unique_ptr<SpanStore> store;
  Filled() : dir(TempDir()) {
    auto opened = SpanStore::Open(dir + "/observe.db");
    if (!opened.ok()) std::abort();
    store = std::move(opened).value();
    std::vector<SpanData> batch;
    for (uint64_t i = 0; i < 99'000; ++i) {
      batch.push_back(RealisticSpan(i / 3000, i));
      if (batch.size() == 1000) {
        if (!store->Write(batch).ok()) std::abort();
        batch.clear();
      }
    }
  }
  ~Filled() { std::filesystem::remove_all(dir); }
};

Filled& Store() {
  static Filled filled;
  return filled;
}

void BM_TraceOf1000StepRun(benchmark::State& state) {
  SpanStore& store = *Store().store;
  size_t lines = 0;
  for (auto _ : state) {
    auto run = store.RunSummary("run-7");
    auto spans = store.SpansOfTrace(run->trace_id);
    if (!spans.ok() || spans->size() != 3000) std::abort();
    std::ostringstream out;
    cli::traces::PrintTrace(*run, *spans, 0, cli::traces::Color::kNone, out);
    lines = out.str().size();
  }
  benchmark::DoNotOptimize(lines);
}
BENCHMARK(BM_TraceOf1000StepRun)->Unit(benchmark::kMillisecond);

void BM_ListRuns(benchmark::State& state) {
  SpanStore& store = *Store().store;
  for (auto _ : state) {
    auto page = store.ListRuns({.limit = 20});
    if (!page.ok() || page->runs.size() != 20) std::abort();
  }
}
BENCHMARK(BM_ListRuns)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mend::obs

BENCHMARK_MAIN();
