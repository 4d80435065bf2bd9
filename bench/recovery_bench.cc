// Recovery at scale (docs/heal.md); bench/run_recovery_bench prints the figures beside their
// goals and the references measured in the same run:
//   - one Recovery::Tick() over RUNS runs of which ELIGIBLE are due (failed, retryable, next
//     attempt in the past), next to a bare ListRuns(unfinished) over the same SQLite store;
//   - Claim/Release per second with 3 replicas (3 store handles, 3 lease holders) on SQLite and,
//     when a URL is given, PostgreSQL, next to the same loop with 1 replica.
//
//   mend_recovery_bench DIR [RUNS ELIGIBLE OTHER_UNFINISHED CLAIM_RUNS SQLITE_CLAIM_RUNS]
//                       [--postgres URL]
//
// DIR must be on the disk being measured (not tmpfs). Without --postgres the URL comes from
// MEND_TEST_POSTGRES_URL; with neither the PostgreSQL figures are null. Prints one JSON object on
// stdout; progress and errors go to stderr. Exit status 1 on any failed call.

#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/recovery_bench_store.h"
#include "mend/base/clock.h"
#include "mend/heal/recovery.h"
#include "mend/store/postgres_store.h"
#include "mend/store/sqlite_store.h"

namespace mend::bench {
namespace {

using Millis = std::chrono::duration<double, std::milli>;
using std::chrono::steady_clock;
using store::CheckpointStore;
using store::RunRecord;
using store::RunStatus;

struct Args {
  std::string dir;
  int runs = 100000;
  int eligible = 10000;
  int other_unfinished =
      90000;              // unfinished but not due: backoff, waiting, non-retryable, quarantined
  int claim_runs = 3000;  // PostgreSQL
  int sqlite_claim_runs = 1000;  // SQLite: every Claim and Release waits for an fsync
  std::string postgres_url;
};

[[noreturn]] void Die(const std::string& what, const Status& status) {
  std::fprintf(stderr, "recovery_bench: %s: %s\n", what.c_str(), status.ToString().c_str());
  std::exit(1);
}

void Check(const std::string& what, const Status& status) {
  if (!status.ok()) Die(what, status);
}

std::unique_ptr<CheckpointStore> OpenSqlite(const std::string& path,
                                            const store::LeaseHolder& local) {
  store::SqliteStoreOptions options;
  options.path = path;
  options.local = local;
  Result<std::unique_ptr<CheckpointStore>> s = OpenSqliteStore(options, *SystemClock::Default());
  if (!s.ok()) Die("open " + path, s.status());
  return std::move(s).value();
}

std::unique_ptr<CheckpointStore> OpenPostgres(const std::string& url,
                                              const store::LeaseHolder& local) {
  store::PostgresStoreOptions options;
  options.url = url;
  options.schema = "mend_recovery_bench";
  options.pool_size = 2;
  options.local = local;
  Result<std::unique_ptr<CheckpointStore>> s = OpenPostgresStore(options, *SystemClock::Default());
  if (!s.ok()) Die("open PostgreSQL " + store::MaskPostgresUrl(url), s.status());
  return std::move(s).value();
}

// The kinds of run in the tick workload; only kDue is resumed.
enum class Kind { kCompleted, kDue, kBackoff, kWaiting, kNonRetryable, kQuarantined };

RunRecord MakeRun(int i, Kind kind, Time now) {
  RunRecord run;
  char id[32];
  std::snprintf(id, sizeof id, "run-%08d", i);
  run.id = id;
  run.agent = "bench";
  run.agent_dir = "agents/bench";
  run.task = "summarise the incident report and file a ticket";
  run.metadata = R"({"kind":"send"})";
  run.created_at = now - std::chrono::hours(24) + std::chrono::milliseconds(i);
  store::RunError transient{"INTERNAL", "tool http_get failed: connection reset", "transient",
                            true};
  switch (kind) {
    case Kind::kCompleted:
      run.status = RunStatus::kCompleted;
      break;
    case Kind::kDue:
      run.status = RunStatus::kFailed;
      run.attempts = 1 + i % 3;
      run.next_attempt_at = now - std::chrono::minutes(1);
      run.last_error = transient;
      break;
    case Kind::kBackoff:
      run.status = RunStatus::kFailed;
      run.attempts = 1 + i % 5;
      run.next_attempt_at = now + std::chrono::hours(1);
      run.last_error = transient;
      break;
    case Kind::kWaiting:
      run.status = RunStatus::kWaiting;
      run.waiting = i % 2 == 0 ? "approval" : "question";
      break;
    case Kind::kNonRetryable:
      run.status = RunStatus::kFailed;
      run.last_error = store::RunError{"MEND_RUN_NO_PROGRESS", "the same tool call kept failing",
                                       "permanent", false};
      break;
    case Kind::kQuarantined:
      run.status = RunStatus::kQuarantined;
      run.attempts = 10;
      run.last_error = transient;
      break;
  }
  return run;
}

// RUNS kinds shuffled with a fixed seed: ELIGIBLE due, OTHER_UNFINISHED split 4:3:2:1 between
// backoff, waiting, non-retryable and quarantined, the rest completed.
std::vector<Kind> Mix(const Args& a) {
  std::vector<Kind> kinds(static_cast<size_t>(a.runs), Kind::kCompleted);
  size_t k = 0;
  auto fill = [&](int n, Kind kind) {
    for (int i = 0; i < n && k < kinds.size(); ++i) kinds[k++] = kind;
  };
  int o = a.other_unfinished;
  fill(a.eligible, Kind::kDue);
  fill(o * 4 / 10, Kind::kBackoff);
  fill(o * 3 / 10, Kind::kWaiting);
  fill(o * 2 / 10, Kind::kNonRetryable);
  fill(o - o * 4 / 10 - o * 3 / 10 - o * 2 / 10, Kind::kQuarantined);
  std::shuffle(kinds.begin(), kinds.end(), std::mt19937(20240611));
  return kinds;
}

// Creates the runs through the public API from 64 threads, so group commit batches the fsyncs.
void Populate(CheckpointStore& s, const std::vector<Kind>& kinds, Time now) {
  constexpr int kThreads = 64;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = static_cast<size_t>(t); i < kinds.size(); i += kThreads) {
        Check("create run", s.CreateRun(MakeRun(static_cast<int>(i), kinds[i], now)));
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

// Resume returns at once, as if every run completed, without touching the store: what remains of
// a tick is the loop's own cost (listing, classifying, its bookkeeping writes).
class InstantDriver final : public heal::RunDriver {
 public:
  Result<agent::RunResult> Resume(const RunRecord& run) override {
    agent::RunResult result;
    result.run_id = run.id;
    result.status = RunStatus::kCompleted;
    return result;
  }
  Status ForkWithNote(const RunRecord&, const std::string&, const std::string&) override {
    return UnimplementedError("not used by the benchmark");
  }
};

double TimeList(CheckpointStore& s, size_t& listed) {
  auto t0 = steady_clock::now();
  Result<std::vector<RunRecord>> runs = s.ListRuns(store::ListOptions{});
  double ms = Millis(steady_clock::now() - t0).count();
  if (!runs.ok()) Die("list runs", runs.status());
  listed = runs->size();
  return ms;
}

// The store query a pass makes: up to `budget` candidates from the oldest, in pages of at most
// kMaxRecoveryPageSize, the first with the counts.
double TimeCandidates(CheckpointStore& s, size_t budget, size_t& listed) {
  store::RecoveryQuery query;
  query.now = SystemClock::Default()->Now();
  query.counting = store::RecoveryCounting::kInclude;
  listed = 0;
  auto t0 = steady_clock::now();
  while (listed < budget) {
    query.limit = std::min(budget - listed, store::kMaxRecoveryPageSize);
    Result<store::RecoveryPage> page = s.ListRecoveryCandidates(query);
    if (!page.ok()) Die("list recovery candidates", page.status());
    listed += page->runs.size();
    if (!page->next.has_value()) break;
    query.after = page->next;
    query.counting = store::RecoveryCounting::kOmit;
  }
  return Millis(steady_clock::now() - t0).count();
}

// The median and the minimum of `n` timings of `f`.
template <typename F>
std::pair<double, double> MedianMin(int n, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) ms.push_back(f());
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

std::string TickJson(const std::string& name, double ms, const heal::TickReport& r,
                     const CountingStore::Counts& c) {
  char out[640];
  std::snprintf(out, sizeof out,
                R"("%s":{"ms":%.3f,"resumed":%zu,"completed":%zu,"skipped_backoff":%d,)"
                R"("skipped_waiting":%d,"skipped_non_retryable":%d,"skipped_deferred":%d,)"
                R"("store_writes":%lld,"store_write_ms":%.3f,"store_reads":%lld,"list_ms":%.3f,)"
                R"("pages":%lld})",
                name.c_str(), ms, r.resumed.size(), r.completed.size(), r.skipped.backoff,
                r.skipped.waiting, r.skipped.non_retryable, r.skipped.deferred,
                static_cast<long long>(c.writes), c.write_ms, static_cast<long long>(c.reads),
                c.list_ms, static_cast<long long>(c.pages));
  return out;
}

std::unique_ptr<heal::Recovery> MakeRecovery(CountingStore& store, heal::RunDriver& driver,
                                             size_t max_runs_per_pass) {
  heal::RecoveryOptions options;
  options.store = &store;
  options.driver = &driver;
  options.clock = SystemClock::Default();
  options.max_runs_per_pass = max_runs_per_pass;
  Result<std::unique_ptr<heal::Recovery>> recovery = heal::Recovery::Create(std::move(options));
  if (!recovery.ok()) Die("create recovery", recovery.status());
  return std::move(recovery).value();
}

// `ticks` passes of `recovery`, each checked to resume `expected` runs; their JSON objects named
// prefix1, prefix2, ...
std::string Ticks(heal::Recovery& recovery, CountingStore& counted, const std::string& prefix,
                  int ticks, size_t expected) {
  std::string out;
  for (int i = 0; i < ticks; ++i) {
    counted.Reset();
    auto t0 = steady_clock::now();
    Result<heal::TickReport> report = recovery.Tick();
    double ms = Millis(steady_clock::now() - t0).count();
    if (!report.ok()) Die("tick", report.status());
    if (report->resumed.size() != expected) {
      Die("tick", InternalError("resumed " + std::to_string(report->resumed.size()) +
                                " runs, not " + std::to_string(expected)));
    }
    out += TickJson(prefix + std::to_string(i + 1), ms, *report, counted.counts()) + ",";
  }
  return out;
}

// Recovery writes nothing for a run that completes (a completed run is never listed again), and
// the driver leaves the runs failed, retryable and due, so every tick finds the same eligible runs
// and resumes them without a write: the loop alone. Two loops: one whose pass may take every
// eligible run (max_runs_per_pass = ELIGIBLE: one tick does what the whole sweep does), and one
// with the default bound, whose ticks go round the eligible runs a bound at a time.
std::string TickBench(const Args& a) {
  std::string path = a.dir + "/tick.db";
  Time now = SystemClock::Default()->Now();
  std::vector<Kind> kinds = Mix(a);
  std::unique_ptr<CheckpointStore> raw = OpenSqlite(path, store::LocalLeaseHolder("bench"));
  std::fprintf(stderr, "creating %d runs in %s\n", a.runs, path.c_str());
  Populate(*raw, kinds, now);
  raw.reset();  // reopen: the measured handle starts with a cold statement cache like a restart
  raw = OpenSqlite(path, store::LocalLeaseHolder("bench"));
  CountingStore counted(*raw);
  InstantDriver driver;
  const size_t eligible = static_cast<size_t>(a.eligible);
  const size_t bound = heal::RecoveryOptions{}.max_runs_per_pass;
  std::unique_ptr<heal::Recovery> whole = MakeRecovery(counted, driver, eligible);
  std::unique_ptr<heal::Recovery> bounded = MakeRecovery(counted, driver, bound);

  std::string out = "{" + Ticks(*whole, counted, "tick", 4, eligible);
  const int sweep = static_cast<int>((eligible + bound - 1) / bound);
  out += Ticks(*bounded, counted, "bounded", sweep, std::min(eligible, bound));

  size_t listed = 0, candidates = 0, page = 0;
  auto [list_ms, list_min] = MedianMin(10, [&] { return TimeList(*raw, listed); });
  auto [all_ms, all_min] =
      MedianMin(10, [&] { return TimeCandidates(*raw, eligible, candidates); });
  auto [page_ms, page_min] = MedianMin(10, [&] { return TimeCandidates(*raw, bound, page); });
  char tail[512];
  std::snprintf(tail, sizeof tail,
                R"("runs":%d,"eligible":%d,"bound":%zu,"sweep":%d,"listed":%zu,)"
                R"("list_ms_median":%.3f,"list_ms_min":%.3f,"candidates":%zu,)"
                R"("candidates_ms_median":%.3f,"candidates_ms_min":%.3f,"page":%zu,)"
                R"("page_ms_median":%.3f,"page_ms_min":%.3f})",
                a.runs, a.eligible, bound, sweep, listed, list_ms, list_min, candidates, all_ms,
                all_min, page, page_ms, page_min);
  return out + tail;
}

// The claim loop: each replica lists the unfinished runs, then goes through them in that order
// (as every recovery replica does), Claim → Release. kUnavailable is a conflict: another replica
// holds the run at that moment.
struct ReplicaCount {
  int64_t claims = 0;
  int64_t conflicts = 0;
};

// Replaces whatever runs the store holds (a reused PostgreSQL schema) with `runs` unleased ones.
void CreateClaimRuns(CheckpointStore& s, int runs) {
  Result<std::vector<RunRecord>> old = s.ListRuns(store::ListOptions{false, 0});
  if (!old.ok()) Die("list old runs", old.status());
  for (const RunRecord& run : *old) Check("delete " + run.id, s.DeleteRun(run.id));
  Time now = SystemClock::Default()->Now();
  for (int i = 0; i < runs; ++i) {
    RunRecord run = MakeRun(i, Kind::kCompleted, now);
    run.status = RunStatus::kRunning;
    Check("create run", s.CreateRun(run));
  }
}

// One replica's pass: list, then Claim → Release each run in the listed order.
ReplicaCount ReplicaLoop(CheckpointStore& s, const store::LeaseHolder& holder) {
  ReplicaCount c;
  Result<std::vector<RunRecord>> list = s.ListRuns(store::ListOptions{});
  if (!list.ok()) Die("list runs", list.status());
  for (const RunRecord& run : *list) {
    Result<store::Lease> lease = s.Claim(run.id, holder, std::chrono::minutes(5));
    if (!lease.ok() && lease.status().code() == StatusCode::kUnavailable) {
      ++c.conflicts;
      continue;
    }
    if (!lease.ok()) Die("claim " + run.id, lease.status());
    Check("release " + run.id, s.Release(*lease));
    ++c.claims;
  }
  return c;
}

std::string ClaimBench(
    const std::function<std::unique_ptr<CheckpointStore>(const store::LeaseHolder&)>& open,
    int runs, int replicas) {
  std::vector<store::LeaseHolder> holders;
  std::vector<std::unique_ptr<CheckpointStore>> stores;
  for (int r = 0; r < replicas; ++r) {
    std::string name = std::string("replica-") + static_cast<char>('a' + r);
    holders.push_back(store::LeaseHolder{name, "host-" + name, "", getpid()});
    stores.push_back(open(holders.back()));
  }
  CreateClaimRuns(*stores.front(), runs);
  std::vector<ReplicaCount> counts(static_cast<size_t>(replicas));
  std::barrier start(replicas + 1);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < static_cast<size_t>(replicas); ++r) {
    threads.emplace_back([&, r] {
      start.arrive_and_wait();
      counts[r] = ReplicaLoop(*stores[r], holders[r]);
    });
  }
  start.arrive_and_wait();
  auto t0 = steady_clock::now();
  for (std::thread& t : threads) t.join();
  double seconds = std::chrono::duration<double>(steady_clock::now() - t0).count();
  std::string per = "[";
  int64_t claims = 0, conflicts = 0;
  for (const ReplicaCount& c : counts) {
    claims += c.claims;
    conflicts += c.conflicts;
    if (per.size() > 1) per += ",";
    char one[64];
    std::snprintf(one, sizeof one, "%.1f", static_cast<double>(c.claims) / seconds);
    per += one;
  }
  char out[512];
  std::snprintf(out, sizeof out,
                R"({"replicas":%d,"runs":%d,"seconds":%.3f,"claims":%lld,"conflicts":%lld,)"
                R"("claims_per_s":%.1f,"per_replica_claims_per_s":%s]})",
                replicas, runs, seconds, static_cast<long long>(claims),
                static_cast<long long>(conflicts), static_cast<double>(claims) / seconds,
                per.c_str());
  return out;
}

Args Parse(int argc, char** argv) {
  Args a;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--postgres" && i + 1 < argc) {
      a.postgres_url = argv[++i];
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.empty()) {
    std::fprintf(stderr,
                 "usage: mend_recovery_bench DIR [RUNS ELIGIBLE OTHER_UNFINISHED CLAIM_RUNS "
                 "SQLITE_CLAIM_RUNS] [--postgres URL]\n");
    std::exit(2);
  }
  a.dir = positional[0];
  int* fields[] = {&a.runs, &a.eligible, &a.other_unfinished, &a.claim_runs, &a.sqlite_claim_runs};
  for (size_t i = 1; i < positional.size() && i <= 5; ++i) {
    *fields[i - 1] = std::atoi(positional[i].c_str());
  }
  if (a.postgres_url.empty()) {
    const char* env = std::getenv("MEND_TEST_POSTGRES_URL");
    if (env != nullptr) a.postgres_url = env;
  }
  return a;
}

void RemoveDb(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ec;
    std::filesystem::remove(path + suffix, ec);
  }
}

