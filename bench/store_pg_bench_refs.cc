// Reference workloads and server probes of bench/run_store_pg_bench (store_pg_bench_refs.h).
#include "bench/store_pg_bench_refs.h"

#include <libpq-fe.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

namespace mend::store::bench {
namespace {

using Millis = std::chrono::duration<double, std::milli>;
using std::chrono::steady_clock;

using Conn = std::unique_ptr<PGconn, void (*)(PGconn*)>;
using Res = std::unique_ptr<PGresult, void (*)(PGresult*)>;

[[noreturn]] void Die(const std::string& what, PGconn* conn) {
  std::fprintf(stderr, "store_pg_bench: %s: %s\n", what.c_str(),
               conn != nullptr ? PQerrorMessage(conn) : "no connection");
  std::exit(1);
}

Conn Connect(const std::string& url) {
  const char* keywords[] = {"application_name", "dbname", nullptr};
  const char* values[] = {kRefApplication, url.c_str(), nullptr};
  Conn conn(PQconnectdbParams(keywords, values, 1), &PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) Die("connect", conn.get());
  PQsetNoticeProcessor(
      conn.get(), [](void*, const char*) {}, nullptr);
  return conn;
}

Res Exec(PGconn* conn, const char* sql) {
  Res res(PQexec(conn, sql), &PQclear);
  ExecStatusType status = PQresultStatus(res.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) Die(sql, conn);
  return res;
}

int64_t Int(PGresult* res, int col) { return std::atoll(PQgetvalue(res, 0, col)); }

double Percentile(std::vector<double>& values, double p) {
  std::sort(values.begin(), values.end());
  if (values.empty()) return 0;
  return values[static_cast<size_t>(p / 100.0 * static_cast<double>(values.size() - 1))];
}

constexpr char kCounters[] =
    "SELECT (SELECT wal_sync FROM pg_stat_wal), "
    "pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint";
// Connections of mend's store and of the references still open, other than the asking one.
constexpr char kOpenBenchConnections[] =
    "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
    "AND application_name IN ('mend', 'mend-bench')";

double ClientCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// The postmaster's own CPU time and that of its exited children (every backend, once it is gone),
// from /proc; -1 when the server's data directory is not readable here.
double ServerCpuSeconds(PGconn* conn) {
  Res dir = Exec(conn, "SELECT current_setting('data_directory', true)");
  std::ifstream pid_file(std::string(PQgetvalue(dir.get(), 0, 0)) + "/postmaster.pid");
  std::string pid;
  if (!std::getline(pid_file, pid) || pid.empty()) return -1;
  std::ifstream stat_file("/proc/" + pid + "/stat");
  std::string stat;
  if (!std::getline(stat_file, stat)) return -1;
  // Fields after the command name (which ends with ')'): utime, stime, cutime, cstime are the
  // 14th to 17th fields of the line, the 12th to 15th after the name.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 1; i <= 15 && rest >> field; ++i) {
    if (i >= 12) ticks += std::atof(field.c_str());
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

PgCounters ReadCounters(PGconn* conn) {
  Res res = Exec(conn, kCounters);
  return PgCounters{Int(res.get(), 0), Int(res.get(), 1), ClientCpuSeconds(),
                    ServerCpuSeconds(conn)};
}

const char* FileSystemName(const std::string& dir) {
  struct statfs fs {};
  if (dir.empty() || statfs(dir.c_str(), &fs) != 0) return "unknown (not on this machine?)";
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0xEF53:
      return "ext4";
    case 0x01021994:
      return "tmpfs";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x794C7630:
      return "overlayfs";
    default:
      return "other";
  }
}

}  // namespace

PgCounters SettledCounters(const std::string& url) {
  Conn conn = Connect(url);
  // A closing backend reports its statistics as it exits; polled, these settle within a few
  // tens of milliseconds. The bound only keeps a stuck server from hanging the benchmark.
  const auto deadline = steady_clock::now() + std::chrono::seconds(10);
  while (steady_clock::now() < deadline) {
    Res open = Exec(conn.get(), kOpenBenchConnections);
    if (Int(open.get(), 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  PgCounters last = ReadCounters(conn.get());
  while (steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    PgCounters now = ReadCounters(conn.get());
    if (now.wal_syncs == last.wal_syncs) break;
    last = now;
  }
  return last;
}

std::string PerSave(const PgCounters& before, const PgCounters& after, double saves) {
  const double syncs =
      static_cast<double>(std::max<int64_t>(1, after.wal_syncs - before.wal_syncs));
  char server[32] = "null";
  if (before.server_cpu_s >= 0 && after.server_cpu_s >= 0) {
    std::snprintf(server, sizeof server, "%.3f",
                  (after.server_cpu_s - before.server_cpu_s) * 1e3 / saves);
  }
  char out[256];
  std::snprintf(out, sizeof out,
                R"("saves_per_sync":%.2f,"wal_bytes_per_save":%.0f,"client_cpu_ms_per_save":%.3f,)"
                R"("server_cpu_ms_per_save":%s)",
                saves / syncs, static_cast<double>(after.wal_bytes - before.wal_bytes) / saves,
                (after.client_cpu_s - before.client_cpu_s) * 1e3 / saves, server);
  return out;
}

std::string ServerSettings(const std::string& url) {
  Conn conn = Connect(url);
  Res res = Exec(conn.get(),
                 "SELECT current_setting('fsync'), current_setting('synchronous_commit'), "
                 "current_setting('wal_sync_method'), current_setting('full_page_writes'), "
                 "current_setting('commit_delay'), current_setting('shared_buffers'), "
                 "current_setting('max_connections'), current_setting('server_version'), "
                 "current_setting('data_directory', true)");
  auto get = [&](int col) { return std::string(PQgetvalue(res.get(), 0, col)); };
  char out[768];
  std::snprintf(out, sizeof out,
                R"({"fsync":"%s","synchronous_commit":"%s","wal_sync_method":"%s",)"
                R"("full_page_writes":"%s","commit_delay":"%s","shared_buffers":"%s",)"
                R"("max_connections":"%s","server_version":"%s","data_fs":"%s"})",
                get(0).c_str(), get(1).c_str(), get(2).c_str(), get(3).c_str(), get(4).c_str(),
                get(5).c_str(), get(6).c_str(), get(7).c_str(), FileSystemName(get(8)));
  return out;
}

void ExecOrDie(const std::string& url, const std::string& sql) {
  Conn conn = Connect(url);
  Exec(conn.get(), sql.c_str());
}

void CreateBareTable(const std::string& url) {
  ExecOrDie(url,
            "CREATE SCHEMA IF NOT EXISTS mend_bench_ref; DROP TABLE IF EXISTS mend_bench_ref.t; "
            "CREATE TABLE mend_bench_ref.t (run TEXT, step BIGINT, payload BYTEA, "
            "PRIMARY KEY (run, step))");
}

constexpr char kBareInsert[] = "INSERT INTO mend_bench_ref.t VALUES ($1, $2, $3)";

BareWriter::BareWriter(const std::string& url, std::string run, size_t payload_bytes)
    : conn_(Connect(url)), run_(std::move(run)), payload_(payload_bytes, 'p') {
  // Prepared once, as mend's save path is: the loop pays for no parsing or planning.
  Res prepared(PQprepare(conn_.get(), "insert", kBareInsert, 3, nullptr), &PQclear);
  if (PQresultStatus(prepared.get()) != PGRES_COMMAND_OK) Die("prepare", conn_.get());
}

double BareWriter::Insert(int64_t step) {
  const std::string step_text = std::to_string(step);
  const char* values[] = {run_.c_str(), step_text.c_str(), payload_.data()};
  const int lengths[] = {0, 0, static_cast<int>(payload_.size())};
  const int formats[] = {0, 0, 1};
  const auto t0 = steady_clock::now();
  Exec(conn_.get(), "BEGIN");
  Res insert(PQexecPrepared(conn_.get(), "insert", 3, values, lengths, formats, 0), &PQclear);
  if (PQresultStatus(insert.get()) != PGRES_COMMAND_OK) Die("insert", conn_.get());
  Exec(conn_.get(), "COMMIT");
  return Millis(steady_clock::now() - t0).count();
}

std::string LatencyFigures(std::vector<double> latencies) {
  double total_ms = 0;
  for (double l : latencies) total_ms += l;
  const double saves = static_cast<double>(latencies.size());
  char out[128];
  std::snprintf(out, sizeof out, R"("saves_per_s":%.1f,"p50_ms":%.3f,"p99_ms":%.3f)",
                saves * 1e3 / total_ms, Percentile(latencies, 50), Percentile(latencies, 99));
  return out;
}

std::string BareLibpqInserts(const std::string& url, int writers, int steps, size_t payload_bytes) {
  CreateBareTable(url);
  const PgCounters before = SettledCounters(url);
  std::vector<std::unique_ptr<BareWriter>> bare;
  for (int w = 0; w < writers; ++w) {
    bare.push_back(std::make_unique<BareWriter>(url, "run-" + std::to_string(w), payload_bytes));
  }
  std::vector<std::vector<double>> latencies(static_cast<size_t>(writers));
  std::barrier start(writers + 1);
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      start.arrive_and_wait();
      for (int s = 1; s <= steps; ++s) {
        latencies[static_cast<size_t>(w)].push_back(bare[static_cast<size_t>(w)]->Insert(s));
      }
    });
  }
  start.arrive_and_wait();
  const auto t0 = steady_clock::now();
  for (std::thread& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(steady_clock::now() - t0).count();
  bare.clear();
  const PgCounters after = SettledCounters(url);
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  const double inserts = static_cast<double>(all.size());
  char out[512];
  std::snprintf(out, sizeof out, R"({"saves_per_s":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,%s})",
                inserts / seconds, Percentile(all, 50), Percentile(all, 99),
                PerSave(before, after, inserts).c_str());
  return out;
}

double RoundTripMs(const std::string& url, int calls) {
  Conn conn = Connect(url);
  std::vector<double> times;
  for (int i = 0; i < calls; ++i) {
    const auto t0 = steady_clock::now();
    Exec(conn.get(), "SELECT 1");
    times.push_back(Millis(steady_clock::now() - t0).count());
  }
  return Percentile(times, 50);
}

}  // namespace mend::store::bench
