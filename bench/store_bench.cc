// Durable checkpoint workloads against the SQLite CheckpointStore; bench/run_store_bench prints
// the figures beside LangGraph.js's SQLite checkpointer measured in the same run, and the pages of
// `mend pending` beside the full ListRuns of unfinished runs.
//
//   mend_store_bench DIR [RUNS STEPS PAYLOAD_BYTES LONG_RUN_STEPS LONG_PAYLOAD_BYTES
//                         PENDING_RUNS PENDING_UNFINISHED]
//
// DIR must be on the disk being measured (not tmpfs): every Save waits for an fsync. Prints one
// JSON object on stdout; progress and errors go to stderr. Exit status 1 on any failed call.

#include <sqlite3.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench/store_bench_refs.h"
#include "mend/base/clock.h"
#include "mend/store/sqlite_store.h"
#include "store/sqlite_store_impl.h"

namespace mend::store {
namespace {

using Millis = std::chrono::duration<double, std::milli>;
using std::chrono::steady_clock;

struct Args {
  std::string dir;
  int runs = 100;
  int steps = 100;
  size_t payload_bytes = 4096;
  int long_run_steps = 500;
  size_t long_payload_bytes = 1024;
  int pending_runs = 100000;
  int pending_unfinished = 1000;
};

[[noreturn]] void Die(const std::string& what, const Status& status) {
  std::fprintf(stderr, "store_bench: %s: %s\n", what.c_str(), status.ToString().c_str());
  std::exit(1);
}

void Check(const std::string& what, const Status& status) {
  if (!status.ok()) Die(what, status);
}

std::unique_ptr<CheckpointStore> Open(const std::string& path) {
  SqliteStoreOptions options;
  options.path = path;
  options.local = LocalLeaseHolder("bench");
  // MEND_BENCH_WAL_CHECKPOINT_PAGES: SqliteStoreOptions::wal_checkpoint_pages (0: SQLite's own
  // checkpoint inside the commit), to compare the two.
  if (const char* pages = std::getenv("MEND_BENCH_WAL_CHECKPOINT_PAGES"); pages != nullptr) {
    options.wal_checkpoint_pages = std::atoll(pages);
  }
  Result<std::unique_ptr<CheckpointStore>> store =
      OpenSqliteStore(options, *SystemClock::Default());
  if (!store.ok()) Die("open " + path, store.status());
  return std::move(store).value();
}

// The same message shape as the LangGraph peer: a short header padded to `bytes`.
std::string Payload(int run, int step, size_t bytes) {
  std::string head = "run " + std::to_string(run) + " step " + std::to_string(step) + " ";
  return head + std::string(bytes > head.size() ? bytes - head.size() : 0, 'x');
}

Checkpoint MakeCheckpoint(int run, int step, size_t bytes) {
  Checkpoint cp;
  cp.step = step;
  cp.new_messages = {Payload(run, step, bytes)};
  cp.state =
      R"({"usage":{"input_tokens":1200,"output_tokens":300},"step":)" + std::to_string(step) + "}";
  return cp;
}

double Percentile(const std::vector<double>& sorted, double p) {
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size()));
  return sorted[std::min(sorted.size() - 1, i)];
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

Lease CreateAndClaim(CheckpointStore& store, const std::string& id) {
  RunRecord run;
  run.id = id;
  run.agent = "bench";
  run.task = "benchmark";
  Check("create " + id, store.CreateRun(run));
  Result<Lease> lease = store.Claim(id, LocalLeaseHolder("bench"), std::chrono::hours(1));
  if (!lease.ok()) Die("claim " + id, lease.status());
  return *lease;
}

// RUNS threads, one run each, save STEPS checkpoints of one PAYLOAD message; every Save timed.
std::string Throughput(const Args& a, const std::string& file = "throughput.db") {
  std::unique_ptr<CheckpointStore> store = Open(a.dir + "/" + file);
  std::vector<Lease> leases;
  for (int r = 0; r < a.runs; ++r)
    leases.push_back(CreateAndClaim(*store, "run-" + std::to_string(r)));
  auto* impl = dynamic_cast<internal::SqliteStore*>(store.get());
  internal::SqliteStore::WriteStats before = impl->write_stats();
  std::vector<std::vector<double>> latencies(static_cast<size_t>(a.runs));
  std::barrier start(a.runs + 1);
  std::vector<std::thread> threads;
  // The checkpoints are made before the cost is read; the saves' own writes (WAL frames and the
  // checkpoints that copy them into the file) and CPU are what it measures.
  std::barrier made(a.runs + 1);
  for (int r = 0; r < a.runs; ++r) {
    threads.emplace_back([&, r] {
      std::vector<Checkpoint> cps;
      for (int s = 1; s <= a.steps; ++s) cps.push_back(MakeCheckpoint(r, s, a.payload_bytes));
      made.arrive_and_wait();
      start.arrive_and_wait();
      for (const Checkpoint& cp : cps) {
        auto t0 = steady_clock::now();
        Check("save", store->Save(leases[static_cast<size_t>(r)], cp, {}));
        latencies[static_cast<size_t>(r)].push_back(Millis(steady_clock::now() - t0).count());
      }
    });
  }
  made.arrive_and_wait();
  const bench::ProcessCost cost = bench::ProcessCost::Now();
  start.arrive_and_wait();
  auto t0 = steady_clock::now();
  for (std::thread& t : threads) t.join();
  double seconds = std::chrono::duration<double>(steady_clock::now() - t0).count();
  internal::SqliteStore::WriteStats after = impl->write_stats();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  double saves = static_cast<double>(all.size());
  double commits = static_cast<double>(after.transactions - before.transactions);
  const std::string cost_fields = bench::CostFields(cost, saves);
  char out[384];
  std::snprintf(out, sizeof out,
                R"({"saves_per_s":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,"saves_per_commit":%.1f,%s})",
                saves / seconds, Percentile(all, 50), Percentile(all, 99), saves / commits,
                cost_fields.c_str());
  return out;
}

int64_t FileBytes(const std::string& path) {
  int64_t total = 0;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ec;
    auto size = std::filesystem::file_size(path + suffix, ec);
    if (!ec) total += static_cast<int64_t>(size);
  }
  return total;
}

