#pragma once

// What bench/run_store_pg_bench prints beside mend's PostgreSQL saves, measured in the same run
// against the same server: the server's own limit for one writer and for many (a bare libpq
// insert + commit loop), its round trip, and the counters that say where a save's time goes.
#include <libpq-fe.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mend::store::bench {

// The application_name of every connection the references open; mend's store uses "mend". Both
// are awaited by SettledCounters.
inline constexpr char kRefApplication[] = "mend-bench";

// The counters one workload moves: WAL fsyncs (pg_stat_wal.wal_sync, by every process of the
// server), WAL bytes (the insert position), the CPU time of this process and of the server's
// exited backends (the postmaster's children; -1 when the server is not on this machine or its
// data directory cannot be read).
struct PgCounters {
  int64_t wal_syncs = 0;
  int64_t wal_bytes = 0;
  double client_cpu_s = 0;
  double server_cpu_s = -1;
};

// Per save (or insert) of a workload of `saves` between two counter readings, as JSON members:
// "saves_per_sync","wal_bytes_per_save","client_cpu_ms_per_save","server_cpu_ms_per_save" (the
// last null when unknown).
std::string PerSave(const PgCounters& before, const PgCounters& after, double saves);

// The counters once every connection of mend's store and of the references has closed and the
// server has folded their statistics in: a busy backend reports them at most once a second, and
// when it exits. Exits the program when the server cannot be asked.
PgCounters SettledCounters(const std::string& url);

// The settings a durable-commit figure depends on (fsync, synchronous_commit, wal_sync_method,
// full_page_writes, commit_delay, shared_buffers, max_connections, the server version) and the
// file system of its data directory when it is on this machine, as JSON text.
std::string ServerSettings(const std::string& url);

// One writer of the bare reference: its own connection, inserting one row of PAYLOAD bytes per
// transaction into mend_bench_ref.t (made by CreateBareTable) under its own run id, with a
// statement prepared once.
class BareWriter {
 public:
  BareWriter(const std::string& url, std::string run, size_t payload_bytes);

  // BEGIN; INSERT one row; COMMIT, three round trips. Returns the time it took in ms; exits the
  // program on failure.
  double Insert(int64_t step);

 private:
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn_;
  const std::string run_;
  const std::string payload_;
};

// Creates mend_bench_ref.t (run, step, payload) anew.
void CreateBareTable(const std::string& url);

// WRITERS BareWriters, each its own loop of STEPS inserts, all started together. Returns
// {"saves_per_s","p50_ms","p99_ms"} and PerSave's members (each insert one "save") as JSON text.
// Every other connection of the benchmark must be closed.
std::string BareLibpqInserts(const std::string& url, int writers, int steps, size_t payload_bytes);

// The latencies in ms as {"saves_per_s","p50_ms","p99_ms"} JSON members (no braces), saves/s
// over their sum: for one writer, whose saves follow each other.
std::string LatencyFigures(std::vector<double> latencies);

// The median time of `calls` round trips of `SELECT 1` on one connection, in ms.
double RoundTripMs(const std::string& url, int calls);

// Runs `sql` on a new connection; exits the program when it fails.
void ExecOrDie(const std::string& url, const std::string& sql);

}  // namespace mend::store::bench
