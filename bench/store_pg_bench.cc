// Durable checkpoint saves against the PostgreSQL CheckpointStore, beside a bare libpq insert +
// commit loop on the same server in the same run; bench/run_store_pg_bench prints the table, with
// LangGraph.js's PostgreSQL checkpointer beside it.
//
//   mend_store_pg_bench URL [RUNS STEPS PAYLOAD_BYTES POOL_SIZE]
//
// URL names a database the benchmark may create schemas in (mend_bench_*). The server should run
// with fsync=on and synchronous_commit=on, its data on the disk being measured; the settings it
// ran with are part of the output. POOL_SIZE is the store's pool (default 4, what MEND_STORE
// opens); the concurrent workload also runs with a pool of RUNS connections, one per run. Prints
// one JSON object on stdout; progress and errors go to stderr. Exit status 1 on any failed call.

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/store_pg_bench_refs.h"
#include "mend/base/clock.h"
#include "mend/store/postgres_store.h"
#include "mend/store/sqlite_store.h"  // LocalLeaseHolder

namespace mend::store {
namespace {

using Millis = std::chrono::duration<double, std::milli>;
using std::chrono::steady_clock;

struct Args {
  std::string url;
  int runs = 100;
  int steps = 100;
  size_t payload_bytes = 4096;
  int pool_size = 4;
};

[[noreturn]] void Die(const std::string& what, const Status& status) {
  std::fprintf(stderr, "store_pg_bench: %s: %s\n", what.c_str(), status.ToString().c_str());
  std::exit(1);
}

void Check(const std::string& what, const Status& status) {
  if (!status.ok()) Die(what, status);
}

std::unique_ptr<CheckpointStore> Open(const Args& a, const std::string& schema, int pool_size) {
  PostgresStoreOptions options;
  options.url = a.url;
  options.schema = schema;
  options.pool_size = pool_size;
  options.local = LocalLeaseHolder("bench");
  Result<std::unique_ptr<CheckpointStore>> store =
      OpenPostgresStore(options, *SystemClock::Default());
  if (!store.ok()) Die("open " + MaskPostgresUrl(a.url), store.status());
  return std::move(store).value();
}

// The same message and state as the SQLite benchmark's.
Checkpoint MakeCheckpoint(int run, int step, size_t bytes) {
  std::string head = "run " + std::to_string(run) + " step " + std::to_string(step) + " ";
  Checkpoint cp;
  cp.step = step;
  cp.new_messages = {head + std::string(bytes > head.size() ? bytes - head.size() : 0, 'x')};
  cp.state =
      R"({"usage":{"input_tokens":1200,"output_tokens":300},"step":)" + std::to_string(step) + "}";
  return cp;
}

double Percentile(const std::vector<double>& sorted, double p) {
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size()));
  return sorted[std::min(sorted.size() - 1, i)];
}