// Folds the WAL into the database file, as LangGraph's side does before measuring.
void CheckpointWal(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK ||
      sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr) != SQLITE_OK) {
    Die("wal_checkpoint " + path, InternalError(sqlite3_errmsg(db)));
  }
  sqlite3_close(db);
}

// One run of LONG_RUN_STEPS steps, one LONG_PAYLOAD message each: bytes on disk, then the cost
// of resuming it (Load of the newest checkpoint, median of several).
std::string DiskAndResume(const Args& a) {
  std::string path = a.dir + "/long.db";
  std::unique_ptr<CheckpointStore> store = Open(path);
  Lease lease = CreateAndClaim(*store, "long");
  for (int s = 1; s <= a.long_run_steps; ++s) {
    Check("save", store->Save(lease, MakeCheckpoint(0, s, a.long_payload_bytes), {}));
  }
  store.reset();  // the last connection closing folds the WAL in
  CheckpointWal(path);
  int64_t disk = FileBytes(path);
  int64_t payload =
      static_cast<int64_t>(a.long_run_steps) * static_cast<int64_t>(a.long_payload_bytes);
  store = Open(path);
  std::vector<double> loads;
  for (int i = 0; i < 21; ++i) {
    auto t0 = steady_clock::now();
    Result<RunSnapshot> snap = store->Load("long");
    loads.push_back(Millis(steady_clock::now() - t0).count());
    if (!snap.ok()) Die("load", snap.status());
    if (snap->messages.size() != static_cast<size_t>(a.long_run_steps)) {
      Die("load", DataLossError("wrong message count"));
    }
  }
  char out[256];
  std::snprintf(out, sizeof out, R"({"disk_bytes":%lld,"payload_bytes":%lld,"resume_ms":%.3f})",
                static_cast<long long>(disk), static_cast<long long>(payload), Median(loads));
  return out;
}

constexpr int kAgents = 10;  // the bulk runs belong to bench-0 .. bench-9
constexpr const char* kUnfinished[] = {"running", "waiting", "failed", "quarantined"};

// Fills `path` with `total` runs straight through SQL (setup speed only; the store reads them
// as its own rows), `unfinished` of them spread evenly left unfinished, their statuses and agents
// taking turns.
void BulkInsertRuns(const std::string& path, int total, int unfinished) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, "PRAGMA synchronous = OFF; BEGIN", nullptr, nullptr, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT INTO runs (id, agent, agent_dir, task, status, step, message_count, "
                     "attempts, waiting, parent_id, parent_step, metadata, created_at, updated_at, "
                     "epoch) VALUES (?1, ?4, 'agents/bench', 'a task', ?2, 12, 24, 0, '', '', "
                     "0, '{}', ?3, ?3, 1)",
                     -1, &stmt, nullptr);
  int every = unfinished > 0 ? std::max(1, total / unfinished) : total + 1;
  int left = 0;  // unfinished runs so far: their status and agent take turns
  for (int i = 0; i < total; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "run-%08d", i);
    const bool done = i % every != 0;
    std::string agent = "bench-" + std::to_string((done ? i : left) % kAgents);
    sqlite3_bind_text(stmt, 1, id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(stmt, 2, done ? "completed" : kUnfinished[left++ % 4], -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 3, 1'700'000'000'000'000'000LL + i * 1'000'000LL);
    sqlite3_bind_text(stmt, 4, agent.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(stmt) != SQLITE_DONE) Die("bulk insert", InternalError(sqlite3_errmsg(db)));
    sqlite3_reset(stmt);
  }
  sqlite3_finalize(stmt);
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(db);
}

// The median time of `calls` ListPending(query); the last page is returned through `out`.
double TimePage(CheckpointStore& store, const PendingQuery& query, int calls, PendingPage& out) {
  std::vector<double> times;
  for (int i = 0; i < calls; ++i) {
    auto t0 = steady_clock::now();
    Result<PendingPage> page = store.ListPending(query);
    times.push_back(Millis(steady_clock::now() - t0).count());
    if (!page.ok()) Die("pending page", page.status());
    out = *std::move(page);
  }
  return Median(times);
}

