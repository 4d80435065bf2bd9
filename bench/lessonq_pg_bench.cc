// The PostgreSQL lesson queue's fetch+complete rate at several backlogs; bench/run_lessonq_pg_bench
// prints it beside pg-boss measured on the same server in the same run.
//
//   mend_lessonq_pg_bench URL [BACKLOGS JOBS WORKERS COMMIT]
//
// For each backlog N of the comma-separated BACKLOGS (default 1000,10000,100000): a fresh schema
// mend_bench_lq_<N> gets N + JOBS due jobs (one bulk INSERT, then VACUUM ANALYZE, untimed); then
// the queue as `reflexion.queue.backend = postgres` opens it starts WORKERS workers with a
// processor that does nothing, and the clock runs from Start until JOBS jobs were processed and
// Shutdown has joined the workers (every claim and completion committed). N jobs are left, so
// the backlog stays at least N throughout. COMMIT is `async` (the default, ClaimCommit's) or
// `sync` (claims and completions wait for the disk too). Prints one JSON object on stdout; progress
// and errors go to stderr, with exit status 1 on any failure.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "bench/store_pg_bench_refs.h"
#include "mend/base/env.h"
#include "mend/lessonq/postgres_queue.h"
#include "mend/store/postgres_store.h"

namespace mend::lessonq {
namespace {

using Seconds = std::chrono::duration<double>;
using std::chrono::steady_clock;

struct Args {
  std::string url;
  std::vector<int64_t> backlogs = {1000, 10000, 100000};
  int64_t jobs = 2000;
  int workers = 4;
  ClaimCommit commit = ClaimCommit::kAsynchronous;
};

[[noreturn]] void Die(const std::string& what, const Status& status) {
  std::fprintf(stderr, "lessonq_pg_bench: %s: %s\n", what.c_str(), status.ToString().c_str());
  std::exit(1);
}

std::vector<int64_t> ParseList(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoll(item));
  return out;
}

QueueOptions BenchOptions(int workers) {
  QueueOptions options;
  options.workers = workers;
  options.poll_interval = std::chrono::seconds(1);
  return options;
}

PgQueueOptions PgOptions(const Args& a, const std::string& schema) {
  PgQueueOptions pg;
  pg.url = a.url;
  pg.schema = schema;
  pg.claim_commit = a.commit;
  return pg;
}

// Creates the tables through the queue, then fills them in one statement: the same rows Enqueue
// writes (ids as JobIdFor's, 16 hex digits), all due now.
void Fill(const Args& a, const std::string& schema, int64_t count) {
  store::bench::ExecOrDie(a.url, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
  {
    auto queue = OpenPostgresLessonQueue(Env::Default(), BenchOptions(a.workers),
                                         PgOptions(a, schema), nullptr);
    if (!queue.ok()) Die("open " + store::MaskPostgresUrl(a.url), queue.status());
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  store::bench::ExecOrDie(
      a.url, "INSERT INTO " + schema +
                 ".lesson_jobs (id, state, task, attempt, outcome, trigger, run_id, traceparent, "
                 "enqueued_at, next_attempt_at, attempts, last_error) "
                 "SELECT lpad(to_hex(i), 16, '0'), 'pending', 'Edit the large Go file number ' "
                 "|| i, 'rewrote the whole file at once', 'ERROR: file too large', 'error', '', "
                 "'', " +
                 std::to_string(now) + " + i, " + std::to_string(now) +
                 " + i, 0, '' FROM generate_series(1, " + std::to_string(count) + ") AS i");
  store::bench::ExecOrDie(a.url, "VACUUM ANALYZE " + schema + ".lesson_jobs");
}

// {"backlog","jobs","seconds","jobs_per_s"}
std::string Measure(const Args& a, int64_t backlog) {
  const std::string schema = "mend_bench_lq_" + std::to_string(backlog);
  std::fprintf(stderr, "mend: backlog %lld, filling\n", static_cast<long long>(backlog));
  Fill(a, schema, backlog + a.jobs);
  auto queue = OpenPostgresLessonQueue(Env::Default(), BenchOptions(a.workers),
                                       PgOptions(a, schema), nullptr);
  if (!queue.ok()) Die("open", queue.status());
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<int64_t> processed{0};
  std::fprintf(stderr, "mend: backlog %lld, %lld fetch+complete\n", static_cast<long long>(backlog),
               static_cast<long long>(a.jobs));
  const auto start = steady_clock::now();
  Status started = (*queue)->Start([&](const Job&, const JobContext&) -> Result<ProcessResult> {
    if (++processed == a.jobs) {
      std::lock_guard<std::mutex> lock(mu);
      cv.notify_all();
    }
    return ProcessResult::kSuccess;
  });
  if (!started.ok()) Die("start", started);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return processed.load() >= a.jobs; });
  }
  // Stops at once: the jobs in flight finish and their completions commit before it returns.
  (*queue)->Shutdown(Duration::zero()).IgnoreError();
  const double seconds = Seconds(steady_clock::now() - start).count();
  const int64_t done = processed.load();
  char out[256];
  std::snprintf(out, sizeof out,
                "{\"backlog\":%lld,\"jobs\":%lld,\"seconds\":%.3f,\"jobs_per_s\":%.1f}",
                static_cast<long long>(backlog), static_cast<long long>(done), seconds,
                static_cast<double>(done) / seconds);
  queue->reset();
  store::bench::ExecOrDie(a.url, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
  return out;
}

}  // namespace
}  // namespace mend::lessonq

int main(int argc, char** argv) {
  using mend::lessonq::Args;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s URL [BACKLOGS JOBS WORKERS sync|async]\n", argv[0]);
    return 2;
  }
  Args a;
  a.url = argv[1];
  if (argc > 2) a.backlogs = mend::lessonq::ParseList(argv[2]);
  if (argc > 3) a.jobs = std::stoll(argv[3]);
  if (argc > 4) a.workers = std::stoi(argv[4]);
  if (argc > 5 && std::string(argv[5]) == "sync")
    a.commit = mend::lessonq::ClaimCommit::kSynchronous;
  std::string results;
  for (int64_t backlog : a.backlogs) {
    results += (results.empty() ? "" : ",") + mend::lessonq::Measure(a, backlog);
  }
  std::printf("{\"settings\":%s,\"workers\":%d,\"commit\":\"%s\",\"results\":[%s]}\n",
              mend::store::bench::ServerSettings(a.url).c_str(), a.workers,
              a.commit == mend::lessonq::ClaimCommit::kSynchronous ? "sync" : "async",
              results.c_str());
  return 0;
}