// Creates RUNS runs and claims them with a store of its own, closed before the timed part so
// that their commits stay out of the counters.
std::vector<Lease> CreateAndClaim(const Args& a, const std::string& schema, int runs) {
  bench::ExecOrDie(a.url, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
  std::unique_ptr<CheckpointStore> store = Open(a, schema, a.pool_size);
  std::vector<Lease> leases;
  for (int r = 0; r < runs; ++r) {
    RunRecord run;
    run.id = "run-" + std::to_string(r);
    run.agent = "bench";
    run.task = "benchmark";
    Check("create " + run.id, store->CreateRun(run));
    Result<Lease> lease = store->Claim(run.id, LocalLeaseHolder("bench"), std::chrono::hours(1));
    if (!lease.ok()) Die("claim " + run.id, lease.status());
    leases.push_back(*lease);
  }
  return leases;
}

// RUNS threads, one run each, save STEPS checkpoints of one PAYLOAD message; every Save timed.
// Each thread first reads its run, which opens the pool's connections before the clock starts.
std::string Throughput(const Args& a, const std::string& schema, int pool_size) {
  std::vector<Lease> leases = CreateAndClaim(a, schema, a.runs);
  const bench::PgCounters before = bench::SettledCounters(a.url);
  std::unique_ptr<CheckpointStore> store = Open(a, schema, pool_size);
  std::vector<std::vector<double>> latencies(static_cast<size_t>(a.runs));
  std::barrier start(a.runs + 1);
  std::vector<std::thread> threads;
  for (int r = 0; r < a.runs; ++r) {
    threads.emplace_back([&, r] {
      const Lease& lease = leases[static_cast<size_t>(r)];
      std::vector<Checkpoint> cps;
      for (int s = 1; s <= a.steps; ++s) cps.push_back(MakeCheckpoint(r, s, a.payload_bytes));
      Check("warm up", store->GetRun(lease.run_id).status());
      start.arrive_and_wait();
      for (const Checkpoint& cp : cps) {
        auto t0 = steady_clock::now();
        Check("save", store->Save(lease, cp, {}));
        latencies[static_cast<size_t>(r)].push_back(Millis(steady_clock::now() - t0).count());
      }
    });
  }
  start.arrive_and_wait();
  auto t0 = steady_clock::now();
  for (std::thread& t : threads) t.join();
  double seconds = std::chrono::duration<double>(steady_clock::now() - t0).count();
  store.reset();
  const bench::PgCounters after = bench::SettledCounters(a.url);
  bench::ExecOrDie(a.url, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  double saves = static_cast<double>(all.size());
  char out[512];
  std::snprintf(out, sizeof out,
                R"({"pool_size":%d,"saves_per_s":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,%s})", pool_size,
                saves / seconds, Percentile(all, 50), Percentile(all, 99),
                bench::PerSave(before, after, saves).c_str());
  return out;
}

// One run alone, STEPS saves, beside one bare writer: the two take turns in blocks of kBlock, so
// that both see the same disk (this machine's fsync latency drifts over seconds). Returns the
// JSON members "single_run" and "bare_one".
std::string OneRunAlone(const Args& a) {
  constexpr int kBlock = 50;
  Lease lease = CreateAndClaim(a, "mend_bench_single", 1).front();
  bench::CreateBareTable(a.url);
  std::unique_ptr<CheckpointStore> store = Open(a, "mend_bench_single", a.pool_size);
  bench::BareWriter bare(a.url, "run-0", a.payload_bytes);
  Check("warm up", store->GetRun(lease.run_id).status());
  std::vector<double> mend_ms;
  std::vector<double> bare_ms;
  for (int first = 1; first <= a.steps; first += kBlock) {
    const int last = std::min(a.steps, first + kBlock - 1);
    for (int s = first; s <= last; ++s) {
      Checkpoint cp = MakeCheckpoint(0, s, a.payload_bytes);
      auto t0 = steady_clock::now();
      Check("save", store->Save(lease, cp, {}));
      mend_ms.push_back(Millis(steady_clock::now() - t0).count());
    }
    for (int s = first; s <= last; ++s) bare_ms.push_back(bare.Insert(s));
  }
  store.reset();
  bench::ExecOrDie(a.url, "DROP SCHEMA IF EXISTS mend_bench_single CASCADE");
  return "\"single_run\":{" + bench::LatencyFigures(std::move(mend_ms)) + "},\"bare_one\":{" +
         bench::LatencyFigures(std::move(bare_ms)) + "}";
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mend_store_pg_bench URL [RUNS STEPS PAYLOAD POOL_SIZE]\n");
    return 2;
  }
  Args a;
  a.url = argv[1];
  auto arg = [&](int i, auto& field) {
    if (argc > i) field = static_cast<std::decay_t<decltype(field)>>(std::atoll(argv[i]));
  };
  arg(2, a.runs), arg(3, a.steps), arg(4, a.payload_bytes), arg(5, a.pool_size);
  const std::string settings = bench::ServerSettings(a.url);
  const double round_trip = bench::RoundTripMs(a.url, 1000);
  std::fprintf(stderr, "mend: %d runs x %d steps, pool of %d\n", a.runs, a.steps, a.pool_size);
  const std::string throughput = Throughput(a, "mend_bench_throughput", a.pool_size);
  std::fprintf(stderr, "mend: %d runs x %d steps, pool of %d\n", a.runs, a.steps, a.runs);
  const std::string wide = Throughput(a, "mend_bench_wide", a.runs);
  std::fprintf(stderr, "bare libpq: %d connections x %d inserts\n", a.runs, a.steps);
  const std::string bare_many = bench::BareLibpqInserts(a.url, a.runs, a.steps, a.payload_bytes);
  // One writer's p50 wants more samples than one run's steps.
  Args single = a;
  single.steps = a.steps * 10;
  std::fprintf(stderr, "mend and bare libpq, taking turns: one run x %d steps\n", single.steps);
  const std::string one_run = OneRunAlone(single);
  bench::ExecOrDie(a.url, "DROP SCHEMA IF EXISTS mend_bench_ref CASCADE");
  std::printf(
      "{\"settings\":%s,\"round_trip_ms\":%.3f,\"throughput\":%s,\"throughput_wide\":%s,"
      "\"bare_many\":%s,%s}\n",
      settings.c_str(), round_trip, throughput.c_str(), wide.c_str(), bare_many.c_str(),
      one_run.c_str());
  return 0;
}

}  // namespace
}  // namespace mend::store

int main(int argc, char** argv) { return mend::store::Main(argc, argv); }
