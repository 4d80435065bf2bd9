// Replicas on one PostgreSQL: the same number of concurrent runs saving durable checkpoints from
// one process, then spread over several processes (replicas, each its own store and pool), against
// the same server in the same run. bench/run_store_pg_replicas_bench prints the table.
//
//   mend_store_pg_replicas_bench URL [RUNS STEPS PAYLOAD_BYTES POOL_SIZE REPLICAS]
//
// RUNS (default 300) runs in all, STEPS (100) saves each of one PAYLOAD_BYTES (4096) message;
// POOL_SIZE (4) connections per process. The first workload runs every run in one process; the
// second gives each of REPLICAS (3) processes RUNS / REPLICAS runs, which it claims as its own
// lease holder before the clock starts. Prints one JSON object on stdout; progress and errors go
// to stderr. Exit status 1 on any failed call.

#include <sys/wait.h>
#include <unistd.h>

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

constexpr char kSchema[] = "mend_bench_replicas";

struct Args {
  std::string url;
  int runs = 300;
  int steps = 100;
  size_t payload_bytes = 4096;
  int pool_size = 4;
  int replicas = 3;
};

[[noreturn]] void Die(const std::string& what, const Status& status) {
  std::fprintf(stderr, "store_pg_replicas_bench: %s: %s\n", what.c_str(),
               status.ToString().c_str());
  std::_Exit(1);
}

std::unique_ptr<CheckpointStore> Open(const Args& a) {
  PostgresStoreOptions options;
  options.url = a.url;
  options.schema = kSchema;
  options.pool_size = a.pool_size;
  options.local = LocalLeaseHolder("bench");
  Result<std::unique_ptr<CheckpointStore>> store =
      OpenPostgresStore(options, *SystemClock::Default());
  if (!store.ok()) Die("open " + MaskPostgresUrl(a.url), store.status());
  return std::move(store).value();
}

Checkpoint MakeCheckpoint(int run, int step, size_t bytes) {
  std::string head = "run " + std::to_string(run) + " step " + std::to_string(step) + " ";
  Checkpoint cp;
  cp.step = step;
  cp.new_messages = {head + std::string(bytes > head.size() ? bytes - head.size() : 0, 'x')};
  cp.state =
      R"({"usage":{"input_tokens":1200,"output_tokens":300},"step":)" + std::to_string(step) + "}";
  return cp;
}

void CreateRuns(const Args& a) {
  bench::ExecOrDie(a.url, std::string("DROP SCHEMA IF EXISTS ") + kSchema + " CASCADE");
  std::unique_ptr<CheckpointStore> store = Open(a);
  for (int r = 0; r < a.runs; ++r) {
    RunRecord run;
    run.id = "run-" + std::to_string(r);
    run.agent = "bench";
    run.task = "benchmark";
    Status s = store->CreateRun(run);
    if (!s.ok()) Die("create " + run.id, s);
  }
}

