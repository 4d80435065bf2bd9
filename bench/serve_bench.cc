// `mend serve`'s /metrics (issue: a scrape in ≤ 5 ms): GET /metrics over a keep-alive connection
// to a real server, next to rendering the same registry in process and to GET /healthz (the HTTP
// round trip alone). The registry holds what a busy process has: RUNS scripted runs through the
// agent (provider, token, cost, save and memory series) and UNFINISHED unfinished runs in the
// store, which the run gauges count at every scrape. Usage: mend_serve_bench [DIR] [RUNS]
// [UNFINISHED] [benchmark flags]; bench/run_serve_bench builds and runs it.
#include <benchmark/benchmark.h>
#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "mend/app/runtime.h"
#include "mend/base/config.h"
#include "mend/base/env.h"
#include "mend/base/file_system.h"
#include "mend/llm/scripted_provider.h"
#include "mend/server/server.h"

namespace {

using namespace mend;

struct Fixture {
  std::unique_ptr<app::Runtime> runtime;
  std::unique_ptr<server::Server> server;
  std::unique_ptr<httplib::Client> client;
};

Fixture* g_fixture = nullptr;

void Die(const std::string& what, const Status& status) {
  std::fprintf(stderr, "serve_bench: %s: %s\n", what.c_str(), status.ToString().c_str());
  std::exit(1);
}

void Seed(app::Runtime& runtime, const std::string& dir, int runs, int unfinished) {
  const std::string agent_dir = dir + "/agent";
  Env env = runtime.env;
  if (Status s = env.fs->CreateDirs(agent_dir); !s.ok()) Die("agent dir", s);
  (void)WriteFileAtomically(*env.fs, agent_dir + "/agent.toml", "name = \"b\"\ntools = []\n");
  (void)WriteFileAtomically(*env.fs, agent_dir + "/instructions.md", "Answer briefly.\n");
  auto agent = app::OpenAgent(runtime, agent_dir);
  if (!agent.ok()) Die("open agent", agent.status());
  for (int i = 0; i < runs; ++i) {
    auto result = (*agent)->Send("task " + std::to_string(i));
    if (!result.ok()) Die("run", result.status());
  }
  const Time now = env.clock->Now();
  for (int i = 0; i < unfinished; ++i) {
    store::RunRecord run;
    run.id = "open-" + std::to_string(i);
    run.agent = "b";
    run.agent_dir = agent_dir;
    run.task = "t";
    run.status = i % 3 == 0 ? store::RunStatus::kWaiting : store::RunStatus::kRunning;
    if (run.status == store::RunStatus::kWaiting) run.waiting = "approval";
    run.created_at = now;
    run.updated_at = now;
    if (Status s = runtime.store->CreateRun(run); !s.ok()) Die("create run", s);
  }
}

void BM_ScrapeMetricsOverHttp(benchmark::State& state) {
  size_t bytes = 0;
  for (auto _ : state) {
    auto res = g_fixture->client->Get("/metrics");
    if (!res || res->status != 200) {
      state.SkipWithError("scrape failed");
      break;
    }
    bytes = res->body.size();
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ScrapeMetricsOverHttp)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RenderInProcess(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(g_fixture->runtime->metrics->RenderPrometheus());
  }
}
BENCHMARK(BM_RenderInProcess)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_HealthzOverHttp(benchmark::State& state) {
  for (auto _ : state) {
    auto res = g_fixture->client->Get("/healthz");
    if (!res || res->status != 200) {
      state.SkipWithError("healthz failed");
      break;
    }
  }
}
BENCHMARK(BM_HealthzOverHttp)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  const int runs = argc > 2 && argv[2][0] != '-' ? std::atoi(argv[2]) : 200;
  const int unfinished = argc > 3 && argv[3][0] != '-' ? std::atoi(argv[3]) : 20000;
  int skip = 1 + (argc > 1 && argv[1][0] != '-') + (argc > 2 && argv[2][0] != '-') +
             (argc > 3 && argv[3][0] != '-');
  if (dir.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "mend-serve-bench-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) return 1;
    dir = pattern;
  }
  Env env = Env::Default();
  ConfigSources sources;
  sources.flags["home"] = dir + "/home";
  auto config = LoadConfig(sources, *env.fs);
  if (!config.ok()) Die("config", config.status());
  app::RuntimeOptions options;
  std::vector<llm::ScriptedStep> steps(1);
  steps[0].text = "done";
  steps[0].input_tokens = 120;
  steps[0].output_tokens = 12;
  options.provider = std::make_unique<llm::ScriptedProvider>(steps);
  options.event_log = app::EventLog::kNone;
  options.caller_dir = dir;
  auto runtime = app::OpenRuntime(*config, env, std::move(options));
  if (!runtime.ok()) Die("runtime", runtime.status());
  Fixture fixture;
  fixture.runtime = *std::move(runtime);
  Seed(*fixture.runtime, dir, runs, unfinished);
  server::ServerOptions server_options;
  server_options.port = 0;
  auto server = server::Server::Create(*fixture.runtime, server_options);
  if (!server.ok()) Die("server", server.status());
  fixture.server = *std::move(server);
  if (Status s = fixture.server->Start(); !s.ok()) Die("start", s);
  fixture.client = std::make_unique<httplib::Client>("127.0.0.1", fixture.server->port());
  fixture.client->set_keep_alive(true);
  g_fixture = &fixture;

  std::vector<char*> rest = {argv[0]};
  for (int i = skip; i < argc; ++i) rest.push_back(argv[i]);
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fixture.client.reset();
  fixture.server->Stop();
  fixture.server.reset();
  fixture.runtime.reset();
  std::filesystem::remove_all(dir);
  return 0;
}
