// GET /api/v1/runs over RUNS runs (issue: a page over 100k runs, p50 ≤ 20 ms) through a real
// `mend serve` on a keep-alive loopback connection: the first page of 50, a page deep in the list
// (the cursor of the middle run), and a filtered first page (status and agent), each next to the
// store's ListPending of the same query alone, measured in the same run. The runs go into the
// store straight through SQL (setup speed only), 90% completed, with the metadata a real run
// records. Usage: mend_serve_runs_bench [DIR] [RUNS] [benchmark flags];
// bench/run_serve_runs_bench builds and runs it.
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mend/agent/run_origin.h"
#include "mend/app/runtime.h"
#include "mend/base/config.h"
#include "mend/base/env.h"
#include "mend/llm/scripted_provider.h"
#include "mend/server/server.h"
#include "mend/store/run_page.h"

namespace {

using namespace mend;  // NOLINT(google-build-using-namespace): a benchmark program
using std::chrono::steady_clock;

constexpr int kAgents = 10;
constexpr int64_t kFirstNanos = 1'700'000'000'000'000'000LL;
constexpr int64_t kStepNanos = 1'000'000LL;  // runs are created 1 ms apart

struct Fixture {
  std::unique_ptr<app::Runtime> runtime;
  std::unique_ptr<server::Server> server;
  std::unique_ptr<httplib::Client> client;
  std::string middle_cursor;  // the cursor of the run in the middle of the list
};

Fixture* g_fixture = nullptr;
std::map<std::string, double> g_p50_ms;  // by benchmark name

void Die(const std::string& what, const Status& status) {
  std::fprintf(stderr, "serve_runs_bench: %s: %s\n", what.c_str(), status.ToString().c_str());
  std::exit(1);
}

std::string RunId(int i) {
  char id[32];
  std::snprintf(id, sizeof id, "run-%08d", i);
  return id;
}

// The metadata a run of the scripted provider records (workspace, model, fingerprint, trace).
std::string Metadata() {
  agent::RunOrigin origin;
  origin.kind = "send";
  origin.workspace = "/srv/projects/bench";
  origin.model = {"openai", "https://api.example.com/v1", "gpt-4o-mini", ""};
  origin.fingerprint.agent_toml = std::string(64, 'a');
  origin.fingerprint.instructions = std::string(64, 'b');
  origin.fingerprint.skills = std::string(64, 'c');
  origin.fingerprint.tools = {{"read_file", std::string(64, 'd')}, {"grep", std::string(64, 'e')}};
  origin.trace_id = std::string(32, 'f');
  origin.trace_root_span_id = std::string(16, '1');
  Result<std::string> text = agent::WriteRunOrigin("{\"kind\":\"send\"}", origin, "bench");
  if (!text.ok()) Die("metadata", text.status());
  return *text;
}

// Inserts `total` runs into `path` in one transaction: every tenth unfinished (its status taking
// turns), agents bench-0 .. bench-9 taking turns.
void BulkInsertRuns(const std::string& path, int total) {
  static const char* const kUnfinished[] = {"running", "waiting", "failed", "quarantined"};
  const std::string metadata = Metadata();
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) Die("open", InternalError(path));
  sqlite3_busy_timeout(db, 5000);
  sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT INTO runs (id, agent, agent_dir, task, status, step, message_count, "
                     "attempts, waiting, parent_id, parent_step, metadata, created_at, updated_at, "
                     "epoch) VALUES (?1, ?2, '/srv/agents/bench', 'fix the failing test', ?3, 12, "
                     "24, 0, ?4, '', 0, ?5, ?6, ?6, 1)",
                     -1, &stmt, nullptr);
  for (int i = 0; i < total; ++i) {
    const bool done = i % 10 != 0;
    const char* status = done ? "completed" : kUnfinished[(i / 10) % 4];
    const std::string id = RunId(i);
    const std::string agent = "bench-" + std::to_string(i % kAgents);
    sqlite3_bind_text(stmt, 1, id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(stmt, 2, agent.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(stmt, 3, status, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 4, std::string(status) == "waiting" ? "approval" : "", -1,
                      SQLITE_STATIC);
    sqlite3_bind_text(stmt, 5, metadata.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 6, kFirstNanos + i * kStepNanos);
    if (sqlite3_step(stmt) != SQLITE_DONE) Die("insert", InternalError(sqlite3_errmsg(db)));
    sqlite3_reset(stmt);
  }
  sqlite3_finalize(stmt);
  if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    Die("commit", InternalError(sqlite3_errmsg(db)));
  }
  sqlite3_close(db);
}

double Median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  auto mid = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), mid, samples.end());
  return *mid;
}

// Times each iteration of `call` and reports its p50 as the counter p50_ms.
template <typename Call>
void Timed(benchmark::State& state, const std::string& name, Call call) {
  std::vector<double> ms;
  for (auto _ : state) {
    const auto start = steady_clock::now();
    if (!call()) {
      state.SkipWithError("the request failed");
      return;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(steady_clock::now() - start).count());
  }
  const double p50 = Median(ms);
  state.counters["p50_ms"] = p50;
  g_p50_ms[name] = p50;
}

bool GetOk(const std::string& path) {
  auto res = g_fixture->client->Get(path);
  return res && res->status == 200 && res->body.size() > 2;
}