// One process's share: claims runs [first, first + count) as this process, waits for a byte on
// `start_fd`, saves STEPS checkpoints into each run from a thread per run, and writes every
// save's latency in ms (doubles) to `out_fd`.
void SaveShare(const Args& a, int first, int count, int start_fd, int out_fd) {
  std::unique_ptr<CheckpointStore> store = Open(a);
  const LeaseHolder holder = LocalLeaseHolder("replica-" + std::to_string(first));
  std::vector<Lease> leases;
  for (int r = first; r < first + count; ++r) {
    Result<Lease> lease = store->Claim("run-" + std::to_string(r), holder, std::chrono::hours(1));
    if (!lease.ok()) Die("claim", lease.status());
    leases.push_back(*lease);
  }
  std::vector<std::vector<double>> latencies(static_cast<size_t>(count));
  std::barrier ready(count + 1);
  std::barrier go(count + 1);
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      const Lease& lease = leases[static_cast<size_t>(i)];
      std::vector<Checkpoint> cps;
      for (int s = 1; s <= a.steps; ++s) {
        cps.push_back(MakeCheckpoint(first + i, s, a.payload_bytes));
      }
      Status warm = store->GetRun(lease.run_id).status();  // opens the pool's connections
      if (!warm.ok()) Die("warm up", warm);
      ready.arrive_and_wait();
      go.arrive_and_wait();
      for (const Checkpoint& cp : cps) {
        auto t0 = steady_clock::now();
        Status s = store->Save(lease, cp, {});
        if (!s.ok()) Die("save", s);
        latencies[static_cast<size_t>(i)].push_back(Millis(steady_clock::now() - t0).count());
      }
    });
  }
  ready.arrive_and_wait();
  char byte = 0;
  if (read(start_fd, &byte, 1) != 1) Die("start", InternalError("no start signal"));
  go.arrive_and_wait();
  for (std::thread& t : threads) t.join();
  for (const std::vector<double>& l : latencies) {
    const char* p = reinterpret_cast<const char*>(l.data());
    size_t left = l.size() * sizeof(double);
    while (left > 0) {
      ssize_t n = write(out_fd, p, left);
      if (n <= 0) Die("write", InternalError("cannot report latencies"));
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
}

// Runs the workload in `processes` processes (forked: each opens its own store), started together
// once all have claimed their runs. Returns {"processes","saves_per_s","p50_ms","p99_ms",...}.
std::string Workload(const Args& a, int processes) {
  CreateRuns(a);
  const bench::PgCounters before = bench::SettledCounters(a.url);
  struct Child {
    pid_t pid;
    int start_fd;
    int out_fd;
  };
  std::vector<Child> children;
  const int share = a.runs / processes;
  for (int p = 0; p < processes; ++p) {
    int start[2];
    int out[2];
    if (pipe(start) != 0 || pipe(out) != 0) Die("pipe", InternalError("pipe failed"));
    const int first = p * share;
    const int count = p == processes - 1 ? a.runs - first : share;
    pid_t pid = fork();
    if (pid < 0) Die("fork", InternalError("fork failed"));
    if (pid == 0) {
      close(start[1]);
      close(out[0]);
      SaveShare(a, first, count, start[0], out[1]);
      std::_Exit(0);
    }
    close(start[0]);
    close(out[1]);
    children.push_back({pid, start[1], out[0]});
  }
  // Every child has claimed its runs and warmed its pool before it reads its start byte; the
  // ones that are not there yet only delay their own first save, which the clock below counts.
  auto t0 = steady_clock::now();
  for (const Child& c : children) {
    if (write(c.start_fd, "g", 1) != 1) Die("start", InternalError("cannot start a replica"));
  }
  std::vector<double> all;
  for (const Child& c : children) {
    std::vector<char> bytes;
    char buf[65536];
    ssize_t n;
    while ((n = read(c.out_fd, buf, sizeof buf)) > 0) bytes.insert(bytes.end(), buf, buf + n);
    const double* d = reinterpret_cast<const double*>(bytes.data());
    all.insert(all.end(), d, d + bytes.size() / sizeof(double));
  }
  const double seconds = std::chrono::duration<double>(steady_clock::now() - t0).count();
  for (const Child& c : children) {
    int status = 0;
    waitpid(c.pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      Die("replica", InternalError("a replica process failed"));
    }
    close(c.start_fd);
    close(c.out_fd);
  }
  const bench::PgCounters after = bench::SettledCounters(a.url);
  bench::ExecOrDie(a.url, std::string("DROP SCHEMA IF EXISTS ") + kSchema + " CASCADE");
  if (static_cast<int>(all.size()) != a.runs * a.steps) {
    Die("replicas", InternalError("some saves were not reported"));
  }
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(all.size()));
    return all[std::min(all.size() - 1, i)];
  };
  const double saves = static_cast<double>(all.size());
  char text[512];
  std::snprintf(text, sizeof text,
                R"({"processes":%d,"saves_per_s":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,%s})", processes,
                saves / seconds, pct(50), pct(99), bench::PerSave(before, after, saves).c_str());
  return text;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: mend_store_pg_replicas_bench URL [RUNS STEPS PAYLOAD POOL_SIZE "
                 "REPLICAS]\n");
    return 2;
  }
  Args a;
  a.url = argv[1];
  auto arg = [&](int i, auto& field) {
    if (argc > i) field = static_cast<std::decay_t<decltype(field)>>(std::atoll(argv[i]));
  };
  arg(2, a.runs), arg(3, a.steps), arg(4, a.payload_bytes), arg(5, a.pool_size);
  arg(6, a.replicas);
  if (a.runs < 1 || a.steps < 1 || a.pool_size < 1 || a.replicas < 1 || a.replicas > a.runs) {
    std::fprintf(stderr, "store_pg_replicas_bench: invalid workload\n");
    return 2;
  }
  const std::string settings = bench::ServerSettings(a.url);
  std::fprintf(stderr, "mend: %d runs x %d steps in 1 process, pool of %d\n", a.runs, a.steps,
               a.pool_size);
  const std::string one = Workload(a, 1);
  std::fprintf(stderr, "mend: %d runs x %d steps in %d processes, pool of %d each\n", a.runs,
               a.steps, a.replicas, a.pool_size);
  const std::string many = Workload(a, a.replicas);
  std::printf("{\"settings\":%s,\"runs\":%d,\"steps\":%d,\"one\":%s,\"replicas\":%s}\n",
              settings.c_str(), a.runs, a.steps, one.c_str(), many.c_str());
  return 0;
}

}  // namespace
}  // namespace mend::store

int main(int argc, char** argv) { return mend::store::Main(argc, argv); }