int Main(int argc, char** argv) {
  Args a = Parse(argc, argv);
  std::filesystem::create_directories(a.dir);
  RemoveDb(a.dir + "/tick.db");
  std::string tick = TickBench(a);
  auto sqlite = [&](int replicas) {
    std::string path = a.dir + "/claims" + std::to_string(replicas) + ".db";
    RemoveDb(path);
    std::fprintf(stderr, "SQLite claims, %d replica(s)\n", replicas);
    return ClaimBench([&](const store::LeaseHolder& h) { return OpenSqlite(path, h); },
                      a.sqlite_claim_runs, replicas);
  };
  std::string sqlite1 = sqlite(1), sqlite3 = sqlite(3);
  std::string pg1 = "null", pg3 = "null";
  if (!a.postgres_url.empty()) {
    auto pg = [&](int replicas) {
      std::fprintf(stderr, "PostgreSQL claims, %d replica(s)\n", replicas);
      return ClaimBench(
          [&](const store::LeaseHolder& h) { return OpenPostgres(a.postgres_url, h); },
          a.claim_runs, replicas);
    };
    pg1 = pg(1);
    pg3 = pg(3);
  }
  std::printf(R"({"tick":%s,"claims":{"sqlite_1":%s,"sqlite_3":%s,"postgres_1":%s,)"
              R"("postgres_3":%s}})"
              "\n",
              tick.c_str(), sqlite1.c_str(), sqlite3.c_str(), pg1.c_str(), pg3.c_str());
  return 0;
}

}  // namespace
}  // namespace mend::bench

int main(int argc, char** argv) { return mend::bench::Main(argc, argv); }