store::PendingQuery Query(const std::string& cursor, std::vector<store::RunStatus> statuses = {},
                          std::string agent = "") {
  store::PendingQuery query;
  query.scope = store::RunScope::kAll;
  query.limit = 50;
  query.statuses = std::move(statuses);
  query.agent = std::move(agent);
  if (!cursor.empty()) query.before = *store::ParseRunCursor(cursor);
  return query;
}

bool StoreOk(const store::PendingQuery& query) {
  Result<store::PendingPage> page = g_fixture->runtime->store->ListPending(query);
  return page.ok() && page->runs.size() == query.limit;
}

void BM_HttpFirstPage(benchmark::State& state) {
  Timed(state, "BM_HttpFirstPage", [] { return GetOk("/api/v1/runs?limit=50"); });
}
void BM_StoreFirstPage(benchmark::State& state) {
  const store::PendingQuery query = Query("");
  Timed(state, "BM_StoreFirstPage", [&] { return StoreOk(query); });
}
void BM_HttpDeepPage(benchmark::State& state) {
  const std::string path = "/api/v1/runs?limit=50&cursor=" + g_fixture->middle_cursor;
  Timed(state, "BM_HttpDeepPage", [&] { return GetOk(path); });
}
void BM_StoreDeepPage(benchmark::State& state) {
  const store::PendingQuery query = Query(g_fixture->middle_cursor);
  Timed(state, "BM_StoreDeepPage", [&] { return StoreOk(query); });
}
void BM_HttpFilteredPage(benchmark::State& state) {
  Timed(state, "BM_HttpFilteredPage",
        [] { return GetOk("/api/v1/runs?limit=50&status=completed&agent=bench-3"); });
}
void BM_StoreFilteredPage(benchmark::State& state) {
  const store::PendingQuery query = Query("", {store::RunStatus::kCompleted}, "bench-3");
  Timed(state, "BM_StoreFilteredPage", [&] { return StoreOk(query); });
}

BENCHMARK(BM_HttpFirstPage)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_StoreFirstPage)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HttpDeepPage)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_StoreDeepPage)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HttpFilteredPage)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_StoreFilteredPage)->Unit(benchmark::kMillisecond)->UseRealTime();

void PrintSummary(int runs) {
  std::printf("\nGET /api/v1/runs?limit=50 over %d runs (p50, ms)   HTTP   store alone   goal\n",
              runs);
  for (const char* page : {"FirstPage", "DeepPage", "FilteredPage"}) {
    std::printf("  %-46s %6.2f %13.2f   %s\n", page, g_p50_ms["BM_Http" + std::string(page)],
                g_p50_ms["BM_Store" + std::string(page)],
                std::string(page) == "FilteredPage" ? "" : "<= 20");
  }
  std::printf("store alone: CheckpointStore::ListPending of the same query in this process.\n");
}

Fixture* Open(const std::string& dir, int runs) {
  Env env = Env::Default();
  ConfigSources sources;
  sources.flags["home"] = dir + "/home";
  sources.flags["observe.enabled"] = "false";
  auto config = LoadConfig(sources, *env.fs);
  if (!config.ok()) Die("config", config.status());
  auto open = [&]() {
    app::RuntimeOptions options;
    options.provider = std::make_unique<llm::ScriptedProvider>(std::vector<llm::ScriptedStep>{});
    options.event_log = app::EventLog::kNone;
    options.caller_dir = dir;
    auto runtime = app::OpenRuntime(*config, env, std::move(options));
    if (!runtime.ok()) Die("runtime", runtime.status());
    return *std::move(runtime);
  };
  open().reset();  // creates the schema
  BulkInsertRuns(dir + "/home/mend.db", runs);
  auto* fixture = new Fixture;
  fixture->runtime = open();
  const int middle = runs / 2;
  fixture->middle_cursor = store::FormatRunCursor(
      {Time{} + std::chrono::nanoseconds(kFirstNanos + middle * kStepNanos), RunId(middle)});
  auto server = server::Server::Create(*fixture->runtime, server::ServerOptions{.port = 0});
  if (!server.ok()) Die("server", server.status());
  fixture->server = *std::move(server);
  if (Status s = fixture->server->Start(); !s.ok()) Die("start", s);
  fixture->client = std::make_unique<httplib::Client>("127.0.0.1", fixture->server->port());
  fixture->client->set_keep_alive(true);
  return fixture;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  const int runs = argc > 2 && argv[2][0] != '-' ? std::atoi(argv[2]) : 100000;
  const int skip = 1 + (argc > 1 && argv[1][0] != '-') + (argc > 2 && argv[2][0] != '-');
  const bool own_dir = dir.empty();
  if (own_dir) {
    std::string pattern = std::filesystem::temp_directory_path() / "mend-serve-runs-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return 1;
    dir = pattern;
  }
  std::unique_ptr<Fixture> fixture(Open(dir, runs));
  g_fixture = fixture.get();

  std::vector<char*> rest = {argv[0]};
  for (int i = skip; i < argc; ++i) rest.push_back(argv[i]);
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  PrintSummary(runs);
  fixture->client.reset();
  fixture->server->Stop();
  fixture.reset();
  if (own_dir) std::filesystem::remove_all(dir);
  return 0;
}
