// Reference workloads of bench/run_store_bench (store_bench_refs.h).
#include "bench/store_bench_refs.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

namespace mend::store::bench {
namespace {

using Millis = std::chrono::duration<double, std::milli>;
using std::chrono::steady_clock;

double Percentile(std::vector<double>& values, double p) {
  std::sort(values.begin(), values.end());
  if (values.empty()) return 0;
  const size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(values.size() - 1));
  return values[i];
}

[[noreturn]] void Fail(const char* what) {
  std::perror(what);
  std::exit(1);
}

// Appends queued records with one write + one fdatasync per batch; the thread that finds no
// batch in flight leads the next one.
class GroupLog {
 public:
  explicit GroupLog(int fd) : fd_(fd) {}

  void Append(const std::string& record) {
    std::unique_lock<std::mutex> lock(mu_);
    pending_ += record;
    const uint64_t mine = ++queued_;
    while (durable_ < mine) {
      if (!writing_) {
        writing_ = true;
        std::string batch;
        batch.swap(pending_);
        const uint64_t upto = queued_;
        lock.unlock();
        if (write(fd_, batch.data(), batch.size()) != static_cast<ssize_t>(batch.size())) {
          Fail("write");
        }
        if (fdatasync(fd_) != 0) Fail("fdatasync");
        lock.lock();
        durable_ = upto;
        ++syncs_;
        writing_ = false;
        done_.notify_all();
      } else {
        done_.wait(lock);
      }
    }
  }
  uint64_t syncs() const { return syncs_; }

 private:
  const int fd_;
  std::mutex mu_;
  std::condition_variable done_;
  std::string pending_;
  uint64_t queued_ = 0;
  uint64_t durable_ = 0;
  uint64_t syncs_ = 0;
  bool writing_ = false;
};

}  // namespace

ProcessCost ProcessCost::Now() {
  ProcessCost cost;
  std::ifstream io("/proc/self/io");
  std::string key;
  double value = 0;
  while (io >> key >> value) {
    if (key == "wchar:") cost.write_bytes = value;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + t.tv_usec / 1e3; };
  cost.cpu_ms = ms(usage.ru_utime) + ms(usage.ru_stime);
  return cost;
}

std::string CostFields(const ProcessCost& before, double ops) {
  const ProcessCost now = ProcessCost::Now();
  char out[128];
  std::snprintf(out, sizeof out, R"("write_kib_per_op":%.2f,"cpu_ms_per_op":%.4f)",
                (now.write_bytes - before.write_bytes) / 1024.0 / std::max(1.0, ops),
                (now.cpu_ms - before.cpu_ms) / std::max(1.0, ops));
  return out;
}

std::string RawGroupCommit(const std::string& path, int runs, int steps, size_t payload_bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
  if (fd < 0) Fail("open");
  GroupLog log(fd);
  std::vector<std::vector<double>> latencies(static_cast<size_t>(runs));
  std::barrier start(runs + 1);
  std::vector<std::thread> threads;
  for (int r = 0; r < runs; ++r) {
    threads.emplace_back([&, r] {
      const std::string record(payload_bytes, static_cast<char>('a' + r % 26));
      start.arrive_and_wait();
      for (int s = 0; s < steps; ++s) {
        const auto t0 = steady_clock::now();
        log.Append(record);
        latencies[static_cast<size_t>(r)].push_back(Millis(steady_clock::now() - t0).count());
      }
    });
  }
  const ProcessCost cost = ProcessCost::Now();
  start.arrive_and_wait();
  const auto t0 = steady_clock::now();
  for (std::thread& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(steady_clock::now() - t0).count();
  close(fd);
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  const double records = static_cast<double>(all.size());
  char out[384];
  std::snprintf(out, sizeof out,
                R"({"records_per_s":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,"records_per_sync":%.1f,%s})",
                records / seconds, Percentile(all, 50), Percentile(all, 99),
                records / static_cast<double>(std::max<uint64_t>(1, log.syncs())),
                CostFields(cost, records).c_str());
  return out;
}

std::string BareSqliteInserts(const std::string& path, int steps, size_t payload_bytes) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) Fail("sqlite3_open");
  auto exec = [db](const char* sql) {
    if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
      std::fprintf(stderr, "sqlite: %s: %s\n", sql, sqlite3_errmsg(db));
      std::exit(1);
    }
  };
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=FULL");
  exec(
      "CREATE TABLE IF NOT EXISTS t(run TEXT, step INTEGER, payload BLOB, PRIMARY KEY(run, step))");
  sqlite3_stmt* insert = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO t VALUES('run-0', ?, ?)", -1, &insert, nullptr);
  const std::string payload(payload_bytes, 'p');
  std::vector<double> latencies;
  const ProcessCost cost = ProcessCost::Now();
  const auto start = steady_clock::now();
  for (int s = 1; s <= steps; ++s) {
    const auto t0 = steady_clock::now();
    exec("BEGIN");
    sqlite3_bind_int(insert, 1, s);
    sqlite3_bind_blob(insert, 2, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
    if (sqlite3_step(insert) != SQLITE_DONE) Fail("insert");
    sqlite3_reset(insert);
    exec("COMMIT");
    latencies.push_back(Millis(steady_clock::now() - t0).count());
  }
  const double seconds = std::chrono::duration<double>(steady_clock::now() - start).count();
  const std::string cost_fields = CostFields(cost, steps);
  sqlite3_finalize(insert);
  sqlite3_close(db);
  char out[384];
  std::snprintf(out, sizeof out, R"({"inserts_per_s":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,%s})",
                static_cast<double>(steps) / seconds, Percentile(latencies, 50),
                Percentile(latencies, 99), cost_fields.c_str());
  return out;
}

}  // namespace mend::store::bench