// ListRuns(unfinished) over PENDING_RUNS runs of which `unfinished` are not completed (the whole
// Pending() list), next to the first page of `mend pending` (20 runs, newest first) without a
// filter, filtered by status and by agent, and a page from the middle of the list.
std::string Pending(const Args& a, int unfinished, const std::string& path) {
  Open(path).reset();  // creates the tables
  BulkInsertRuns(path, a.pending_runs, unfinished);
  std::unique_ptr<CheckpointStore> store = Open(path);
  std::vector<double> calls;
  size_t listed = 0;
  for (int i = 0; i < 11; ++i) {
    auto t0 = steady_clock::now();
    Result<std::vector<RunRecord>> runs = store->ListRuns(ListOptions{});
    calls.push_back(Millis(steady_clock::now() - t0).count());
    if (!runs.ok()) Die("list", runs.status());
    listed = runs->size();
  }
  constexpr int kPageCalls = 51;
  PendingPage page;
  PendingQuery first;  // limit 20, no filter
  double page_ms = TimePage(*store, first, kPageCalls, page);
  const int64_t total = page.total;
  if (page.runs.size() != std::min<size_t>(20, listed) || total != static_cast<int64_t>(listed)) {
    Die("pending page", InternalError("the first page does not match ListRuns"));
  }
  PendingQuery failed;
  failed.statuses = {RunStatus::kFailed};
  double status_ms = TimePage(*store, failed, kPageCalls, page);
  const int64_t status_total = page.total;
  PendingQuery agent;
  agent.agent = "bench-3";
  double agent_ms = TimePage(*store, agent, kPageCalls, page);
  const int64_t agent_total = page.total;
  // A page from the middle: after the run at half the list (in ListRuns order, oldest first).
  PendingQuery middle;
  Result<std::vector<RunRecord>> all = store->ListRuns(ListOptions{});
  if (!all.ok() || all->empty()) Die("list", all.status());
  const RunRecord& half = (*all)[all->size() / 2];
  middle.before = RunCursor{half.created_at, half.id};
  double middle_ms = TimePage(*store, middle, kPageCalls, page);
  char out[512];
  std::snprintf(out, sizeof out,
                R"({"runs":%d,"unfinished":%zu,"ms":%.3f,"page_ms":%.3f,"page_status_ms":%.3f,)"
                R"("status_matching":%lld,"page_agent_ms":%.3f,"agent_matching":%lld,)"
                R"("page_middle_ms":%.3f})",
                a.pending_runs, listed, Median(calls), page_ms, status_ms,
                static_cast<long long>(status_total), agent_ms, static_cast<long long>(agent_total),
                middle_ms);
  return out;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: mend_store_bench DIR [RUNS STEPS PAYLOAD LONG_STEPS LONG_PAYLOAD "
                 "PENDING_RUNS PENDING_UNFINISHED]\n");
    return 2;
  }
  Args a;
  a.dir = argv[1];
  auto arg = [&](int i, auto& field) {
    if (argc > i) field = static_cast<std::decay_t<decltype(field)>>(std::atoll(argv[i]));
  };
  arg(2, a.runs), arg(3, a.steps), arg(4, a.payload_bytes), arg(5, a.long_run_steps);
  arg(6, a.long_payload_bytes), arg(7, a.pending_runs), arg(8, a.pending_unfinished);
  std::filesystem::create_directories(a.dir);
  for (const char* db : {"throughput.db", "single.db", "long.db", "pending.db", "pending_all.db",
                         "bare.db", "raw.log"}) {
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::error_code ec;
      std::filesystem::remove(a.dir + "/" + db + suffix, ec);
    }
  }
  std::string throughput = Throughput(a);
  // The references of the same run: the disk's limit for many writers, SQLite's for one.
  std::string raw = bench::RawGroupCommit(a.dir + "/raw.log", a.runs, a.steps, a.payload_bytes);
  Args single = a;
  single.runs = 1;
  single.steps = a.steps * 10;  // one writer's p50 wants more samples than one run's steps
  std::string one_run = Throughput(single, "single.db");
  std::string bare = bench::BareSqliteInserts(a.dir + "/bare.db", single.steps, a.payload_bytes);
  std::string disk = DiskAndResume(a);
  std::string pending = Pending(a, a.pending_unfinished, a.dir + "/pending.db");
  std::string pending_all = Pending(a, a.pending_runs, a.dir + "/pending_all.db");
  std::printf(
      "{\"throughput\":%s,\"raw_group_commit\":%s,\"single_run\":%s,\"bare_sqlite\":%s,"
      "\"disk\":%s,\"pending\":%s,\"pending_all\":%s}\n",
      throughput.c_str(), raw.c_str(), one_run.c_str(), bare.c_str(), disk.c_str(), pending.c_str(),
      pending_all.c_str());
  return 0;
}

}  // namespace
}  // namespace mend::store

int main(int argc, char** argv) { return mend::store::Main(argc, argv); }
